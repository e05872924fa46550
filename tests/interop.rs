//! Interop queries and kernel-language entry points without a GPU:
//! what the host plugin and bad input give. The GPU plugins are checked on
//! their stand-ins by `c-tests/interop/run.sh`.

mod common;

use common::init_runtime;
use core::ffi::c_void;
use omptarget_rs::c_api::openmp::interop::*;
use omptarget_rs::c_api::openmp::kernel_lang::{__llvmPopCallConfiguration, __llvmPushCallConfiguration, dim3, llvmLaunchKernel};
use std::ptr::{null, null_mut};

const EMPTY: i32 = -1;
const OUT_OF_RANGE: i32 = -2;
const OTHER: i32 = -6;

#[test]
fn host_devices_give_interop_none() {
    init_runtime();
    for device in [0, 3, 4, -1, 99] {
        for ty in [1, 2] {
            let mut obj = 0x1234 as *mut c_void;
            // SAFETY: a valid pointer to the interop variable.
            unsafe { __tgt_interop_init(null_mut(), 0, &mut obj, ty, device, 0, null_mut(), 0) };
            assert!(obj.is_null(), "device {device} type {ty}");
        }
    }
    // SAFETY: NULL context and dependences are accepted.
    unsafe {
        assert!(__tgt_interop_get(null_mut(), 2, 0, 0, null_mut(), null_mut(), null_mut()).is_null());
        assert_eq!(__tgt_interop_use60(null_mut(), null_mut(), null_mut(), null_mut()), -1);
        assert_eq!(__tgt_interop_release(null_mut(), null_mut(), null_mut(), null_mut()), -1);
        // A NULL variable pointer is reported, not dereferenced.
        __tgt_interop_init(null_mut(), 0, null_mut(), 2, 0, 0, null_mut(), 0);
        __tgt_interop_use(null_mut(), 0, null_mut(), 0, 0, null_mut(), 0);
        __tgt_interop_destroy(null_mut(), 0, null_mut(), 0, 0, null_mut(), 0);
    }
}

#[test]
fn queries_on_none_and_unknown_objects() {
    init_runtime();
    let mut rc = 99;
    // SAFETY: `rc` is writable; the objects are never dereferenced.
    unsafe {
        // Valid property on omp_interop_none: 22.1 crashes, we answer omp_irc_empty.
        assert_eq!(omp_get_interop_int(null(), -1, &mut rc), 0);
        assert_eq!(rc, EMPTY);
        assert!(omp_get_interop_ptr(null(), -9, &mut rc).is_null());
        assert_eq!(rc, EMPTY);
        assert!(omp_get_interop_str(null(), -2, &mut rc).is_null());
        assert_eq!(rc, EMPTY);
        // Out of range first, as 22.1 checks it.
        omp_get_interop_int(null(), 0, &mut rc);
        assert_eq!(rc, OUT_OF_RANGE);
        omp_get_interop_int(null(), -10, &mut rc);
        assert_eq!(rc, OUT_OF_RANGE);
        // A pointer that is no interop object of ours.
        let bogus = 0x1000 as *const c_void;
        omp_get_interop_int(bogus, -1, &mut rc);
        assert_eq!(rc, OTHER);
        // NULL return-code pointers are fine.
        assert_eq!(omp_get_interop_int(bogus, -1, null_mut()), 0);
    }
    assert!(omp_get_interop_name(null(), -1).is_null());
    assert!(omp_get_interop_type_desc(null(), -1).is_null());
    assert_eq!(ompx_interop_add_completion_callback(null_mut(), None, null_mut()), OTHER);
    __tgt_target_sync(null_mut(), 0, null_mut(), null_mut());
}

#[test]
fn call_configuration_is_per_thread() {
    let g = dim3 { x: 4, y: 2, z: 1 };
    let b = dim3 { x: 32, y: 1, z: 1 };
    assert_eq!(__llvmPushCallConfiguration(g, b, 128, 0x77 as *mut c_void), 0);
    let pop = || {
        let (mut g, mut b, mut shmem, mut stream) = (dim3::default(), dim3::default(), 0usize, null_mut::<c_void>());
        // SAFETY: valid out-pointers (`stream` receives a `void *`).
        let rc = unsafe { __llvmPopCallConfiguration(&mut g, &mut b, &mut shmem, (&mut stream as *mut *mut c_void).cast()) };
        (rc, g, b, shmem, stream as usize)
    };
    assert_eq!(pop(), (0, g, b, 128, 0x77));
    // Another thread has its own (empty) configuration.
    let other = std::thread::spawn(move || {
        let (mut g, mut s) = (dim3 { x: 9, y: 9, z: 9 }, 5usize);
        // SAFETY: valid out-pointers; NULL ones are skipped.
        unsafe { __llvmPopCallConfiguration(&mut g, null_mut(), &mut s, null_mut()) };
        (g, s)
    })
    .join()
    .unwrap();
    assert_eq!(other, (dim3::default(), 0));
}

#[test]
fn kernel_language_launch_with_bad_arguments_stays_up() {
    init_runtime();
    let one = dim3 { x: 1, y: 1, z: 1 };
    // SAFETY: NULL launch parameters are rejected before use.
    let rc = unsafe { llvmLaunchKernel(null(), one, one, null_mut(), 0, null_mut()) };
    assert_eq!(rc, u32::MAX);
}

#[test]
fn record_replay_needs_a_gpu_device() {
    use omptarget_rs::c_api::openmp::record_replay::{__tgt_activate_record_replay, __tgt_target_kernel_replay};
    init_runtime();
    let mut offset = 7u64;
    // SAFETY: `offset` is writable; the host device is refused before any use.
    let rc = unsafe { __tgt_activate_record_replay(0, 1 << 20, null_mut(), false, false, &mut offset) };
    assert_eq!((rc, offset), (-1, 7));
    // SAFETY: out-of-range numbers are refused first; NULL arrays with 0 elements are empty.
    let rc = unsafe { __tgt_activate_record_replay(99, 1 << 20, null_mut(), true, false, null_mut()) };
    assert_eq!(rc, -1);
    // Replay on a host device without activation: an error, no launch.
    // SAFETY: NULL arrays with 0 elements; a NULL memory pointer with size 0.
    let rc = unsafe { __tgt_target_kernel_replay(null_mut(), 0, 0x10 as *mut c_void, null_mut(), 0, null_mut(), null_mut(), 0, 1, 1, 0) };
    assert_eq!(rc, -1);
    // A negative count is refused.
    // SAFETY: as above.
    let rc = unsafe { __tgt_target_kernel_replay(null_mut(), 0, 0x10 as *mut c_void, null_mut(), 0, null_mut(), null_mut(), -1, 1, 1, 0) };
    assert_eq!(rc, -1);
}
