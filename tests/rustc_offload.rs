//! Rust offload binaries: the exact call sequences rustc's
//! offload codegen emits (abi-reference §2.9, §4.11), replayed against the
//! host plugin.
//!
//! This test binary is built the way a Rust offload binary is:
//! - one 56-byte offload entry per kernel in the `llvm_offload_entries` link
//!   section, whose bounds come from the linker-generated
//!   `__start_llvm_offload_entries` / `__stop_llvm_offload_entries`;
//! - a real descriptor (one x86-64 device image, compiled at test time from
//!   `tests/fixtures/rustc/kernels.c`) registered once, as the linker
//!   wrapper's constructor does, and unregistered from `atexit`;
//! - the newer-rustc constructor (priority 101, `.init_array.00101`) that
//!   registers an all-zero descriptor, calls `__tgt_init_all_rtls` and
//!   `atexit`s the unregistration — it runs before `main` in every process of
//!   this binary, so the runtime is used before and after `main`.
//!
//! One `#[test]` per sequence: current, older, newer, async, unknown region.
//! The runtime and the entry table are process-wide; tests run in parallel
//! threads on their own buffers. Cases that must abort, or need a different
//! process set-up, re-run this binary as a child (`CHILD_ENV`).

use core::ffi::{c_char, c_void};
use omptarget_rs::abi::{__tgt_bin_desc, __tgt_device_image, __tgt_kernel_arguments, __tgt_offload_entry, ident_t};
use omptarget_rs::c_api::openmp::{async_api, data, device_api, kernel, register};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output};
use std::ptr::null_mut;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

// ---------------------------------------------------------------------------
// What the compiler emits
// ---------------------------------------------------------------------------

/// Map-type bits (abi-reference §6.1).
const TO: i64 = 0x1;
const FROM: i64 = 0x2;
const TARGET_PARAM: i64 = 0x20;
const LITERAL: i64 = 0x100;
const IMPLICIT: i64 = 0x200;
/// A by-value scalar as current rustc maps it on begin.
const SCALAR: i64 = LITERAL | IMPLICIT;
/// `KernelArgsTy::Flags` of the newest rustc.
const FLAGS_CURRENT: u64 = 1 << 6;
/// rustc's default launch shape.
const TEAMS: u32 = 2_097_152;
const THREADS: u32 = 256;
/// The implicit first kernel argument for kernels without a kernel environment.
const DYN_PTR_NONE: u64 = u64::MAX;

/// A compiler-emitted constant that holds pointers.
#[repr(transparent)]
struct Emitted<T>(T);
// SAFETY: only immutable statics; the pointers inside are never written through.
unsafe impl<T> Sync for Emitted<T> {}

impl<T> Emitted<T> {
    /// The `ptr` the generated code passes; the runtime only reads through it.
    fn ptr(&'static self) -> *mut T {
        &self.0 as *const T as *mut T
    }
}

/// `{0, 2, 0, 22, ";unknown;unknown;0;0;;"}`, rustc's only `ident_t`.
static IDENT: Emitted<ident_t> =
    Emitted(ident_t { reserved_1: 0, flags: 2, reserved_2: 0, reserved_3: 22, psource: c";unknown;unknown;0;0;;".as_ptr() });

/// One kernel: a one-byte region id and its offload entry in `llvm_offload_entries`.
macro_rules! kernel_entry {
    ($entry:ident, $region:ident, $region_sym:literal, $name:literal) => {
        #[used]
        #[unsafe(export_name = $region_sym)]
        static $region: u8 = 0;

        #[used]
        #[unsafe(link_section = "llvm_offload_entries")]
        static $entry: Emitted<__tgt_offload_entry> = Emitted(__tgt_offload_entry {
            Reserved: 0,
            Version: 1,
            Kind: 1, // OFK_OpenMP
            Flags: 0,
            Address: &raw const $region as *mut c_void,
            SymbolName: $name.as_ptr() as *mut c_char,
            Size: 0,
            Data: 0,
            AuxAddr: null_mut(),
        });
    };
}
kernel_entry!(SAXPY_ENTRY, SAXPY_REGION_ID, ".saxpy.region_id", c"saxpy");
kernel_entry!(VADD_ENTRY, VADD_REGION_ID, ".vadd.region_id", c"vadd");
kernel_entry!(PROBE_ENTRY, PROBE_REGION_ID, ".probe.region_id", c"probe");
kernel_entry!(OLDER_ENTRY, OLDER_REGION_ID, ".older_axpy.region_id", c"older_axpy");

/// A region id with no offload entry.
#[used]
static UNKNOWN_REGION_ID: u8 = 0;

unsafe extern "C" {
    static __start_llvm_offload_entries: __tgt_offload_entry;
    static __stop_llvm_offload_entries: __tgt_offload_entry;
}

/// The host entry table exactly as the linker wrapper's descriptor names it.
fn entry_table() -> (*mut __tgt_offload_entry, *mut __tgt_offload_entry) {
    (&raw const __start_llvm_offload_entries as *mut _, &raw const __stop_llvm_offload_entries as *mut _)
}

