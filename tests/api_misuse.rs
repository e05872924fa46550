//! Misuse of the exported entry points, called as Rust: NULL arrays, odd
//! counts and sizes, broken descriptors and images, unbalanced or repeated
//! calls, invalid devices. Each test name (and comment) says which reference
//! behaviour it expects (abi-reference section in brackets). Nothing may
//! crash; the cases where LLVM 22.1 aborts run in a child process (this test
//! binary re-executed) and check the exit signal and the exact stderr text.
//!
//! Where LLVM would dereference a NULL or inconsistent argument (undefined
//! behaviour there), this runtime reports `omptarget error: ...` and carries
//! on; those tests only require "no crash, nothing mapped".

mod common;

use common::{expect_abort, ident, init_runtime};
use core::ffi::{CStr, c_char, c_void};
use omptarget_rs::abi::{__tgt_bin_desc, __tgt_device_image, __tgt_kernel_arguments, __tgt_offload_entry, ident_t, map_var_info_t};
use omptarget_rs::c_api::openmp::data::*;
use omptarget_rs::c_api::openmp::device_api::*;
use omptarget_rs::c_api::openmp::kernel::{__tgt_target_kernel, __tgt_target_nowait_query};
use omptarget_rs::c_api::openmp::register::{__tgt_register_lib, __tgt_register_requires, __tgt_unregister_lib};
use std::ptr::{null, null_mut};

const TO: i64 = 0x1;
const FROM: i64 = 0x2;
const DELETE: i64 = 0x8;
const TARGET_PARAM: i64 = 0x20;
const PRESENT: i64 = 0x1000;
const HOST_DEVICE: i32 = 4;

type DataFn = unsafe extern "C" fn(
    *mut ident_t,
    i64,
    i32,
    *mut *mut c_void,
    *mut *mut c_void,
    *mut i64,
    *mut i64,
    *mut map_var_info_t,
    *mut *mut c_void,
);

const DATA_FNS: [(&str, DataFn); 3] =
    [("begin", __tgt_target_data_begin_mapper), ("end", __tgt_target_data_end_mapper), ("update", __tgt_target_data_update_mapper)];

/// One-entry argument arrays, as compiled code passes them.
fn map1(f: DataFn, loc: *mut ident_t, device: i64, ptr: *mut c_void, size: i64, ty: i64) {
    let mut bases = [ptr];
    let mut begins = [ptr];
    let mut sizes = [size];
    let mut types = [ty];
    // SAFETY: each array holds one element; names/mappers may be NULL.
    unsafe { f(loc, device, 1, bases.as_mut_ptr(), begins.as_mut_ptr(), sizes.as_mut_ptr(), types.as_mut_ptr(), null_mut(), null_mut()) };
}

fn is_present(p: *const c_void, dev: i32) -> bool {
    omp_target_is_present(p, dev) == 1
}

// ---------------------------------------------------------------------------
// Data-mapping entry points [§1.3.2, §6.6, §6.9, §6.10].
// ---------------------------------------------------------------------------

#[test]
fn null_arrays_with_positive_count_are_rejected_without_crash() {
    // LLVM reads the NULL arrays (undefined behaviour); we report an invalid
    // argument and map nothing.
    init_runtime();
    for (what, f) in DATA_FNS {
        for dev in [-1i64, 0, 3] {
            // SAFETY: the arrays are NULL; the runtime must not read them.
            unsafe { f(null_mut(), dev, 2, null_mut(), null_mut(), null_mut(), null_mut(), null_mut(), null_mut()) };
            println!("{what} on device {dev}: survived");
        }
    }
    // One array present, the others NULL.
    let mut buf = [0u8; 16];
    let mut bases = [buf.as_mut_ptr().cast::<c_void>()];
    // SAFETY: `bases` holds one element; the NULL arrays must be rejected.
    unsafe {
        __tgt_target_data_begin_mapper(null_mut(), 0, 1, bases.as_mut_ptr(), null_mut(), null_mut(), null_mut(), null_mut(), null_mut())
    };
    assert!(!is_present(buf.as_ptr().cast(), 0));
}

#[test]
fn zero_arg_num_with_null_arrays_is_a_noop() {
    // [§6.6] the loop over ArgNum entries does nothing; legacy and nowait forms too.
    init_runtime();
    for (_, f) in DATA_FNS {
        // SAFETY: zero elements: NULL arrays are never read.
        unsafe { f(null_mut(), 0, 0, null_mut(), null_mut(), null_mut(), null_mut(), null_mut(), null_mut()) };
    }
    // SAFETY: as above.
    unsafe {
        __tgt_target_data_begin(0, 0, null_mut(), null_mut(), null_mut(), null_mut());
        __tgt_target_data_end(0, 0, null_mut(), null_mut(), null_mut(), null_mut());
        __tgt_target_data_update(0, 0, null_mut(), null_mut(), null_mut(), null_mut());
        __tgt_target_data_begin_nowait(0, 0, null_mut(), null_mut(), null_mut(), null_mut(), 0, null_mut(), 0, null_mut());
        __tgt_target_data_end_nowait_mapper(
            null_mut(),
            0,
            0,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            0,
            null_mut(),
            0,
            null_mut(),
        );
    }
}

