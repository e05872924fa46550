//! End to end on the host plugin: build a tiny x86-64 device image from
//! `tests/fixtures/host_kernels.c` with `cc -shared -fPIC`, describe it in a
//! `__tgt_bin_desc` the way the linker wrapper does (abi-reference §2.1–§2.5)
//! — once as a raw ELF image, once wrapped in an OffloadBinary (§3.1), once
//! with legacy 32-byte entries (§2.2) — register it, map data, launch kernels
//! with kernel-argument versions 1, 2, 3 (and 4), check the results and the
//! write-backs into the caller's struct (§4.4–§4.6), the declare-target
//! global's mapping and `target update` of it, and unregister. Unknown
//! region ids abort (child processes). The library must leave no
//! `/tmp/tmpfile_*` behind (§11.2 item 20).
//!
//! Skipped, with "skipped: no C compiler", when `cc` is missing.

mod common;

use common::{expect_abort, ident, init_runtime};
use core::ffi::{CStr, c_char, c_void};
use omptarget_rs::abi::{
    __tgt_bin_desc, __tgt_device_image, __tgt_kernel_arguments, __tgt_offload_entry, __tgt_offload_entry_legacy, ident_t,
};
use omptarget_rs::c_api::openmp::data::{__tgt_target_data_begin_mapper, __tgt_target_data_end_mapper, __tgt_target_data_update_mapper};
use omptarget_rs::c_api::openmp::device_api::*;
use omptarget_rs::c_api::openmp::kernel::{__tgt_target_kernel, __tgt_target_mapper};
use omptarget_rs::c_api::openmp::register::{__tgt_register_lib, __tgt_unregister_lib};
use std::collections::BTreeSet;
use std::ptr::null_mut;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

const TO: i64 = 0x1;
const FROM: i64 = 0x2;
const TARGET_PARAM: i64 = 0x20;
const LITERAL: i64 = 0x100;
const HOST_DEVICE: i64 = 4;

// Region ids: unique one-byte objects, like clang's `.<kernel>.region_id`.
// Interior mutability keeps them distinct, writable statics.
static K_ADD: AtomicU8 = AtomicU8::new(0);
static K_V1: AtomicU8 = AtomicU8::new(0);
static K_BUMP: AtomicU8 = AtomicU8::new(0);
static NOT_A_REGION: AtomicU8 = AtomicU8::new(0);

/// The host copy of the declare-target global `dev_global`.
static HOST_GLOBAL: AtomicI32 = AtomicI32::new(7);

fn region(id: &AtomicU8) -> *mut c_void {
    id.as_ptr().cast()
}

/// The device image, built once per process; `None` without a C compiler.
fn image() -> Option<&'static [u8]> {
    static IMAGE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    IMAGE
        .get_or_init(|| {
            let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/host_kernels.c");
            let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("host_kernels-{}.so", std::process::id()));
            let status = match std::process::Command::new("cc")
                .args(["-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o"])
                .arg(&out)
                .arg(src)
                .status()
            {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(e) => panic!("running cc: {e}"),
            };
            assert!(status.success(), "cc failed to build {src}");
            let bytes = std::fs::read(&out).expect("read the built image");
            let _ = std::fs::remove_file(&out);
            Some(bytes)
        })
        .as_deref()
}