/// Map types of one call: rustc passes different constant arrays to the
/// begin, kernel and end calls.
struct Maps {
    begin: &'static [i64],
    kernel: &'static [i64],
    end: &'static [i64],
}

impl Maps {
    fn ptr(a: &'static [i64]) -> *mut i64 {
        a.as_ptr() as *mut i64
    }
}

/// saxpy(y: in/out, x: in, a: f32, n: i64).
static SAXPY_MAPS: Maps = Maps {
    begin: &[TO, TO, SCALAR, SCALAR],
    kernel: &[TARGET_PARAM, TARGET_PARAM, SCALAR | TARGET_PARAM, SCALAR | TARGET_PARAM],
    end: &[FROM, 0, 0, 0],
};
/// vadd(out: output only, a: in, b: in, n: i64).
static VADD_MAPS: Maps =
    Maps { begin: &[0, TO, TO, SCALAR], kernel: &[TARGET_PARAM, TARGET_PARAM, TARGET_PARAM, SCALAR | TARGET_PARAM], end: &[FROM, 0, 0, 0] };
/// probe(out: output only, three literals).
static PROBE_MAPS: Maps = Maps {
    begin: &[0, SCALAR, SCALAR, SCALAR],
    kernel: &[TARGET_PARAM, SCALAR | TARGET_PARAM, SCALAR | TARGET_PARAM, SCALAR | TARGET_PARAM],
    end: &[FROM, 0, 0, 0],
};
/// Older rustc: TO|FROM|TARGET_PARAM (35) for every pointer, on all three calls.
static OLDER_TYPES: [i64; 2] = [TO | FROM | TARGET_PARAM; 2];
/// Older rustc's fixed argument size.
const OLDER_SIZE: i64 = 1024;
const OLDER_N: usize = OLDER_SIZE as usize / 4;

/// One kernel argument.
#[derive(Clone, Copy)]
enum Arg {
    /// A slice: its address and byte length (length × element size).
    Mem(*mut c_void, usize),
    /// A by-value scalar zero-extended to 64 bits, and its original size.
    Lit(u64, usize),
}

fn mem<T>(s: &mut [T]) -> Arg {
    Arg::Mem(s.as_mut_ptr().cast(), size_of_val(s))
}
fn lit_f32(v: f32) -> Arg {
    Arg::Lit(u64::from(v.to_bits()), 4)
}
fn lit_i64(v: i64) -> Arg {
    Arg::Lit(v as u64, 8)
}

/// The run-time arrays rustc fills per call (seed 000's `gen_call_handling`):
/// base pointers (a slice's address; a scalar's value, bit-cast and
/// zero-extended to 64 bits), pointers (the same address for a slice; for a
/// scalar the address of the 8-byte stack slot rustc stores that value in)
/// and sizes.
struct Arrays {
    bases: Vec<*mut c_void>,
    ptrs: Vec<*mut c_void>,
    sizes: Vec<i64>,
    /// The scalars' stack slots (`%addr = alloca i64`), one per argument;
    /// boxed so that their addresses stay put.
    _slots: Box<[u64]>,
}

impl Arrays {
    fn new(args: &[Arg]) -> Self {
        let value = |a: &Arg| match *a {
            Arg::Mem(p, _) => p,
            Arg::Lit(v, _) => v as usize as *mut c_void,
        };
        let size = |a: &Arg| match *a {
            Arg::Mem(_, n) | Arg::Lit(_, n) => n as i64,
        };
        let mut slots: Box<[u64]> = args.iter().map(|a| if let Arg::Lit(v, _) = *a { v } else { 0 }).collect();
        let bases: Vec<_> = args.iter().map(value).collect();
        let ptrs = args
            .iter()
            .zip(slots.iter_mut())
            .map(|(a, slot)| match *a {
                Arg::Mem(p, _) => p,
                Arg::Lit(..) => (slot as *mut u64).cast(),
            })
            .collect();
        Arrays { ptrs, bases, sizes: args.iter().map(size).collect(), _slots: slots }
    }
    fn n(&self) -> i32 {
        self.bases.len() as i32
    }

    /// `__tgt_target_data_begin_mapper(ident, device, n, bases, ptrs, sizes, types, NULL, NULL)`.
    fn begin(&mut self, device: i64, types: *mut i64) {
        // SAFETY: every array holds n elements and outlives the call.
        unsafe {
            data::__tgt_target_data_begin_mapper(
                IDENT.ptr(),
                device,
                self.n(),
                self.bases.as_mut_ptr(),
                self.ptrs.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                types,
                null_mut(),
                null_mut(),
            )
        }
    }

    /// `__tgt_target_data_end_mapper(ident, device, n, bases, ptrs, sizes, types, NULL, NULL)`.
    fn end(&mut self, device: i64, types: *mut i64) {
        // SAFETY: as in `begin`.
        unsafe {
            data::__tgt_target_data_end_mapper(
                IDENT.ptr(),
                device,
                self.n(),
                self.bases.as_mut_ptr(),
                self.ptrs.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                types,
                null_mut(),
                null_mut(),
            )
        }
    }