#[test]
fn negative_arg_num_maps_nothing() {
    // LLVM's `for (i = 0; i < ArgNum; ...)` does nothing for a negative count;
    // we report it and map nothing.
    init_runtime();
    let mut buf = [1u8; 32];
    let p = buf.as_mut_ptr().cast::<c_void>();
    let (mut bases, mut begins, mut sizes, mut types) = ([p], [p], [32i64], [TO]);
    for n in [-1, i32::MIN] {
        // SAFETY: valid one-element arrays; a negative count must not be used as a length.
        unsafe {
            __tgt_target_data_begin_mapper(
                null_mut(),
                0,
                n,
                bases.as_mut_ptr(),
                begins.as_mut_ptr(),
                sizes.as_mut_ptr(),
                types.as_mut_ptr(),
                null_mut(),
                null_mut(),
            )
        };
    }
    assert!(!is_present(p, 0));
}

#[test]
fn negative_size_is_treated_as_zero_length_section() {
    // A negative ArgSizes value is clamped to 0: a zero-length section of
    // unmapped memory is not an error and creates nothing [§6.5 step 7].
    // (LLVM would read it as a huge unsigned size.)
    init_runtime();
    let mut buf = [1u8; 32];
    let p = buf.as_mut_ptr().cast::<c_void>();
    map1(__tgt_target_data_begin_mapper, null_mut(), 1, p, -16, TO | FROM);
    assert!(!is_present(p, 1));
    map1(__tgt_target_data_end_mapper, null_mut(), 1, p, -16, TO | FROM);
    map1(__tgt_target_data_update_mapper, null_mut(), 1, p, -16, FROM);
    assert_eq!(buf, [1u8; 32]);
}

#[test]
fn end_without_begin_is_ignored() {
    // [§6.9] "a list item not present on exit is ignored": no copy, no error;
    // the same for `delete` and for `target update` of unmapped data [§6.10].
    init_runtime();
    let mut buf = [7u8; 24];
    let p = buf.as_mut_ptr().cast::<c_void>();
    map1(__tgt_target_data_end_mapper, null_mut(), 2, p, 24, FROM);
    map1(__tgt_target_data_end_mapper, null_mut(), 2, p, 24, FROM | DELETE);
    map1(__tgt_target_data_update_mapper, null_mut(), 2, p, 24, FROM);
    assert_eq!(buf, [7u8; 24]);
    assert!(!is_present(p, 2));
}

#[test]
fn default_device_minus_one_means_device_zero_and_host_device_is_noop() {
    // [§4.6 checkDevice] DeviceId -1 resolves to omp_get_default_device() (0
    // here); the initial device number (4) takes the host path: no mapping.
    init_runtime();
    let mut buf = [3u8; 40];
    let p = buf.as_mut_ptr().cast::<c_void>();
    map1(__tgt_target_data_begin_mapper, null_mut(), -1, p, 40, TO);
    assert!(is_present(p, 0));
    map1(__tgt_target_data_end_mapper, null_mut(), -1, p, 40, 0);
    assert!(!is_present(p, 0));
    map1(__tgt_target_data_begin_mapper, null_mut(), HOST_DEVICE as i64, p, 40, TO);
    assert!((0..4).all(|d| !is_present(p, d)));
}

#[test]
fn fatal_present_exit_without_begin() {
    // [§6.9, §6.14] `exit data map(present, ...)` of unmapped data: the
    // 'present' message, then the data-construct tail, then fatal error 1.
    let mut buf = [0u8; 16];
    expect_abort(
        "fatal_present_exit_without_begin",
        &[
            "omptarget message: device mapping required by 'present' map type modifier does not exist for host address {ADDR} (16 bytes)",
            "omptarget error: Consult https://openmp.llvm.org/design/Runtimes.html for debugging options.",
            "api_misuse.rs:42:7: omptarget fatal error 1: failure of target construct while offloading is mandatory",
        ],
        || {
            init_runtime();
            let mut loc = ident(c";api_misuse.rs;present_exit;42;7;;");
            println!("CHILD ADDR=0x{:016x}", buf.as_ptr() as usize);
            map1(__tgt_target_data_end_mapper, &mut loc, 0, buf.as_mut_ptr().cast(), 16, FROM | PRESENT);
        },
    );
}

#[test]
fn fatal_present_update_without_mapping() {
    // [§6.10] `target update to(present: x)` of unmapped x, built without -g.
    let mut buf = [0u8; 8];
    expect_abort(
        "fatal_present_update_without_mapping",
        &[
            "omptarget message: device mapping required by 'present' motion modifier does not exist for host address {ADDR} (8 bytes)",
            "omptarget error: Source location information not present. Compile with -g or -gline-tables-only.",
            "omptarget fatal error 1: failure of target construct while offloading is mandatory",
        ],
        || {
            init_runtime();
            let mut loc = ident(c";unknown;unknown;0;0;;");
            println!("CHILD ADDR=0x{:016x}", buf.as_ptr() as usize);
            map1(__tgt_target_data_update_mapper, &mut loc, 1, buf.as_mut_ptr().cast(), 8, TO | PRESENT);
        },
    );
}

#[test]
fn fatal_data_begin_on_unknown_device() {
    // [§9.1, §11.2 item 5] any other out-of-range device number is fatal,
    // the error number being the device number.
    let mut buf = [0u8; 8];
    expect_abort(
        "fatal_data_begin_on_unknown_device",
        &["omptarget fatal error 7: \"invalid value\" device number '7' out of range, only 4 devices available"],
        || {
            init_runtime();
            map1(__tgt_target_data_begin_mapper, null_mut(), 7, buf.as_mut_ptr().cast(), 8, TO);
        },
    );
}

#[test]
fn fatal_data_end_on_negative_device() {
    // [§11.2 item 5] negative numbers other than -1 are fatal too.
    let mut buf = [0u8; 8];
    expect_abort(
        "fatal_data_end_on_negative_device",
        &["omptarget fatal error -5: \"invalid value\" device number '-5' out of range, only 4 devices available"],
        || {
            init_runtime();
            map1(__tgt_target_data_end_mapper, null_mut(), -5, buf.as_mut_ptr().cast(), 8, FROM);
        },
    );
}