/// An OffloadBinary container (§3.1) around `image`, for the host triple.
fn offload_binary(image: &[u8]) -> Vec<u8> {
    let strings = b"triple\0x86_64-unknown-linux-gnu\0arch\0\0";
    let (header, entry_size, map_at) = (32u64, 40u64, 72u64);
    let data_at = map_at + 2 * 16;
    let image_at = (data_at + strings.len() as u64).next_multiple_of(8);
    let total = image_at + image.len() as u64;
    let mut b = Vec::new();
    b.extend_from_slice(&[0x10, 0xff, 0x10, 0xad]);
    b.extend_from_slice(&1u32.to_le_bytes());
    for v in [total, header, entry_size] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&1u16.to_le_bytes()); // IMG_Object
    b.extend_from_slice(&1u16.to_le_bytes()); // OFK_OpenMP
    b.extend_from_slice(&0u32.to_le_bytes());
    for v in [map_at, 2, image_at, image.len() as u64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for v in [data_at, data_at + 7, data_at + 32, data_at + 37] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(strings);
    b.resize(image_at as usize, 0);
    b.extend_from_slice(image);
    b
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Raw ELF in `__tgt_device_image`, 56-byte entries (what clang 22's wrapper emits).
    Raw,
    /// The whole OffloadBinary in `__tgt_device_image` (older wrappers).
    Wrapped,
    /// Raw ELF with legacy 32-byte `__tgt_offload_entry` records (clang <= 19).
    Legacy,
}

/// Everything a registered descriptor points to, kept alive (and in place)
/// until it is unregistered.
struct Registered {
    desc: Box<__tgt_bin_desc>,
    _images: Box<[__tgt_device_image; 1]>,
    _entries: Vec<__tgt_offload_entry>,
    _legacy: Vec<__tgt_offload_entry_legacy>,
    _bytes: Vec<u64>,
}

/// (region id or variable, symbol, size)
fn entry_list() -> [(*mut c_void, &'static CStr, u64); 4] {
    [
        (region(&K_ADD), c"k_add", 0),
        (region(&K_V1), c"k_v1", 0),
        (region(&K_BUMP), c"k_bump_global", 0),
        (HOST_GLOBAL.as_ptr().cast(), c"dev_global", 4),
    ]
}

fn register(image: &[u8], layout: Layout) -> Registered {
    let content = if layout == Layout::Wrapped { offload_binary(image) } else { image.to_vec() };
    // 8-byte aligned storage, as the container requires (§3.1).
    let mut bytes = vec![0u64; content.len().div_ceil(8)];
    // SAFETY: `bytes` holds at least `content.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(content.as_ptr(), bytes.as_mut_ptr().cast::<u8>(), content.len()) };
    let start = bytes.as_mut_ptr().cast::<c_void>();
    let end = start.wrapping_byte_add(content.len());

    let entries: Vec<__tgt_offload_entry> = entry_list()
        .iter()
        .map(|&(addr, name, size)| __tgt_offload_entry {
            Reserved: 0,
            Version: 1,
            Kind: 1,
            Flags: 0,
            Address: addr,
            SymbolName: name.as_ptr() as *mut c_char,
            Size: size,
            Data: 0,
            AuxAddr: null_mut(),
        })
        .collect();
    let legacy: Vec<__tgt_offload_entry_legacy> = entry_list()
        .iter()
        .map(|&(addr, name, size)| __tgt_offload_entry_legacy {
            addr,
            name: name.as_ptr() as *mut c_char,
            size: size as usize,
            flags: 0,
            data: 0,
        })
        .collect();
    let (tb, te) = if layout == Layout::Legacy {
        let r = legacy.as_ptr_range();
        (r.start as *mut __tgt_offload_entry, r.end as *mut __tgt_offload_entry)
    } else {
        let r = entries.as_ptr_range();
        (r.start as *mut _, r.end as *mut _)
    };
    let mut images = Box::new([__tgt_device_image { ImageStart: start, ImageEnd: end, EntriesBegin: tb, EntriesEnd: te }]);
    let mut desc =
        Box::new(__tgt_bin_desc { NumDeviceImages: 1, DeviceImages: images.as_mut_ptr(), HostEntriesBegin: tb, HostEntriesEnd: te });
    // SAFETY: the descriptor and everything it points to live in `Registered` until `unregister`.
    unsafe { __tgt_register_lib(&mut *desc) };
    Registered { desc, _images: images, _entries: entries, _legacy: legacy, _bytes: bytes }
}

fn unregister(mut r: Registered) {
    // SAFETY: the descriptor registered by `register`.
    unsafe { __tgt_unregister_lib(&mut *r.desc) };
}

/// Argument arrays of one launch or data call, kept alive by the caller.
#[derive(Default)]
struct Maps {
    bases: Vec<*mut c_void>,
    begins: Vec<*mut c_void>,
    sizes: Vec<i64>,
    types: Vec<i64>,
}

impl Maps {
    fn add(mut self, base: *mut c_void, size: i64, ty: i64) -> Self {
        self.bases.push(base);
        self.begins.push(base);
        self.sizes.push(size);
        self.types.push(ty);
        self
    }
    fn data(&mut self, f: DataFn, loc: &mut ident_t, device: i64) {
        // SAFETY: the four arrays hold `len` elements each.
        unsafe {
            f(
                loc,
                device,
                self.bases.len() as i32,
                self.bases.as_mut_ptr(),
                self.begins.as_mut_ptr(),
                self.sizes.as_mut_ptr(),
                self.types.as_mut_ptr(),
                null_mut(),
                null_mut(),
            )
        };
    }
    /// A kernel-arguments struct as clang 22 fills it for a plain `target`.
    fn kernel_args(&mut self, version: u32) -> __tgt_kernel_arguments {
        let n = self.bases.len();
        let arr = |v: &mut Vec<*mut c_void>| if n == 0 { null_mut() } else { v.as_mut_ptr() };
        __tgt_kernel_arguments {
            Version: version,
            NumArgs: n as u32,
            ArgBasePtrs: arr(&mut self.bases),
            ArgPtrs: arr(&mut self.begins),
            ArgSizes: if n == 0 { null_mut() } else { self.sizes.as_mut_ptr() },
            ArgTypes: if n == 0 { null_mut() } else { self.types.as_mut_ptr() },
            ArgNames: null_mut(),
            ArgMappers: null_mut(),
            Tripcount: 0,
            Flags: 0,
            NumTeams: [u32::MAX, 0, 0],
            ThreadLimit: [0, 0, 0],
            DynCGroupMem: 0,
        }
    }
}

type DataFn = unsafe extern "C" fn(
    *mut ident_t,
    i64,
    i32,
    *mut *mut c_void,
    *mut *mut c_void,
    *mut i64,
    *mut i64,
    *mut *mut c_void,
    *mut *mut c_void,
);

/// `target` (no teams): call NumTeams -1, ThreadLimit 0.
fn launch(loc: &mut ident_t, device: i64, id: &AtomicU8, ka: &mut __tgt_kernel_arguments) -> i32 {
    // SAFETY: `ka` and its arrays are live for the call.
    unsafe { __tgt_target_kernel(loc, device, -1, 0, region(id), ka) }
}

fn ptr_of<T>(v: &mut [T]) -> *mut c_void {
    v.as_mut_ptr().cast()
}

fn present(p: *const c_void, dev: i32) -> bool {
    omp_target_is_present(p, dev) == 1
}

fn expected_add(len: usize, global: i32) -> Vec<i32> {
    (0..len as i32).map(|i| 2 * i + global).collect()
}

/// Version 1 struct in the last 64 bytes before an inaccessible page, so
/// any access past `Tripcount` faults (§4.2: Version 1 ends there).
fn launch_v1_at_page_end(loc: &mut ident_t, maps: &mut Maps) -> (i32, [u8; 64]) {
    // SAFETY: plain mmap/mprotect/munmap of an anonymous private mapping.
    unsafe {
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let mem = libc::mmap(null_mut(), 2 * page, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        assert_ne!(mem, libc::MAP_FAILED);
        assert_eq!(libc::mprotect(mem.byte_add(page), page, libc::PROT_NONE), 0);
        let full = maps.kernel_args(1);
        let at = mem.byte_add(page - 64);
        std::ptr::copy_nonoverlapping((&raw const full).cast::<u8>(), at.cast::<u8>(), 64);
        let rc = __tgt_target_kernel(loc, 0, -1, -1, region(&K_V1), at.cast());
        let mut after = [0u8; 64];
        std::ptr::copy_nonoverlapping(at.cast::<u8>(), after.as_mut_ptr(), 64);
        libc::munmap(mem, 2 * page);
        (rc, after)
    }
}

fn tmpfiles() -> BTreeSet<String> {
    std::fs::read_dir("/tmp")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with("tmpfile_")).collect())
        .unwrap_or_default()
}

fn run_variant(image: &[u8], layout: Layout) {
    println!("--- {layout:?} ---");
    HOST_GLOBAL.store(7, Ordering::SeqCst);
    let mut loc = ident(c";host_image.rs;run_variant;1;1;;");
    let reg = register(image, layout);
    assert_eq!(omp_get_num_devices(), 4, "{layout:?}");
    let g = HOST_GLOBAL.as_ptr().cast::<c_void>();

    // `target data map(tofrom: a)` around a Version 3 `target` region.
    let mut a: Vec<i32> = (0..8).collect();
    let mut extra = [5i32; 4];
    let mut data_a = Maps::default().add(ptr_of(&mut a), 32, TO | FROM);
    data_a.data(__tgt_target_data_begin_mapper, &mut loc, 0);
    assert!(present(a.as_ptr().cast(), 0));
    let mut maps = Maps::default().add(ptr_of(&mut a), 32, TO | FROM | TARGET_PARAM).add(8 as *mut c_void, 8, LITERAL | TARGET_PARAM).add(
        ptr_of(&mut extra),
        16,
        TO,
    ); // mapped, not a kernel parameter
    let mut ka = maps.kernel_args(3);
    assert_eq!(launch(&mut loc, 0, &K_ADD, &mut ka), 0, "{layout:?}: the region ran on device 0");
    // §4.4/§4.6 write-backs: NumTeams[0] = 1 for a call NumTeams of -1, zero
    // dims 1/2 become 1, NumArgs = number of kernel parameters, counting the
    // implicit dyn_ptr (LLVM's plugin adds it to the same field; seen in
    // differential runs against LLVM 22.1).
    assert_eq!(ka.NumTeams, [1, 1, 1], "{layout:?}");
    assert_eq!(ka.ThreadLimit, [0, 1, 1], "{layout:?}");
    assert_eq!(ka.NumArgs, 3, "{layout:?}: 3 map entries, 2 kernel parameters + dyn_ptr");
    assert_eq!(a, (0..8).collect::<Vec<_>>(), "{layout:?}: still mapped by the data region: no copy back yet");
    assert!(!present(extra.as_ptr().cast(), 0), "{layout:?}: the region's own mapping is released");
    data_a.data(__tgt_target_data_end_mapper, &mut loc, 0);
    assert_eq!(a, expected_add(8, 7), "{layout:?}: dyn_ptr = ~0 first, then a and n; dev_global = 7");
    assert!(!present(a.as_ptr().cast(), 0));

    // The declare-target global is mapped (INF) once device 0 loaded the image.
    assert!(present(g, 0), "{layout:?}: declare-target global mapped on device 0");
    let dg = omp_get_mapped_ptr(g, 0);
    assert!(!dg.is_null() && dg != g, "{layout:?}: the global has a device copy");
    let mut v = 0i32;
    // SAFETY: 4-byte buffers on the host and device 0.
    assert_eq!(unsafe { omp_target_memcpy((&raw mut v).cast(), dg, 4, 0, 0, HOST_DEVICE as i32, 0) }, 0);
    assert_eq!(v, 7, "{layout:?}: device copy initialised by the image");

    // `target update to(host_global)` changes what kernels see.
    HOST_GLOBAL.store(42, Ordering::SeqCst);
    let mut upd = Maps::default().add(g, 4, TO);
    upd.data(__tgt_target_data_update_mapper, &mut loc, 0);
    let mut b = vec![1i32; 6];
    let mut maps_b = Maps::default().add(ptr_of(&mut b), 24, TO | FROM | TARGET_PARAM).add(6 as *mut c_void, 8, LITERAL | TARGET_PARAM);
    let mut kb = maps_b.kernel_args(3);
    assert_eq!(launch(&mut loc, 0, &K_ADD, &mut kb), 0);
    assert_eq!(b, vec![44; 6], "{layout:?}: 2*1 + 42 after update to");

    // A kernel changes the global; `target update from` brings it back.
    let mut none = Maps::default();
    let mut kbump = none.kernel_args(3);
    assert_eq!(launch(&mut loc, 0, &K_BUMP, &mut kbump), 0);
    assert_eq!(kbump.NumArgs, 1, "no map entries: only dyn_ptr");
    assert_eq!(HOST_GLOBAL.load(Ordering::SeqCst), 42, "no implicit copy of the global");
    let mut upd = Maps::default().add(g, 4, FROM);
    upd.data(__tgt_target_data_update_mapper, &mut loc, 0);
    assert_eq!(HOST_GLOBAL.load(Ordering::SeqCst), 142, "{layout:?}: update from");

    // Version 2: no dyn_ptr; caller's struct corrected like Version 3.
    let mut c = [0i32; 2];
    let mut maps_c = Maps::default().add(ptr_of(&mut c), 8, TO | FROM | TARGET_PARAM);
    let mut k2 = maps_c.kernel_args(2);
    assert_eq!(launch(&mut loc, 0, &K_V1, &mut k2), 0);
    assert_eq!(c, [12345, 142], "{layout:?}: Version 2 kernels get no dyn_ptr");
    assert_eq!((k2.NumTeams, k2.ThreadLimit, k2.NumArgs), ([1, 1, 1], [0, 1, 1], 1), "{layout:?}: no dyn_ptr counted");

    // Version 1: 64 bytes only, never read or written past Tripcount.
    let mut c1 = [0i32; 2];
    let mut maps_c1 = Maps::default().add(ptr_of(&mut c1), 8, TO | FROM | TARGET_PARAM);
    let before = {
        let full = maps_c1.kernel_args(1);
        // SAFETY: reading the first 64 bytes of a live 104-byte struct.
        unsafe { std::ptr::read((&raw const full).cast::<[u8; 64]>()) }
    };
    let (rc, after) = launch_v1_at_page_end(&mut loc, &mut maps_c1);
    assert_eq!(rc, 0);
    assert_eq!(c1, [12345, 142], "{layout:?}: Version 1 kernels get no dyn_ptr");
    assert_eq!(after, before, "{layout:?}: a Version 1 struct is not written to");

    // The legacy `__tgt_target_mapper` builds a Version 1 struct itself.
    let mut c2 = [0i32; 2];
    let mut maps_c2 = Maps::default().add(ptr_of(&mut c2), 8, TO | FROM | TARGET_PARAM);
    // SAFETY: one-element arrays.
    let rc = unsafe {
        __tgt_target_mapper(
            &mut loc,
            0,
            region(&K_V1),
            1,
            maps_c2.bases.as_mut_ptr(),
            maps_c2.begins.as_mut_ptr(),
            maps_c2.sizes.as_mut_ptr(),
            maps_c2.types.as_mut_ptr(),
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!((rc, c2), (0, [12345, 142]), "{layout:?}: legacy launch");

    // Version 4 is used as Version 3 (§4.5): dyn_ptr present.
    let mut d: Vec<i32> = (0..3).collect();
    let mut maps_d = Maps::default().add(ptr_of(&mut d), 12, TO | FROM | TARGET_PARAM).add(3 as *mut c_void, 8, LITERAL | TARGET_PARAM);
    let mut k4 = maps_d.kernel_args(4);
    assert_eq!(launch(&mut loc, 0, &K_ADD, &mut k4), 0);
    assert_eq!(d, expected_add(3, 142), "{layout:?}: Version 4");
    assert_eq!(k4.NumArgs, 3, "{layout:?}: Version 4 counts dyn_ptr too");

    // Device 1 loaded its own copy of the image: its global is still 7.
    let mut e: Vec<i32> = (0..4).collect();
    let mut maps_e = Maps::default().add(ptr_of(&mut e), 16, TO | FROM | TARGET_PARAM).add(4 as *mut c_void, 8, LITERAL | TARGET_PARAM);
    let mut k1 = maps_e.kernel_args(3);
    assert_eq!(launch(&mut loc, 1, &K_ADD, &mut k1), 0);
    assert_eq!(e, expected_add(4, 7), "{layout:?}: device 1 has its own dev_global");
    assert!(present(g, 1));
    assert_ne!(omp_get_mapped_ptr(g, 1), dg, "{layout:?}: one copy of the global per device");

    // The initial device declines: the caller runs its host fallback.
    let mut f = vec![0i32; 2];
    let mut maps_f = Maps::default().add(ptr_of(&mut f), 8, TO | FROM | TARGET_PARAM).add(2 as *mut c_void, 8, LITERAL | TARGET_PARAM);
    let mut kh = maps_f.kernel_args(3);
    assert_eq!(launch(&mut loc, HOST_DEVICE, &K_ADD, &mut kh), -1);
    assert_eq!(f, [0, 0]);

    unregister(reg);
    // Our runtime forgets the library's global mappings with it, so a later
    // registration maps the globals of its own image.
    assert!(!present(g, 0) && !present(g, 1), "{layout:?}: global mappings removed at unregistration");
}

#[test]
fn end_to_end_with_three_descriptor_layouts() {
    let Some(image) = image() else {
        println!("skipped: no C compiler");
        return;
    };
    init_runtime();
    let before = tmpfiles();
    for layout in [Layout::Raw, Layout::Wrapped, Layout::Legacy] {
        run_variant(image, layout);
    }
    let new: Vec<String> = tmpfiles().difference(&before).cloned().collect();
    for name in &new {
        // Other processes (e.g. LLVM's own runtime in differential runs) may
        // create such files meanwhile; ours would hold our image.
        let ours = std::fs::read(format!("/tmp/{name}")).map(|b| b == image).unwrap_or(false);
        assert!(!ours, "/tmp/{name} holds our device image: the host plugin left a temporary file");
        println!("note: /tmp/{name} appeared meanwhile (not ours)");
    }
}

#[test]
fn launch_with_unknown_region_id_aborts() {
    // §2.7, §4.7: "Host ptr ... does not have a matching target pointer.",
    // then the region fails, which is fatal with devices present.
    let Some(image) = image() else {
        println!("skipped: no C compiler");
        return;
    };
    expect_abort(
        "launch_with_unknown_region_id_aborts",
        &[
            "omptarget error: Host ptr {ADDR} does not have a matching target pointer.",
            "host_image.rs:77:3: omptarget fatal error 1: failure of target construct while offloading is mandatory",
        ],
        || {
            let _reg = register(image, Layout::Raw);
            let mut loc = ident(c";host_image.rs;unknown_region;77;3;;");
            println!("CHILD ADDR=0x{:016x}", NOT_A_REGION.as_ptr() as usize);
            let mut none = Maps::default();
            let mut ka = none.kernel_args(3);
            launch(&mut loc, 0, &NOT_A_REGION, &mut ka);
        },
    );
}

#[test]
fn launch_after_unregister_aborts() {
    // §2.6: unregistration removes the descriptor's region ids, so "later
    // launches through its region ids fail".
    let Some(image) = image() else {
        println!("skipped: no C compiler");
        return;
    };
    expect_abort(
        "launch_after_unregister_aborts",
        &[
            "omptarget error: Host ptr {ADDR} does not have a matching target pointer.",
            "omptarget fatal error 1: failure of target construct while offloading is mandatory",
        ],
        || {
            let mut loc = ident(c";unknown;unknown;0;0;;");
            let reg = register(image, Layout::Raw);
            let mut none = Maps::default();
            let mut ka = none.kernel_args(3);
            assert_eq!(launch(&mut loc, 2, &K_BUMP, &mut ka), 0, "registered: runs");
            unregister(reg);
            println!("CHILD ADDR=0x{:016x}", K_BUMP.as_ptr() as usize);
            let mut ka = none.kernel_args(3);
            launch(&mut loc, 2, &K_BUMP, &mut ka);
        },
    );
}