    /// The Version 3 kernel-arguments struct, filled field by field as rustc does.
    fn kernel_args(&mut self, types: *mut i64, flags: u64, teams: [u32; 3], threads: [u32; 3]) -> __tgt_kernel_arguments {
        __tgt_kernel_arguments {
            Version: 3,
            NumArgs: self.n() as u32,
            ArgBasePtrs: self.bases.as_mut_ptr(),
            ArgPtrs: self.ptrs.as_mut_ptr(),
            ArgSizes: self.sizes.as_mut_ptr(),
            ArgTypes: types,
            ArgNames: null_mut(),
            ArgMappers: null_mut(),
            Tripcount: 0,
            Flags: flags,
            NumTeams: teams,
            ThreadLimit: threads,
            DynCGroupMem: 0,
        }
    }
}

fn region(id: &'static u8) -> *mut c_void {
    id as *const u8 as *mut c_void
}

/// `__tgt_target_kernel(ident, device, teams, threads, region_id, &args)`.
fn launch(device: i64, region_id: &'static u8, args: &mut __tgt_kernel_arguments) -> i32 {
    let teams = args.NumTeams.iter().map(|&t| t.max(1)).product::<u32>() as i32;
    let threads = args.ThreadLimit.iter().map(|&t| t.max(1)).product::<u32>() as i32;
    // SAFETY: `args` is a live Version 3 struct over live arrays.
    unsafe { kernel::__tgt_target_kernel(IDENT.ptr(), device, teams, threads, region(region_id), args) }
}

/// Current rustc: begin (TO / LITERAL|IMPLICIT), Version 3 launch with
/// Flags 1<<6 and 3-D launch bounds, end (FROM).
fn current_call(device: i64, region_id: &'static u8, maps: &'static Maps, args: &[Arg]) {
    let rc = seed000_call(device, region_id, maps, args, [TEAMS, 1, 1], [THREADS, 1, 1], 0);
    assert_eq!(rc, 0, "__tgt_target_kernel");
}

/// Seed 000 (the newest rustc `gpu_offload.rs`) exactly: the begin mapper
/// on device -1 (`i64 -1`, whatever device the kernel goes to), the kernel
/// on `kernel_device` (the user's choice, sign-extended) with
/// `num_teams`/`thread_limit` = the products of the 3-D workgroup and
/// thread dimensions, a Version 3 struct with Flags 1<<6, Tripcount 0, NULL
/// names and mappers, the user's `DynCGroupMem`, then the end mapper on
/// device -1. Returns `__tgt_target_kernel`'s result.
fn seed000_call(
    kernel_device: i64,
    region_id: &'static u8,
    maps: &'static Maps,
    args: &[Arg],
    workgroups: [u32; 3],
    threads: [u32; 3],
    dyn_cgroup_mem: u32,
) -> i32 {
    let mut a = Arrays::new(args);
    a.begin(-1, Maps::ptr(maps.begin));
    let mut ka = a.kernel_args(Maps::ptr(maps.kernel), FLAGS_CURRENT, workgroups, threads);
    ka.DynCGroupMem = dyn_cgroup_mem;
    let num_workgroups = workgroups[0].wrapping_mul(workgroups[1]).wrapping_mul(workgroups[2]) as i32;
    let threads_per_block = threads[0].wrapping_mul(threads[1]).wrapping_mul(threads[2]) as i32;
    let (ident, region) = (IDENT.ptr(), region(region_id));
    // SAFETY: `ka` is a live Version 3 struct over live arrays; `ident` and `region` point at statics.
    let rc = unsafe { kernel::__tgt_target_kernel(ident, kernel_device, num_workgroups, threads_per_block, region, &mut ka) };
    a.end(-1, Maps::ptr(maps.end));
    rc
}

/// The all-zero descriptor older rustc registers around every kernel call.
static OLDER_ZERO_DESC: Emitted<__tgt_bin_desc> = Emitted(zero_desc());

/// Older rustc: zero descriptor + init around one call; every pointer
/// TO|FROM|TARGET_PARAM with 1024 bytes, Flags 0, `NumTeams = [2097152, 0, 0]`.
fn older_call(y: &mut [f32; OLDER_N], x: &mut [f32; OLDER_N]) {
    // SAFETY: a valid (empty) descriptor that outlives its registration.
    unsafe { register::__tgt_register_lib(OLDER_ZERO_DESC.ptr()) };
    register::__tgt_init_all_rtls();
    // Older rustc maps every pointer with the same fixed size.
    let mut a = Arrays::new(&[Arg::Mem(y.as_mut_ptr().cast(), OLDER_SIZE as usize), Arg::Mem(x.as_mut_ptr().cast(), OLDER_SIZE as usize)]);
    let types = Maps::ptr(&OLDER_TYPES);
    a.begin(-1, types);
    let mut ka = a.kernel_args(types, 0, [TEAMS, 0, 0], [THREADS, 0, 0]);
    // SAFETY: as in `launch`; older rustc passes the scalar launch bounds directly.
    let rc = unsafe { kernel::__tgt_target_kernel(IDENT.ptr(), -1, TEAMS as i32, THREADS as i32, region(&OLDER_REGION_ID), &mut ka) };
    assert_eq!(rc, 0, "__tgt_target_kernel (older rustc ignores it, we do not)");
    a.end(-1, types);
    // SAFETY: the descriptor registered above.
    unsafe { register::__tgt_unregister_lib(OLDER_ZERO_DESC.ptr()) };
}