// ---------------------------------------------------------------------------
// Registration [§2.1, §2.2, §2.6, §3.3].
// ---------------------------------------------------------------------------

fn entry(addr: *const u8, name: &'static CStr, size: u64) -> __tgt_offload_entry {
    __tgt_offload_entry {
        Reserved: 0,
        Version: 1,
        Kind: 1,
        Flags: 0,
        Address: addr as *mut c_void,
        SymbolName: name.as_ptr() as *mut c_char,
        Size: size,
        Data: 0,
        AuxAddr: null_mut(),
    }
}

fn desc(images: &mut [__tgt_device_image], begin: *const u8, end: *const u8) -> __tgt_bin_desc {
    __tgt_bin_desc {
        NumDeviceImages: images.len() as i32,
        DeviceImages: if images.is_empty() { null_mut() } else { images.as_mut_ptr() },
        HostEntriesBegin: begin as *mut __tgt_offload_entry,
        HostEntriesEnd: end as *mut __tgt_offload_entry,
    }
}

static REGION_A: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

#[test]
fn register_and_unregister_null_descriptor_do_not_crash() {
    // LLVM dereferences the descriptor; we report an invalid argument.
    init_runtime();
    // SAFETY: NULL is rejected before use.
    unsafe {
        __tgt_register_lib(null_mut());
        __tgt_unregister_lib(null_mut());
    }
    assert_eq!(omp_get_num_devices(), 4);
}

#[test]
fn descriptor_with_negative_image_count_is_rejected() {
    // NumDeviceImages < 0 cannot describe an array; the descriptor is refused.
    init_runtime();
    let entries = [entry(REGION_A.as_ptr(), c"k_never", 0)];
    let range = entries.as_ptr_range();
    let mut d = desc(&mut [], range.start.cast(), range.end.cast());
    for n in [-1, i32::MIN] {
        d.NumDeviceImages = n;
        // SAFETY: a readable descriptor; the bad count must be rejected.
        unsafe {
            __tgt_register_lib(&mut d);
            __tgt_unregister_lib(&mut d);
        }
    }
    assert_eq!(omp_get_num_devices(), 4);
}

#[test]
fn descriptor_with_null_image_array_is_rejected() {
    // NumDeviceImages > 0 with DeviceImages == NULL.
    init_runtime();
    let mut d = desc(&mut [], null(), null());
    d.NumDeviceImages = 2;
    // SAFETY: the NULL image array must be rejected, not read.
    unsafe {
        __tgt_register_lib(&mut d);
        __tgt_unregister_lib(&mut d);
    }
}

#[test]
fn entry_tables_with_inconsistent_bounds_are_rejected() {
    // [§2.2] the table is [HostEntriesBegin, HostEntriesEnd) of whole
    // 56-byte entries (32-byte legacy ones when the first qword is non-zero).
    init_runtime();
    let entries = [entry(REGION_A.as_ptr(), c"k_a", 0), entry(REGION_A.as_ptr(), c"k_b", 0)];
    let b = entries.as_ptr().cast::<u8>();
    let legacy = [REGION_A.as_ptr() as u64, c"k_legacy".as_ptr() as u64, 0, 0, 0, 0];
    let lb = legacy.as_ptr().cast::<u8>();
    // SAFETY: pointers into the live arrays above, or NULL.
    let cases: [(&str, *const u8, *const u8); 6] = unsafe {
        [
            ("end before begin", b.add(56), b),
            ("50 bytes: not a multiple of 56", b, b.add(50)),
            ("57 bytes", b, b.add(57)),
            ("NULL end", b, null()),
            ("NULL begin", null(), b.add(56)),
            ("legacy layout, 40 bytes: not a multiple of 32", lb, lb.add(40)),
        ]
    };
    for (what, begin, end) in cases {
        let mut d = desc(&mut [], begin, end);
        // SAFETY: the bounds point into live arrays; the runtime must check them.
        unsafe {
            __tgt_register_lib(&mut d);
            __tgt_unregister_lib(&mut d);
        }
        println!("{what}: rejected without crash");
    }
}

#[test]
fn image_end_before_start_is_rejected() {
    init_runtime();
    let bytes = [0u64; 8];
    let p = bytes.as_ptr() as *mut c_void;
    let mut images =
        [__tgt_device_image { ImageStart: p.wrapping_byte_add(32), ImageEnd: p, EntriesBegin: null_mut(), EntriesEnd: null_mut() }];
    let mut d = desc(&mut images, null(), null());
    // SAFETY: the reversed range must be rejected before it is read.
    unsafe {
        __tgt_register_lib(&mut d);
        __tgt_unregister_lib(&mut d);
    }
}

#[test]
fn double_unregister_is_harmless() {
    // [§2.6, §11.2 item 22] unregistration may come late or twice (atexit
    // handlers, older rustc's per-kernel cycles); the second call finds
    // nothing to forget and only drops a runtime reference, never below zero.
    init_runtime();
    let entries = [entry(REGION_A.as_ptr(), c"k_unloaded", 0)];
    let r = entries.as_ptr_range();
    let mut d = desc(&mut [], r.start.cast(), r.end.cast());
    let mut never = desc(&mut [], null(), null());
    // SAFETY: valid descriptors (no images); unregister only uses the address.
    unsafe {
        __tgt_register_lib(&mut d);
        __tgt_unregister_lib(&mut d);
        __tgt_unregister_lib(&mut d);
        __tgt_unregister_lib(&mut never);
        for _ in 0..3 {
            omptarget_rs::c_api::openmp::register::__tgt_rtl_deinit();
        }
        // The all-zero descriptor older rustc registers around each kernel.
        __tgt_register_lib(&mut never);
        __tgt_unregister_lib(&mut never);
    }
    assert_eq!(omp_get_num_devices(), 4, "devices survive the reference count reaching zero");
    let mut buf = [0u8; 8];
    map1(__tgt_target_data_begin_mapper, null_mut(), 0, buf.as_mut_ptr().cast(), 8, TO);
    assert!(is_present(buf.as_ptr().cast(), 0), "the runtime still maps after init/deinit cycles");
    map1(__tgt_target_data_end_mapper, null_mut(), 0, buf.as_mut_ptr().cast(), 8, 0);
}

