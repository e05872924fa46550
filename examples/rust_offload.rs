//! What a Rust offload binary does at run time, written out by hand: the
//! calls current rustc's offload codegen emits for one kernel, `saxpy`, on the
//! host plugin (which runs x86-64 shared objects as "device" images).
//!
//!     cargo run --release --example rust_offload
//!
//! The device image is compiled from `tests/fixtures/rustc/kernels.c` with
//! `cc` at run time; a real binary embeds it (clang-linker-wrapper).

use core::ffi::{c_char, c_void};
use omptarget_rs::abi::{__tgt_bin_desc, __tgt_device_image, __tgt_kernel_arguments, __tgt_offload_entry, ident_t};
use omptarget_rs::c_api::openmp::{data, device_api, kernel, register};
use std::ptr::null_mut;

/// Compiler-emitted constants hold raw pointers; they are never written.
#[repr(transparent)]
struct Emitted<T>(T);
// SAFETY: immutable statics only.
unsafe impl<T> Sync for Emitted<T> {}

// 1. One offload entry per kernel, in the `llvm_offload_entries` section.
//    Its address field is the kernel's "region id": a unique one-byte global.
#[used]
#[unsafe(export_name = ".saxpy.region_id")]
static SAXPY_REGION_ID: u8 = 0;

#[used]
#[unsafe(link_section = "llvm_offload_entries")]
static SAXPY_ENTRY: Emitted<__tgt_offload_entry> = Emitted(__tgt_offload_entry {
    Reserved: 0,
    Version: 1,
    Kind: 1, // OpenMP
    Flags: 0,
    Address: &raw const SAXPY_REGION_ID as *mut c_void,
    SymbolName: c"saxpy".as_ptr() as *mut c_char, // the kernel's name in the device image
    Size: 0,
    Data: 0,
    AuxAddr: null_mut(),
});

// The linker defines the bounds of the section.
unsafe extern "C" {
    static __start_llvm_offload_entries: __tgt_offload_entry;
    static __stop_llvm_offload_entries: __tgt_offload_entry;
}

/// rustc's source location: "unknown".
static IDENT: Emitted<ident_t> =
    Emitted(ident_t { reserved_1: 0, flags: 2, reserved_2: 0, reserved_3: 22, psource: c";unknown;unknown;0;0;;".as_ptr() });

// 2. Map types, one constant array per call. saxpy(y: in/out, x: in, a: f32, n: i64).
const TO: i64 = 0x1;
const FROM: i64 = 0x2;
const TARGET_PARAM: i64 = 0x20;
const SCALAR: i64 = 0x100 | 0x200; // LITERAL | IMPLICIT: passed by value
static BEGIN_TYPES: [i64; 4] = [TO, TO, SCALAR, SCALAR];
static KERNEL_TYPES: [i64; 4] = [TARGET_PARAM, TARGET_PARAM, SCALAR | TARGET_PARAM, SCALAR | TARGET_PARAM];
static END_TYPES: [i64; 4] = [FROM, 0, 0, 0];

/// Builds the device image: an x86-64 shared object with `saxpy`.
fn compile_device_image() -> Vec<u8> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rustc/kernels.c");
    let out = std::env::temp_dir().join(format!("rust_offload_example-{}.so", std::process::id()));
    let status = std::process::Command::new("cc")
        .args(["-O2", "-shared", "-fPIC", src, "-o"])
        .arg(&out)
        .status()
        .expect("a C compiler (cc) is needed to build the device image");
    assert!(status.success(), "cc failed");
    let bytes = std::fs::read(&out).expect("read the device image");
    let _ = std::fs::remove_file(&out);
    bytes
}

fn main() {
    // 3. Registration, as the linker wrapper's constructor does before main:
    //    one image, and the entry table given by the section bounds.
    let image: &'static [u8] = compile_device_image().leak();
    let entries = (&raw const __start_llvm_offload_entries as *mut _, &raw const __stop_llvm_offload_entries as *mut _);
    let mut images = [__tgt_device_image {
        ImageStart: image.as_ptr() as *mut c_void,
        ImageEnd: image.as_ptr_range().end as *mut c_void,
        EntriesBegin: entries.0,
        EntriesEnd: entries.1,
    }];
    let mut desc =
        __tgt_bin_desc { NumDeviceImages: 1, DeviceImages: images.as_mut_ptr(), HostEntriesBegin: entries.0, HostEntriesEnd: entries.1 };
    // SAFETY: the descriptor, its image and entries outlive the registration.
    unsafe { register::__tgt_register_lib(&mut desc) };

    // 4. Pick a device: offload to the default one (-1) if there is any.
    let num_devices = device_api::omp_get_num_devices();
    assert!(num_devices > 0, "no offload device");
    let device: i64 = -1;

    // 5. The kernel call: y = a * x + y.
    let n = 8usize;
    let a = 2.0f32;
    let mut x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![10.0f32; n];
    // Per argument: base pointer, pointer and size (slice length x element size);
    // scalars travel as values zero-extended to 64 bits.
    let mut bases: [*mut c_void; 4] = [y.as_mut_ptr().cast(), x.as_mut_ptr().cast(), a.to_bits() as usize as *mut c_void, n as *mut c_void];
    let mut ptrs = bases;
    let mut sizes: [i64; 4] = [(n * 4) as i64, (n * 4) as i64, 4, 8];
    let ident = &IDENT.0 as *const ident_t as *mut ident_t;
    let types = |t: &'static [i64; 4]| t.as_ptr() as *mut i64;

    // SAFETY: all arrays hold 4 elements and outlive the calls; y and x stay alive and untouched by Rust until the end call has copied y back.
    unsafe {
        // Copy inputs to the device (allocating y and x there).
        data::__tgt_target_data_begin_mapper(
            ident,
            device,
            4,
            bases.as_mut_ptr(),
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            types(&BEGIN_TYPES),
            null_mut(),
            null_mut(),
        );
        // Where did -1 send the data? (The default device, OMP_DEFAULT_DEVICE or 0.)
        let used = (0..num_devices).find(|&d| device_api::omp_target_is_present(bases[0], d) != 0);
        println!("{num_devices} devices; y and x mapped on device {}", used.expect("mapped on a device"));
        // Launch: kernel-arguments Version 3, rustc's default grid.
        let mut args = __tgt_kernel_arguments {
            Version: 3,
            NumArgs: 4,
            ArgBasePtrs: bases.as_mut_ptr(),
            ArgPtrs: ptrs.as_mut_ptr(),
            ArgSizes: sizes.as_mut_ptr(),
            ArgTypes: types(&KERNEL_TYPES),
            ArgNames: null_mut(),
            ArgMappers: null_mut(),
            Tripcount: 0,
            Flags: 1 << 6,
            NumTeams: [2_097_152, 1, 1],
            ThreadLimit: [256, 1, 1],
            DynCGroupMem: 0,
        };
        let region_id = &raw const SAXPY_REGION_ID as *mut c_void;
        let rc = kernel::__tgt_target_kernel(ident, device, 2_097_152, 256, region_id, &mut args);
        assert_eq!(rc, 0, "the kernel did not run on the device");
        // Copy y back and release the device copies.
        data::__tgt_target_data_end_mapper(
            ident,
            device,
            4,
            bases.as_mut_ptr(),
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            types(&END_TYPES),
            null_mut(),
            null_mut(),
        );
        register::__tgt_unregister_lib(&mut desc);
    }

    println!("y = {a} * x + 10 = {y:?}");
    assert!(y.iter().enumerate().all(|(i, &v)| v == a * i as f32 + 10.0));
    let _ = &SAXPY_ENTRY;
}