const fn zero_desc() -> __tgt_bin_desc {
    __tgt_bin_desc { NumDeviceImages: 0, DeviceImages: null_mut(), HostEntriesBegin: null_mut(), HostEntriesEnd: null_mut() }
}

// ---------------------------------------------------------------------------
// The newer-rustc constructor (runs before main)
// ---------------------------------------------------------------------------

/// Set in a child that must start without the newer-rustc constructor.
const NO_CTOR_ENV: &str = "RUSTC_OFFLOAD_TEST_NO_CTOR";

static NEWER_ZERO_DESC: Emitted<__tgt_bin_desc> = Emitted(zero_desc());
static CTOR_RAN: AtomicBool = AtomicBool::new(false);

/// `.omp_offloading.descriptor_reg` of newer rustc.
extern "C" fn newer_rustc_descriptor_reg() {
    if std::env::var_os(NO_CTOR_ENV).is_some() {
        return;
    }
    // SAFETY: a valid (empty) descriptor with static lifetime.
    unsafe { register::__tgt_register_lib(NEWER_ZERO_DESC.ptr()) };
    register::__tgt_init_all_rtls();
    // SAFETY: registering a plain extern "C" fn.
    unsafe { libc::atexit(newer_rustc_descriptor_unreg) };
    CTOR_RAN.store(true, Ordering::Release);
}

extern "C" fn newer_rustc_descriptor_unreg() {
    // SAFETY: the descriptor registered by the constructor.
    unsafe { register::__tgt_unregister_lib(NEWER_ZERO_DESC.ptr()) };
}

/// Priority 101, like `@llvm.global_ctors = [{ 101, ... }]`.
#[used]
#[unsafe(link_section = ".init_array.00101")]
static NEWER_RUSTC_CTOR: extern "C" fn() = newer_rustc_descriptor_reg;

// ---------------------------------------------------------------------------
// The device image and the real descriptor
// ---------------------------------------------------------------------------

/// Compiles `tests/fixtures/rustc/kernels.c` into an x86-64 shared object
/// and returns its bytes; `None` when there is no C compiler.
fn device_image() -> Option<&'static [u8]> {
    static IMAGE: OnceLock<Option<&'static [u8]>> = OnceLock::new();
    *IMAGE.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rustc/kernels.c");
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("rustc_offload-kernels-{}.so", std::process::id()));
        let res = Command::new("cc").args(["-O2", "-shared", "-fPIC"]).arg(&src).arg("-o").arg(&out).output();
        let o = match res {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("running cc: {e}"),
            Ok(o) => o,
        };
        assert!(o.status.success(), "cc failed for {}:\n{}", src.display(), String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(&out).expect("read the compiled device image");
        let _ = std::fs::remove_file(&out);
        Some(Box::leak(bytes.into_boxed_slice()))
    })
}

/// A descriptor like the linker wrapper's `.omp_offloading.descriptor`: one
/// image, entry tables = the linker-generated section bounds. Leaked: the
/// runtime may keep pointers into it until unregistration.
fn make_descriptor(image: &'static [u8]) -> *mut __tgt_bin_desc {
    let (begin, end) = entry_table();
    let img = Box::leak(Box::new(__tgt_device_image {
        ImageStart: image.as_ptr() as *mut c_void,
        ImageEnd: image.as_ptr_range().end as *mut c_void,
        EntriesBegin: begin,
        EntriesEnd: end,
    }));
    Box::leak(Box::new(__tgt_bin_desc { NumDeviceImages: 1, DeviceImages: img, HostEntriesBegin: begin, HostEntriesEnd: end }))
}

static REAL_DESC: OnceLock<Option<usize>> = OnceLock::new();

extern "C" fn unregister_real_descriptor() {
    if let Some(Some(d)) = REAL_DESC.get() {
        // SAFETY: the descriptor registered in `setup`.
        unsafe { register::__tgt_unregister_lib(*d as *mut __tgt_bin_desc) };
    }
}

/// Registers the real descriptor once per process (what the linker
/// wrapper's priority-101 constructor does). False: no C compiler.
fn setup() -> bool {
    REAL_DESC
        .get_or_init(|| {
            let desc = make_descriptor(device_image()?);
            // SAFETY: the descriptor and its image are leaked, valid forever.
            unsafe { register::__tgt_register_lib(desc) };
            // SAFETY: registering a plain extern "C" fn.
            unsafe { libc::atexit(unregister_real_descriptor) };
            Some(desc as usize)
        })
        .is_some()
}

macro_rules! setup_or_skip {
    () => {
        if !setup() {
            println!("skipped: no C compiler");
            return;
        }
    };
}

/// What a Rust offload binary does first: `omp_get_num_devices()`, then
/// offload to the default device (-1) when there is one.
fn pick_device() -> i64 {
    let n = device_api::omp_get_num_devices();
    assert_eq!(n, 4, "the host plugin exposes 4 devices");
    -1
}