/// An OffloadBinary (§3.1) around `payload` with a host triple.
fn offload_binary(payload: &[u8]) -> Vec<u8> {
    let strings = b"triple\0x86_64-unknown-linux-gnu\0arch\0\0";
    let (header, entry_size, map_at) = (32usize, 40usize, 72usize);
    let data_at = map_at + 32;
    let image_at = (data_at + strings.len()).next_multiple_of(8);
    let total = image_at + payload.len();
    let mut b = Vec::with_capacity(total);
    b.extend_from_slice(&[0x10, 0xff, 0x10, 0xad]);
    b.extend_from_slice(&1u32.to_le_bytes());
    for v in [total, header, entry_size] {
        b.extend_from_slice(&(v as u64).to_le_bytes());
    }
    b.extend_from_slice(&1u16.to_le_bytes()); // IMG_Object
    b.extend_from_slice(&1u16.to_le_bytes()); // OFK_OpenMP
    b.extend_from_slice(&0u32.to_le_bytes());
    for v in [map_at, 2, image_at, payload.len()] {
        b.extend_from_slice(&(v as u64).to_le_bytes());
    }
    // {key, value} offsets: "triple" -> "x86_64-...", "arch" -> "".
    for v in [data_at, data_at + 7, data_at + 32, data_at + 37] {
        b.extend_from_slice(&(v as u64).to_le_bytes());
    }
    b.extend_from_slice(strings);
    b.resize(image_at, 0);
    b.extend_from_slice(payload);
    assert_eq!(b.len(), total);
    b
}

#[test]
fn corrupt_offload_binary_images_are_ignored() {
    // [§3.3] a buffer with the container magic but inconsistent header,
    // entry or string table is refused (LLVM's OffloadBinary::create fails);
    // every truncation and single-bit flip of a container is survived. The
    // payload is not an ELF image, so no plugin ever accepts what is left.
    // Runs in a child: each refusal prints one line.
    let out = common::expect_clean_child("corrupt_offload_binary_images_are_ignored", || {
        init_runtime();
        let good = offload_binary(&[0u8; 64]);
        let mut words = vec![0u64; good.len().div_ceil(8)];
        let mut run = |bytes: &[u8], len: usize| {
            // SAFETY: `words` is an 8-byte aligned buffer at least `bytes.len()` long.
            let buf = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), bytes.len()) };
            buf.copy_from_slice(bytes);
            let start = buf.as_mut_ptr().cast::<c_void>();
            let mut images = [__tgt_device_image {
                ImageStart: start,
                ImageEnd: start.wrapping_byte_add(len),
                EntriesBegin: null_mut(),
                EntriesEnd: null_mut(),
            }];
            let mut d = desc(&mut images, null(), null());
            // SAFETY: the image range lies in `words`, alive until unregistration.
            unsafe {
                __tgt_register_lib(&mut d);
                __tgt_unregister_lib(&mut d);
            }
        };
        for n in 0..good.len() {
            run(&good, n);
        }
        for bit in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            run(&bad, bad.len());
        }
        run(&good, good.len());
        // Still healthy afterwards.
        assert_eq!(omp_get_num_devices(), 4);
        let mut buf = [5u8; 8];
        map1(__tgt_target_data_begin_mapper, null_mut(), 0, buf.as_mut_ptr().cast(), 8, TO);
        assert!(is_present(buf.as_ptr().cast(), 0));
        map1(__tgt_target_data_end_mapper, null_mut(), 0, buf.as_mut_ptr().cast(), 8, 0);
    });
    if let Some(out) = out {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("omptarget")).collect();
        assert!(lines.len() > 100, "expected one refusal per truncated container, got {}", lines.len());
        for l in &lines {
            assert!(
                l.starts_with("omptarget error: device image 0 of descriptor 0x") && l.contains(" ignored: malformed offload image: "),
                "unexpected line: {l}"
            );
        }
        assert!(!stderr.contains("panic") && !stderr.contains("internal error"), "{stderr}");
    }
}

// ---------------------------------------------------------------------------
// The omp_* device API [§9].
// ---------------------------------------------------------------------------

#[test]
fn omp_target_memcpy_with_null_returns_fail() {
    // [§9.2] NULL dst or src: "Call to omp_target_memcpy with invalid
    // arguments", OFFLOAD_FAIL (-1); length 0 is checked first and returns 0.
    init_runtime();
    let mut x = [1u8; 8];
    let p = x.as_mut_ptr().cast::<c_void>();
    // SAFETY: NULL pointers are rejected before any copy.
    unsafe {
        assert_eq!(omp_target_memcpy(null_mut(), p, 8, 0, 0, HOST_DEVICE, HOST_DEVICE), -1);
        assert_eq!(omp_target_memcpy(p, null(), 8, 0, 0, HOST_DEVICE, HOST_DEVICE), -1);
        assert_eq!(omp_target_memcpy(null_mut(), null(), 8, 0, 0, 0, 0), -1);
        assert_eq!(omp_target_memcpy(null_mut(), null(), 0, 0, 0, 0, 0), 0);
        assert_eq!(omp_target_memcpy_async(null_mut(), p, 8, 0, 0, HOST_DEVICE, HOST_DEVICE, 0, null_mut()), -1);
    }
}