fn assert_unmapped(p: *const c_void, what: &str) {
    for d in 0..4 {
        assert_eq!(device_api::omp_target_is_present(p, d), 0, "{what} still mapped on device {d} after the end call");
    }
}

/// Deterministic inputs whose saxpy results are exact in f32.
fn inputs(n: usize, seed: usize) -> (Vec<f32>, Vec<f32>) {
    let y = (0..n).map(|i| ((i * 7 + seed) % 101) as f32).collect();
    let x = (0..n).map(|i| ((i * 3 + seed * 5) % 61) as f32 - 30.0).collect();
    (y, x)
}

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

const CHILD_ENV: &str = "RUSTC_OFFLOAD_TEST_CHILD";

fn child_case() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// Re-runs this binary for exactly `test`, with `CHILD_ENV=case`, no core dumps.
fn run_child(test: &str, case: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"]).env(CHILD_ENV, case);
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: only async-signal-safe setrlimit runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setrlimit(libc::RLIMIT_CORE, &libc::rlimit { rlim_cur: 0, rlim_max: 0 });
            Ok(())
        });
    }
    cmd.output().expect("spawn the test binary")
}

fn describe(o: &Output) -> String {
    format!(
        "status: {:?}\n--- child stdout ---\n{}\n--- child stderr ---\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

/// Current rustc: the entry table, device choice, then begin / kernel / end
/// with per-call map types; literals and `dyn_ptr` as the kernel sees them;
/// the same sequence from several threads at once.
#[test]
fn current_rustc_sequence() {
    setup_or_skip!();

    // The linker-generated bounds see exactly this binary's four entries.
    let (begin, end) = entry_table();
    let n_entries = (end as usize - begin as usize) / size_of::<__tgt_offload_entry>();
    assert_eq!((end as usize - begin as usize) % 56, 0);
    // SAFETY: [begin, end) is the entry section.
    let entries = unsafe { std::slice::from_raw_parts(begin, n_entries) };
    let mut names: Vec<(String, usize)> = entries
        .iter()
        // SAFETY: SymbolName is a static C string.
        .map(|e| (unsafe { std::ffi::CStr::from_ptr(e.SymbolName) }.to_str().unwrap().to_owned(), e.Address as usize))
        .collect();
    names.sort();
    let want = [
        ("older_axpy", &raw const OLDER_REGION_ID as usize),
        ("probe", &raw const PROBE_REGION_ID as usize),
        ("saxpy", &raw const SAXPY_REGION_ID as usize),
        ("vadd", &raw const VADD_REGION_ID as usize),
    ];
    assert_eq!(names, want.map(|(n, a)| (n.to_owned(), a)));
    // Kept alive by #[used]; the statics are the section.
    let _ = (&SAXPY_ENTRY, &VADD_ENTRY, &PROBE_ENTRY, &OLDER_ENTRY);

    let device = pick_device();

    // Literals arrive zero-extended, the implicit dyn_ptr first.
    let mut out = [0u64; 4];
    current_call(device, &PROBE_REGION_ID, &PROBE_MAPS, &[mem(&mut out), Arg::Lit(0xdead_beef, 4), lit_i64(-5), lit_f32(0.0)]);
    assert_eq!(out, [DYN_PTR_NONE, 0xdead_beef, (-5i64) as u64, 0], "probe: [dyn_ptr, literals...]");
    assert_unmapped(out.as_ptr().cast(), "probe out");

    // saxpy: y in/out, x in.
    let (mut y, mut x) = inputs(1000, 1);
    let expect: Vec<f32> = y.iter().zip(&x).map(|(y, x)| 2.5 * x + y).collect();
    let x0 = x.clone();
    current_call(device, &SAXPY_REGION_ID, &SAXPY_MAPS, &[mem(&mut y), mem(&mut x), lit_f32(2.5), lit_i64(1000)]);
    assert_eq!(y, expect, "saxpy result");
    assert_eq!(x, x0, "x is input-only");
    assert_unmapped(y.as_ptr().cast(), "y");
    assert_unmapped(x.as_ptr().cast(), "x");

    // vadd: output-only out (begin map type 0).
    let (mut a, mut b) = inputs(777, 2);
    let mut sum = vec![-1.0f32; 777];
    let expect: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a + b).collect();
    current_call(device, &VADD_REGION_ID, &VADD_MAPS, &[mem(&mut sum), mem(&mut a), mem(&mut b), lit_i64(777)]);
    assert_eq!(sum, expect, "vadd result");

    // The same sequence from several threads at once, each on its own data.
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for i in 0..25 {
                    let n = 64 + 37 * t + i;
                    let (mut y, mut x) = inputs(n, t * 100 + i);
                    let expect: Vec<f32> = y.iter().zip(&x).map(|(y, x)| -1.5 * x + y).collect();
                    current_call(device, &SAXPY_REGION_ID, &SAXPY_MAPS, &[mem(&mut y), mem(&mut x), lit_f32(-1.5), lit_i64(n as i64)]);
                    assert_eq!(y, expect, "thread {t} call {i}");
                    assert_unmapped(y.as_ptr().cast(), "y");
                }
            });
        }
    });
}