#[test]
fn omp_target_memcpy_rect_null_null_returns_int_max() {
    // [§9.2] both pointers NULL: the number of supported dimensions, INT_MAX.
    init_runtime();
    // SAFETY: the NULL/NULL query reads nothing.
    let r = unsafe { omp_target_memcpy_rect(null_mut(), null(), 0, 0, null(), null(), null(), null(), null(), 0, 0) };
    assert_eq!(r, i32::MAX);
}

#[test]
fn omp_target_memcpy_rect_invalid_arguments_return_fail() {
    // [§9.2] element size 0, ndims <= 0, or NULL arrays: -1.
    init_runtime();
    let mut a = [0u8; 16];
    let p = a.as_mut_ptr().cast::<c_void>();
    let v = [2usize, 2];
    // SAFETY: the invalid combinations must be rejected before any array is read.
    unsafe {
        assert_eq!(omp_target_memcpy_rect(p, p, 0, 2, v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), 4, 4), -1);
        assert_eq!(omp_target_memcpy_rect(p, p, 1, 0, v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), 4, 4), -1);
        assert_eq!(omp_target_memcpy_rect(p, p, 1, -3, v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), 4, 4), -1);
        assert_eq!(omp_target_memcpy_rect(p, p, 1, 2, null(), v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), 4, 4), -1);
        assert_eq!(omp_target_memcpy_rect(p, p, 1, 2, v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), null(), 4, 4), -1);
        assert_eq!(omp_target_memcpy_rect(null_mut(), p, 1, 2, v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), v.as_ptr(), 4, 4), -1);
    }
}

#[test]
fn omp_get_device_from_uid_null_is_invalid_device() {
    // [§9.1] NULL or unknown UID -> omp_invalid_device (-2); "HOST" -> the
    // initial device; host-plugin UIDs "x86_64-<n>".
    init_runtime();
    // SAFETY: NULL or NUL-terminated strings.
    unsafe {
        assert_eq!(omp_get_device_from_uid(null()), -2);
        assert_eq!(omp_get_device_from_uid(c"no-such-device".as_ptr()), -2);
        assert_eq!(omp_get_device_from_uid(c"".as_ptr()), -2);
        assert_eq!(omp_get_device_from_uid(c"HOST".as_ptr()), HOST_DEVICE);
        assert_eq!(omp_get_device_from_uid(c"x86_64-2".as_ptr()), 2);
    }
}

#[test]
fn omp_get_uid_from_device_initial_device_is_host() {
    // [§9.1] initial device -> "HOST"; devices -> "x86_64-0" ... "x86_64-3";
    // the returned string stays valid.
    init_runtime();
    let uid = |d| {
        let p = omp_get_uid_from_device(d);
        assert!(!p.is_null());
        // SAFETY: the runtime returns a NUL-terminated static string.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned()
    };
    assert_eq!(uid(omp_get_initial_device()), "HOST");
    for d in 0..4 {
        assert_eq!(uid(d), format!("x86_64-{d}"));
        // SAFETY: a string returned by omp_get_uid_from_device.
        assert_eq!(unsafe { omp_get_device_from_uid(omp_get_uid_from_device(d)) }, d, "UID round trip");
    }
    assert_eq!(omp_get_uid_from_device(1), omp_get_uid_from_device(1), "one interned string per UID");
}

#[test]
fn device_numbering_queries() {
    // [§9.1] initial device == number of devices; on the host
    // omp_get_device_num() is the initial device.
    init_runtime();
    assert_eq!(omp_get_initial_device(), 4);
    assert_eq!(omp_get_device_num(), 4);
    assert_eq!(__tgt_get_num_devices(), 4);
}

#[test]
fn alloc_free_edge_cases() {
    // [§9.2] size 0 -> NULL without error; NULL free is a no-op; the initial
    // device uses malloc/free; device memory round-trips through memcpy.
    init_runtime();
    assert!(omp_target_alloc(0, 0).is_null());
    assert!(omp_target_alloc(0, HOST_DEVICE).is_null());
    assert!(llvm_omp_target_alloc_shared(0, 1).is_null());
    // SAFETY: NULL frees are no-ops.
    unsafe {
        omp_target_free(null_mut(), 0);
        omp_target_free(null_mut(), HOST_DEVICE);
        omp_target_free(null_mut(), 99); // NULL is checked before the device
        llvm_omp_target_free_host(null_mut(), 2);
    }
    let h = omp_target_alloc(16, HOST_DEVICE);
    let d = omp_target_alloc(16, 3);
    assert!(!h.is_null() && !d.is_null());
    let src = [9u8; 16];
    let mut back = [0u8; 16];
    // SAFETY: 16-byte buffers on the named devices.
    unsafe {
        assert_eq!(omp_target_memcpy(d, src.as_ptr().cast(), 16, 0, 0, 3, HOST_DEVICE), 0);
        assert_eq!(omp_target_memcpy(h, d, 16, 0, 0, HOST_DEVICE, 3), 0);
        assert_eq!(omp_target_memcpy(back.as_mut_ptr().cast(), h, 16, 0, 0, HOST_DEVICE, HOST_DEVICE), 0);
        assert_eq!(omp_target_memset(d, 0, 0, 3), d, "memset returns its pointer even for 0 bytes");
        assert!(omp_target_memset(null_mut(), 1, 8, 3).is_null());
        omp_target_free(d, 3);
        omp_target_free(h, HOST_DEVICE);
    }
    assert_eq!(back, src);
    assert!(llvm_omp_target_dynamic_shared_alloc().is_null(), "host stub returns NULL [§1.3.7]");
}