/// Older rustc: an all-zero descriptor registered, `__tgt_init_all_rtls`,
/// then unregistered around every kernel call. In this process the real
/// descriptor and the constructor hold references; the child case starts
/// without the constructor so the reference count drops to zero between
/// cycles, and also unregisters and re-registers the real descriptor.
#[test]
fn older_rustc_sequence() {
    setup_or_skip!();
    if child_case().as_deref() == Some("older_cold") {
        older_cold_child();
        return;
    }

    let mut y = [0f32; OLDER_N];
    let mut x = [0f32; OLDER_N];
    let (y0, x0) = inputs(OLDER_N, 3);
    y.copy_from_slice(&y0);
    x.copy_from_slice(&x0);
    pick_device();
    for call in 1..=5 {
        older_call(&mut y, &mut x);
        let want: Vec<f32> = y0.iter().zip(&x0).map(|(y, x)| y + (2 * call) as f32 * x).collect();
        assert_eq!(y.as_slice(), want.as_slice(), "after call {call}");
        assert_eq!(x.as_slice(), x0.as_slice(), "x round-trips unchanged");
        assert_unmapped(y.as_ptr().cast(), "y");
    }

    let out = run_child("older_rustc_sequence", "older_cold", &[(NO_CTOR_ENV, "1")]);
    assert!(out.status.success(), "cold init/deinit cycles\n{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("older_cold: ok"), "{}", describe(&out));
}

/// Child: no constructor ran; `setup` already registered the real descriptor
/// (reference count 1).
fn older_cold_child() {
    assert!(!CTOR_RAN.load(Ordering::Acquire));
    let desc = REAL_DESC.get().copied().flatten().expect("registered") as *mut __tgt_bin_desc;
    let mut y = [1f32; OLDER_N];
    let mut x = [3f32; OLDER_N];
    let mut expect = 1f32;
    for round in 0..3 {
        // The only registration goes away: the count drops to zero.
        // SAFETY: the registered real descriptor.
        unsafe { register::__tgt_unregister_lib(desc) };
        // Zero-descriptor cycles with nothing else registered: 0 -> 1 -> 0.
        for _ in 0..3 {
            // SAFETY: a valid empty descriptor.
            unsafe { register::__tgt_register_lib(OLDER_ZERO_DESC.ptr()) };
            register::__tgt_init_all_rtls();
            assert_eq!(device_api::omp_get_num_devices(), 4, "round {round}");
            // SAFETY: registered just above.
            unsafe { register::__tgt_unregister_lib(OLDER_ZERO_DESC.ptr()) };
        }
        // The linker wrapper's descriptor again (dlopen after dlclose), then
        // older-rustc calls: its kernels must be found again.
        // SAFETY: the leaked descriptor stays valid.
        unsafe { register::__tgt_register_lib(desc) };
        for _ in 0..2 {
            older_call(&mut y, &mut x);
            expect += 6.0;
            assert!(y.iter().all(|&v| v == expect), "round {round}: y = {} want {expect}", y[0]);
        }
    }
    println!("older_cold: ok");
}

/// libomp's `kmp_int32 __kmpc_omp_taskwait(ident_t *, kmp_int32 gtid)`.
type TaskwaitFn = extern "C" fn(*mut ident_t, i32) -> i32;
/// libomp's `kmp_int32 __kmpc_global_thread_num(ident_t *)`.
type GlobalThreadNumFn = extern "C" fn(*mut ident_t) -> i32;

/// `__kmpc_omp_taskwait` / `__kmpc_global_thread_num` from libomp, when loaded.
fn libomp_taskwait() -> Option<(TaskwaitFn, GlobalThreadNumFn)> {
    // SAFETY: dlsym with valid C strings; the results are only used when non-NULL.
    let (tw, gtn) = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"__kmpc_omp_taskwait".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"__kmpc_global_thread_num".as_ptr()),
        )
    };
    if tw.is_null() || gtn.is_null() {
        return None;
    }
    // SAFETY: non-NULL addresses of libomp functions with exactly these signatures.
    Some(unsafe { (core::mem::transmute::<*mut c_void, TaskwaitFn>(tw), core::mem::transmute::<*mut c_void, GlobalThreadNumFn>(gtn)) })
}

/// Newer rustc: registration once by the constructor (zero descriptor,
/// `__tgt_init_all_rtls`, `atexit` unregister); data moved on its own by
/// `__tgt_target_data_begin_nowait_mapper` + `__kmpc_omp_taskwait`. Re-run
/// with libomp preloaded so the taskwait (and the runtime's libomp look-ups)
/// are exercised too.
#[test]
fn newer_rustc_sequence() {
    setup_or_skip!();
    assert!(CTOR_RAN.load(Ordering::Acquire), "the .init_array.00101 constructor ran before main");
    let device = pick_device();
    let taskwait = libomp_taskwait();
    match taskwait {
        Some(_) => println!("newer: taskwait via libomp"),
        None => println!("note: libomp is not loaded; __kmpc_omp_taskwait skipped"),
    }

    for call in 0..3 {
        let n = 500 + call * 11;
        let (mut y, mut x) = inputs(n, 10 + call);
        let expect: Vec<f32> = y.iter().zip(&x).map(|(y, x)| 0.5 * x + y).collect();
        let mut a = Arrays::new(&[mem(&mut y), mem(&mut x), lit_f32(0.5), lit_i64(n as i64)]);
        // SAFETY: every array holds n elements and outlives the call; no dependences.
        unsafe {
            data::__tgt_target_data_begin_nowait_mapper(
                IDENT.ptr(),
                device,
                a.n(),
                a.bases.as_mut_ptr(),
                a.ptrs.as_mut_ptr(),
                a.sizes.as_mut_ptr(),
                Maps::ptr(SAXPY_MAPS.begin),
                null_mut(),
                null_mut(),
                0,
                null_mut(),
                0,
                null_mut(),
            )
        };
        if let Some((tw, gtn)) = taskwait {
            let gtid = gtn(IDENT.ptr());
            tw(IDENT.ptr(), gtid);
        }
        let mut ka = a.kernel_args(Maps::ptr(SAXPY_MAPS.kernel), FLAGS_CURRENT, [TEAMS, 1, 1], [THREADS, 1, 1]);
        assert_eq!(launch(device, &SAXPY_REGION_ID, &mut ka), 0);
        a.end(device, Maps::ptr(SAXPY_MAPS.end));
        drop(a);
        assert_eq!(y, expect, "call {call}");
        assert_unmapped(y.as_ptr().cast(), "y");
    }

    const LIBOMP: &str = "/usr/lib/llvm-22/lib/libomp.so";
    if child_case().is_none() {
        if Path::new(LIBOMP).exists() {
            let out = run_child("newer_rustc_sequence", "libomp", &[("LD_PRELOAD", LIBOMP)]);
            assert!(out.status.success(), "with libomp preloaded\n{}", describe(&out));
            assert!(String::from_utf8_lossy(&out.stdout).contains("newer: taskwait via libomp"), "{}", describe(&out));
        } else {
            println!("note: {LIBOMP} not found; the libomp variant is skipped");
        }
    }
}

/// Newest rustc's async path: several launches on one handle, one
/// synchronisation, then the copy-back.
#[test]
fn async_rustc_sequence() {
    setup_or_skip!();
    let ndev = device_api::omp_get_num_devices();
    assert_eq!(ndev, 4);
    // A non-default device, so every call must honour the explicit number.
    let device = i64::from(ndev - 1);

    let h = async_api::__tgt_async_info_create(device);
    assert!(!h.is_null());
    // SAFETY: a live handle with no work.
    assert_eq!(unsafe { async_api::__tgt_async_info_synchronize(h) }, 0, "empty handle");

    const LAUNCHES: usize = 3;
    let n = 300;
    let (mut y, mut x) = inputs(n, 7);
    let expect: Vec<f32> = y.iter().zip(&x).map(|(y, x)| y + LAUNCHES as f32 * 2.0 * x).collect();
    let mut out = [0u64; 4];
    let mut a = Arrays::new(&[mem(&mut y), mem(&mut x), lit_f32(2.0), lit_i64(n as i64)]);
    let mut p = Arrays::new(&[mem(&mut out), Arg::Lit(7, 1), Arg::Lit(u64::from(u32::MAX), 4), lit_i64(i64::MIN)]);
    a.begin(device, Maps::ptr(SAXPY_MAPS.begin));
    p.begin(device, Maps::ptr(PROBE_MAPS.begin));
    // Each launch has its own arguments struct, alive until the synchronisation.
    let mut kas: Vec<__tgt_kernel_arguments> =
        (0..LAUNCHES).map(|_| a.kernel_args(Maps::ptr(SAXPY_MAPS.kernel), FLAGS_CURRENT, [TEAMS, 1, 1], [THREADS, 1, 1])).collect();
    let mut kp = p.kernel_args(Maps::ptr(PROBE_MAPS.kernel), FLAGS_CURRENT, [TEAMS, 1, 1], [THREADS, 1, 1]);
    let launches = kas.iter_mut().map(|ka| (&SAXPY_REGION_ID, ka)).chain(std::iter::once((&PROBE_REGION_ID, &mut kp)));
    for (rid, ka) in launches {
        // SAFETY: live struct, arrays and handle.
        let rc = unsafe { async_api::__tgt_target_kernel_async(IDENT.ptr(), device, TEAMS as i32, THREADS as i32, region(rid), ka, h) };
        assert_eq!(rc, 0);
    }
    // SAFETY: live handle.
    assert_eq!(unsafe { async_api::__tgt_async_info_synchronize(h) }, 0);
    a.end(device, Maps::ptr(SAXPY_MAPS.end));
    p.end(device, Maps::ptr(PROBE_MAPS.end));
    // SAFETY: live handle, not used afterwards.
    unsafe { async_api::__tgt_async_info_destroy(h) };
    drop((a, p, kas));
    assert_eq!(y, expect, "{LAUNCHES} saxpy launches on one handle");
    assert_eq!(out, [DYN_PTR_NONE, 7, u64::from(u32::MAX), i64::MIN as u64]);
    assert_unmapped(y.as_ptr().cast(), "y");
    // SAFETY: NULL is accepted by both.
    unsafe {
        assert_eq!(async_api::__tgt_async_info_synchronize(null_mut()), 0);
        async_api::__tgt_async_info_destroy(null_mut());
    }
}