#[test]
fn presence_and_mapped_ptr_edge_cases() {
    // [§9.2] is_present(NULL) = 0, initial device = 1; is_accessible = 0 on
    // host-plugin devices; get_mapped_ptr(NULL) = NULL, initial device = ptr,
    // device > N = NULL silently, unmapped = NULL.
    init_runtime();
    let x = [0u8; 4];
    let p = x.as_ptr().cast::<c_void>();
    assert_eq!(omp_target_is_present(null(), 0), 0);
    assert_eq!(omp_target_is_present(p, HOST_DEVICE), 1);
    assert_eq!(omp_target_is_present(p, 0), 0);
    assert_eq!(omp_target_is_accessible(p, 4, 0), 0);
    assert_eq!(omp_target_is_accessible(p, 4, HOST_DEVICE), 1);
    assert!(omp_get_mapped_ptr(null(), 0).is_null());
    assert_eq!(omp_get_mapped_ptr(p, HOST_DEVICE), p as *mut c_void);
    assert!(omp_get_mapped_ptr(p, 5).is_null());
    assert!(omp_get_mapped_ptr(p, 1000).is_null());
    assert!(omp_get_mapped_ptr(p, 0).is_null());
}

#[test]
fn associate_and_disassociate_misuse() {
    // [§9.2] NULL host/device pointer, the initial device, re-association
    // with a different device address, disassociating what is not associated
    // (or was mapped normally): all -1, no change.
    init_runtime();
    let mut host = [0u8; 32];
    let hp = host.as_mut_ptr().cast::<c_void>();
    let d1 = omp_target_alloc(32, 2);
    let d2 = omp_target_alloc(32, 2);
    assert_eq!(omp_target_associate_ptr(null(), d1, 32, 0, 2), -1);
    assert_eq!(omp_target_associate_ptr(hp, null(), 32, 0, 2), -1);
    assert_eq!(omp_target_associate_ptr(hp, d1, 32, 0, HOST_DEVICE), -1);
    assert_eq!(omp_target_disassociate_ptr(hp, 2), -1, "nothing associated yet");
    assert_eq!(omp_target_disassociate_ptr(hp, HOST_DEVICE), -1);
    assert_eq!(omp_target_associate_ptr(hp, d1, 32, 0, 2), 0);
    assert_eq!(omp_target_associate_ptr(hp, d1, 32, 0, 2), 0, "the same association again is a no-op");
    assert_eq!(omp_target_associate_ptr(hp, d2, 32, 0, 2), -1, "re-association with another device address");
    assert_eq!(omp_get_mapped_ptr(hp, 2), d1);
    // Mapping an associated range does not change its INF count; exit never removes it.
    map1(__tgt_target_data_begin_mapper, null_mut(), 2, hp, 32, TO);
    map1(__tgt_target_data_end_mapper, null_mut(), 2, hp, 32, FROM | DELETE);
    assert!(is_present(hp, 2));
    assert_eq!(omp_target_disassociate_ptr(hp.wrapping_byte_add(8), 2), -1, "not the associated address");
    assert_eq!(omp_target_disassociate_ptr(hp, 2), 0);
    assert_eq!(omp_target_disassociate_ptr(hp, 2), -1, "already gone");
    assert!(!is_present(hp, 2));
    // A normal mapping cannot be disassociated.
    map1(__tgt_target_data_begin_mapper, null_mut(), 2, hp, 32, TO);
    assert_eq!(omp_target_disassociate_ptr(hp, 2), -1);
    map1(__tgt_target_data_end_mapper, null_mut(), 2, hp, 32, 0);
    // SAFETY: allocated above on device 2.
    unsafe {
        omp_target_free(d1, 2);
        omp_target_free(d2, 2);
    }
}

#[test]
fn fatal_omp_target_alloc_on_invalid_device() {
    // [§9.1] an invalid non-host device number is fatal, error number = device.
    expect_abort(
        "fatal_omp_target_alloc_on_invalid_device",
        &["omptarget fatal error 99: \"invalid value\" device number '99' out of range, only 4 devices available"],
        || {
            init_runtime();
            omp_target_alloc(8, 99);
        },
    );
}

#[test]
fn fatal_omp_target_free_on_invalid_device() {
    expect_abort(
        "fatal_omp_target_free_on_invalid_device",
        &["omptarget fatal error 5: \"invalid value\" device number '5' out of range, only 4 devices available"],
        || {
            init_runtime();
            // SAFETY: the device number is checked before the pointer is used.
            unsafe { omp_target_free(0x1000 as *mut c_void, 5) };
        },
    );
}

#[test]
fn fatal_omp_target_memcpy_on_invalid_device() {
    let a = [0u8; 8];
    let mut b = [0u8; 8];
    expect_abort(
        "fatal_omp_target_memcpy_on_invalid_device",
        &["omptarget fatal error 12: \"invalid value\" device number '12' out of range, only 4 devices available"],
        || {
            init_runtime();
            // SAFETY: 8-byte buffers; the device number is checked first.
            unsafe { omp_target_memcpy(b.as_mut_ptr().cast(), a.as_ptr().cast(), 8, 0, 0, HOST_DEVICE, 12) };
        },
    );
}

#[test]
fn uid_of_initial_device_minus_one_is_host() {
    // OpenMP 5.2's omp_initial_device (-1) names the host in
    // the device routines (LLVM 22.1 aborts "device number '-1' out of range");
    // omp_invalid_device (-2) stays fatal (fatal_mapped_ptr_on_negative_device).
    init_runtime();
    let p = omp_get_uid_from_device(-1);
    assert!(!p.is_null());
    // SAFETY: the runtime returns a NUL-terminated static string.
    assert_eq!(unsafe { CStr::from_ptr(p) }.to_str().unwrap(), "HOST");
}

#[test]
fn fatal_mapped_ptr_on_negative_device() {
    // [§9.2, §11.2 item 24] omp_get_mapped_ptr: negative device is fatal
    // (while a too-large one returns NULL).
    let x = 0u32;
    expect_abort(
        "fatal_mapped_ptr_on_negative_device",
        &["omptarget fatal error -5: \"invalid value\" device number '-5' out of range, only 4 devices available"],
        || {
            init_runtime();
            omp_get_mapped_ptr((&raw const x).cast(), -5);
        },
    );
}

#[test]
fn fatal_print_device_info_on_invalid_device() {
    expect_abort(
        "fatal_print_device_info_on_invalid_device",
        &["omptarget fatal error 99: \"invalid value\" device number '99' out of range, only 4 devices available"],
        || {
            init_runtime();
            __tgt_print_device_info(99);
        },
    );
}

// ---------------------------------------------------------------------------
// Kernel launch, nowait, mappers, misc [§4, §6.12].
// ---------------------------------------------------------------------------

fn empty_kernel_args() -> __tgt_kernel_arguments {
    __tgt_kernel_arguments {
        Version: 3,
        NumArgs: 0,
        ArgBasePtrs: null_mut(),
        ArgPtrs: null_mut(),
        ArgSizes: null_mut(),
        ArgTypes: null_mut(),
        ArgNames: null_mut(),
        ArgMappers: null_mut(),
        Tripcount: 0,
        Flags: 0,
        NumTeams: [0; 3],
        ThreadLimit: [0; 3],
        DynCGroupMem: 0,
    }
}

#[test]
fn kernel_launch_on_initial_device_declines() {
    // [§4.1, §11.2 item 5] the initial device number: return -1 (run the
    // host fallback) before reading anything, even a NULL struct.
    init_runtime();
    let mut ka = empty_kernel_args();
    // SAFETY: a valid (or NULL) struct; the host path returns before use.
    unsafe {
        assert_eq!(__tgt_target_kernel(null_mut(), HOST_DEVICE as i64, -1, 0, REGION_A.as_ptr().cast(), &mut ka), -1);
        assert_eq!(__tgt_target_kernel(null_mut(), HOST_DEVICE as i64, -1, 0, REGION_A.as_ptr().cast(), null_mut()), -1);
    }
    assert_eq!(ka.NumTeams, [0; 3], "nothing written back when declining");
}

#[test]
fn kernel_launch_with_null_or_inconsistent_args_declines() {
    // LLVM dereferences these; we report an invalid argument and return
    // non-zero, so compiled code runs its host fallback.
    init_runtime();
    let mut ka = empty_kernel_args();
    ka.NumArgs = 2; // with NULL arrays
    // SAFETY: NULL/inconsistent arguments must be rejected before use.
    unsafe {
        assert_ne!(__tgt_target_kernel(null_mut(), 0, -1, 0, REGION_A.as_ptr().cast(), null_mut()), 0);
        assert_ne!(__tgt_target_kernel(null_mut(), 0, -1, 0, REGION_A.as_ptr().cast(), &mut ka), 0);
    }
}

#[test]
fn fatal_kernel_launch_on_invalid_device() {
    expect_abort(
        "fatal_kernel_launch_on_invalid_device",
        &["omptarget fatal error 99: \"invalid value\" device number '99' out of range, only 4 devices available"],
        || {
            init_runtime();
            let mut ka = empty_kernel_args();
            // SAFETY: a valid Version 3 struct without arguments.
            unsafe { __tgt_target_kernel(null_mut(), 99, 0, 0, REGION_A.as_ptr().cast(), &mut ka) };
        },
    );
}

#[test]
fn fatal_nowait_query_with_null_handle_value() {
    // [§4.9] `*AsyncHandle == NULL`: fatal error 1 with LLVM's text.
    expect_abort(
        "fatal_nowait_query_with_null_handle_value",
        &["omptarget fatal error 1: Receive an invalid async handle from the current OpenMP task. Is this a target nowait region?"],
        || {
            init_runtime();
            let mut slot: *mut c_void = null_mut();
            // SAFETY: a valid slot holding NULL.
            unsafe { __tgt_target_nowait_query(&mut slot) };
        },
    );
}

#[test]
fn fatal_nowait_query_with_null_slot() {
    // [§4.9] "NULL handle or NULL *handle -> fatal".
    expect_abort(
        "fatal_nowait_query_with_null_slot",
        &["omptarget fatal error 1: Receive an invalid async handle from the current OpenMP task. Is this a target nowait region?"],
        || {
            init_runtime();
            // SAFETY: NULL must be diagnosed, not dereferenced.
            unsafe { __tgt_target_nowait_query(null_mut()) };
        },
    );
}