/// Seed 000 byte for byte on the host plugin: mappers on device -1, the
/// kernel on an explicitly chosen device (the default one, 0), 3-D grids,
/// non-zero `DynCGroupMem`, f32/i64/f64/f16 scalars (values in the base
/// pointers, stack-slot addresses in the pointers); then the kernel on
/// another device than the mappers' one: a clear error naming the argument
/// and both devices (run in a child: the default policy aborts).
#[test]
fn seed000_exact_sequence() {
    setup_or_skip!();
    if child_case().as_deref() == Some("other_device") {
        let (mut y, mut x) = inputs(64, 4);
        let rc = seed000_call(
            2,
            &SAXPY_REGION_ID,
            &SAXPY_MAPS,
            &[mem(&mut y), mem(&mut x), lit_f32(1.0), lit_i64(64)],
            [2, 2, 2],
            [4, 2, 1],
            64,
        );
        eprintln!("other_device: returned {rc} instead of aborting");
        std::process::exit(97);
    }
    assert_eq!(pick_device(), -1);
    // The user picks device 0, the default device (no OMP_DEFAULT_DEVICE here).
    let kernel_device = 0;

    // saxpy with a 3-D grid, 3-D blocks and dynamic group memory.
    let (mut y, mut x) = inputs(999, 5);
    let expect: Vec<f32> = y.iter().zip(&x).map(|(y, x)| 3.0 * x + y).collect();
    let rc = seed000_call(
        kernel_device,
        &SAXPY_REGION_ID,
        &SAXPY_MAPS,
        &[mem(&mut y), mem(&mut x), lit_f32(3.0), lit_i64(999)],
        [4, 3, 2],
        [32, 2, 2],
        512,
    );
    assert_eq!(rc, 0);
    assert_eq!(y, expect, "saxpy, 3-D grid, DynCGroupMem 512");
    assert_unmapped(y.as_ptr().cast(), "y");
    assert_unmapped(x.as_ptr().cast(), "x");

    // f64 and f16 scalars arrive as their bits, zero-extended.
    let f64_bits = (-2.5f64).to_bits();
    let f16_one: u16 = 0x3c00; // 1.0 in binary16
    let f16_neg: u16 = 0xc500; // -5.0 in binary16 (the sign bit must not be extended)
    let mut out = [0u64; 4];
    let rc = seed000_call(
        kernel_device,
        &PROBE_REGION_ID,
        &PROBE_MAPS,
        &[mem(&mut out), Arg::Lit(f64_bits, 8), Arg::Lit(u64::from(f16_one), 2), Arg::Lit(u64::from(f16_neg), 2)],
        [1, 1, 1],
        [1, 1, 1],
        8,
    );
    assert_eq!(rc, 0);
    assert_eq!(out, [DYN_PTR_NONE, f64_bits, 0x3c00, 0xc500], "probe: [dyn_ptr, f64, f16, f16]");

    // The kernel on device 2 while the mappers put the data on device 0.
    let out = run_child("seed000_exact_sequence", "other_device", &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() != Some(97) && !out.status.success(), "expected a failure\n{}", describe(&out));
    assert!(
        stderr.contains("kernel argument 0 (host ")
            && stderr.contains("is mapped on device 0")
            && stderr.contains("the kernel runs on device 2"),
        "the error names the argument and both devices\n{}",
        describe(&out)
    );
}

/// A region id without an offload entry: a clear error, then abort (the
/// default policy with devices present is mandatory).
#[test]
fn unknown_region_aborts() {
    setup_or_skip!();
    if child_case().as_deref() == Some("unknown_region") {
        let device = pick_device();
        let (mut y, mut x) = inputs(16, 0);
        eprintln!("unknown_region: region id {:#018x}", &raw const UNKNOWN_REGION_ID as usize);
        current_call(device, &UNKNOWN_REGION_ID, &SAXPY_MAPS, &[mem(&mut y), mem(&mut x), lit_f32(1.0), lit_i64(16)]);
        eprintln!("unknown_region: returned instead of aborting");
        std::process::exit(97);
    }
    let out = run_child("unknown_region_aborts", "unknown_region", &[]);
    let aborted = out.status.signal() == Some(libc::SIGABRT) || out.status.code() == Some(134);
    assert!(aborted, "expected abort()\n{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not have a matching target pointer"), "{}", describe(&out));
    // The child's address (ASLR differs between processes) is what the message must name.
    let id = stderr
        .lines()
        .find_map(|l| l.strip_prefix("unknown_region: region id "))
        .unwrap_or_else(|| panic!("child did not print its region id\n{}", describe(&out)));
    let want = format!("omptarget error: Host ptr {id} does not have a matching target pointer.");
    assert!(stderr.contains(&want), "the message names the region id: {want}\n{}", describe(&out));
}