#[test]
fn mapper_services_take_a_component_vector_and_reject_bad_handles() {
    // [§6.12] the handle is a `MapperComponentsTy` (a std::vector of
    // {base, begin, size, type, name}, libstdc++ layout): a program's own
    // empty vector is accepted, grows and reads back; NULL, misaligned and
    // implausible handles are refused instead of being written through.
    init_runtime();
    let mut data = [0u8; 64];
    let d = data.as_mut_ptr().cast::<c_void>();
    let mut vec = [0usize; 3];
    let vp = vec.as_mut_ptr().cast::<c_void>();
    let mut bad = [0x2000usize, 0x1000, 0x3000];
    let bp = bad.as_mut_ptr().cast::<c_void>();
    // SAFETY: `vec` is an empty vector; the other handles must be rejected before use.
    unsafe {
        assert_eq!(__tgt_mapper_num_components(null_mut()), 0);
        assert_eq!(__tgt_mapper_num_components(vp.wrapping_byte_add(1)), 0);
        assert_eq!(__tgt_mapper_num_components(bp), 0);
        __tgt_push_mapper_component(null_mut(), null_mut(), null_mut(), 8, TO, null_mut());
        __tgt_push_mapper_component(bp, d, d, 8, TO, null_mut());
        assert_eq!(__tgt_mapper_num_components(vp), 0);
        for i in 0..3 {
            __tgt_push_mapper_component(vp, d, d.wrapping_byte_add(8 * i), 8 * (i as i64 + 1), TO | i as i64, null_mut());
        }
        assert_eq!(__tgt_mapper_num_components(vp), 3);
    }
    assert_eq!(bad, [0x2000, 0x1000, 0x3000], "an implausible handle was written through");
    // Read back through the std::vector layout: [begin, end, end of storage).
    let (begin, end) = (vec[0] as *const [u64; 5], vec[1] as *const [u64; 5]);
    // SAFETY: the runtime filled `vec` as a vector of 40-byte components.
    let comps = unsafe { std::slice::from_raw_parts(begin, end.offset_from(begin) as usize) };
    assert_eq!(comps.len(), 3);
    for (i, c) in comps.iter().enumerate() {
        assert_eq!(*c, [d as u64, d as u64 + 8 * i as u64, 8 * (i as u64 + 1), (TO | i as i64) as u64, 0]);
    }
    // SAFETY: the storage came from operator new (malloc-based) or malloc.
    unsafe { libc::free(vec[0] as *mut c_void) };
}

#[test]
fn register_requires_prints_removed_message() {
    // [§1.3.1] obsolete: prints one "has been removed" message (LLVM names the
    // function with its signature), nothing else.
    let out = common::expect_clean_child("register_requires_prints_removed_message", || {
        init_runtime();
        __tgt_register_requires(8);
    });
    if let Some(out) = out {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("omptarget")).collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        let l = lines[0];
        assert!(
            l.starts_with("omptarget message: The ")
                && l.contains("__tgt_register_requires")
                && l.ends_with("function has been removed. Old OpenMP requirements will not be handled"),
            "{l}"
        );
    }
}

#[test]
fn interop_init_leaves_interop_none() {
    // [§1.3.8] the host plugin offers no interop: the object stays omp_interop_none.
    init_runtime();
    let mut obj: *mut c_void = 0x1234 as *mut c_void;
    // SAFETY: a valid pointer to the interop variable.
    unsafe { omptarget_rs::c_api::openmp::interop::__tgt_interop_init(null_mut(), 0, &mut obj, 2, 0, 0, null_mut(), 0) };
    assert!(obj.is_null());
}

#[test]
fn nowait_and_legacy_data_forms_forward() {
    // [§1.3.2] the nowait and legacy forms do what the _mapper form does
    // (dependences ignored, the call completes before returning).
    init_runtime();
    let mut buf = [4u8; 16];
    let p = buf.as_mut_ptr().cast::<c_void>();
    let (mut bases, mut begins, mut sizes) = ([p], [p], [16i64]);
    let mut to = [TO | FROM];
    let mut param = [TO | FROM | TARGET_PARAM];
    // SAFETY: one-element arrays.
    unsafe {
        __tgt_target_data_begin_nowait_mapper(
            null_mut(),
            3,
            1,
            bases.as_mut_ptr(),
            begins.as_mut_ptr(),
            sizes.as_mut_ptr(),
            to.as_mut_ptr(),
            null_mut(),
            null_mut(),
            0,
            null_mut(),
            0,
            null_mut(),
        );
        assert!(is_present(p, 3));
        __tgt_target_data_begin(3, 1, bases.as_mut_ptr(), begins.as_mut_ptr(), sizes.as_mut_ptr(), param.as_mut_ptr());
        let d = omp_get_mapped_ptr(p, 3);
        assert_eq!(omp_target_memset(d, 9, 16, 3), d);
        __tgt_target_data_update_nowait(
            3,
            1,
            bases.as_mut_ptr(),
            begins.as_mut_ptr(),
            sizes.as_mut_ptr(),
            [FROM].as_mut_ptr(),
            0,
            null_mut(),
            0,
            null_mut(),
        );
        assert_eq!(buf, [9u8; 16]);
        p.cast::<u8>().write_bytes(1, 16);
        __tgt_target_data_end_nowait(
            3,
            1,
            bases.as_mut_ptr(),
            begins.as_mut_ptr(),
            sizes.as_mut_ptr(),
            to.as_mut_ptr(),
            0,
            null_mut(),
            0,
            null_mut(),
        );
        assert_eq!(buf, [1u8; 16], "count 2 -> 1: no copy back");
        __tgt_target_data_end_mapper(
            null_mut(),
            3,
            1,
            bases.as_mut_ptr(),
            begins.as_mut_ptr(),
            sizes.as_mut_ptr(),
            to.as_mut_ptr(),
            null_mut(),
            null_mut(),
        );
        assert_eq!(buf, [9u8; 16], "count 1 -> 0: copied back");
    }
    assert!(!is_present(p, 3));
}
