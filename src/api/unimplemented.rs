//! Exports whose behaviour is not implemented yet: interop (issue 3 covers
#![allow(non_snake_case, non_camel_case_types)] // Exports and dim3 keep their C names.
//! conforming "not supported" answers), kernel record/replay and the
//! CUDA/HIP-on-offload launch path. Each prints one clear message naming the
//! symbol and returns the failure value the reference documents, never a
//! silent success.

use crate::abi::ident_t;
use crate::env::diag;
use core::ffi::{c_char, c_int, c_void};

fn not_implemented(name: &str) {
    diag::report(&format!("{name} is not implemented yet in omptarget-rs"));
}

/// `#pragma omp interop init`: the object stays `omp_interop_none`.
///
/// # Safety
/// `interop_ptr` is NULL or points to the program's interop variable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_init(
    _loc: *mut ident_t,
    _gtid: i32,
    interop_ptr: *mut *mut c_void,
    _interop_type: i32,
    _device_id: i32,
    _ndeps: i32,
    _dep_list: *mut c_void,
    _have_nowait: i32,
) {
    not_implemented("__tgt_interop_init");
    if !interop_ptr.is_null() && (interop_ptr as usize).is_multiple_of(8) {
        // SAFETY: non-NULL, aligned pointer to the program's interop variable.
        unsafe { *interop_ptr = core::ptr::null_mut() };
    }
}

/// `#pragma omp interop use`.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_interop_use(
    _loc: *mut ident_t,
    _gtid: i32,
    _interop_ptr: *mut *mut c_void,
    _device_id: i32,
    _ndeps: i32,
    _dep_list: *mut c_void,
    _have_nowait: i32,
) {
    not_implemented("__tgt_interop_use");
}

/// `#pragma omp interop destroy`.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_interop_destroy(
    _loc: *mut ident_t,
    _gtid: i32,
    _interop_ptr: *mut *mut c_void,
    _device_id: i32,
    _ndeps: i32,
    _dep_list: *mut c_void,
    _have_nowait: i32,
) {
    not_implemented("__tgt_interop_destroy");
}

/// OpenMP 6.0-style interop creation: NULL (none).
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_interop_get(
    _loc: *mut ident_t,
    _interop_type: i32,
    _device_num: i64,
    _num_prefers: i32,
    _prefers: *mut c_void,
    _ctx: *mut c_void,
    _deps: *mut c_void,
) -> *mut c_void {
    not_implemented("__tgt_interop_get");
    core::ptr::null_mut()
}

/// OpenMP 6.0-style interop use: fails.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_interop_use60(_loc: *mut ident_t, _interop: *mut c_void, _ctx: *mut c_void, _deps: *mut c_void) -> c_int {
    not_implemented("__tgt_interop_use60");
    crate::abi::OFFLOAD_FAIL
}

/// OpenMP 6.0-style interop release: fails.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_interop_release(_loc: *mut ident_t, _interop: *mut c_void, _ctx: *mut c_void, _deps: *mut c_void) -> c_int {
    not_implemented("__tgt_interop_release");
    crate::abi::OFFLOAD_FAIL
}

/// `omp_irc_other` (OpenMP 5.1 `omp_interop_rc_t`).
const OMP_IRC_OTHER: c_int = -6;

/// Stores `omp_irc_other` where the caller asked for the return code.
///
/// # Safety
/// `ret_code` is NULL or writable.
unsafe fn set_ret_code(ret_code: *mut c_int) {
    if !ret_code.is_null() && (ret_code as usize).is_multiple_of(align_of::<c_int>()) {
        // SAFETY: non-NULL, aligned pointer the caller provided for the return code.
        unsafe { *ret_code = OMP_IRC_OTHER };
    }
}

/// Synchronises implicit interop objects: there are none.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_target_sync(_loc: *mut ident_t, _gtid: c_int, _current_task: *mut c_void, _event: *mut c_void) {}

/// Interop property query. No interop object exists in this runtime, so
/// every query fails with `omp_irc_other`.
///
/// # Safety
/// `ret_code` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_int(_interop: *const c_void, _property: c_int, ret_code: *mut c_int) -> isize {
    not_implemented("omp_get_interop_int");
    // SAFETY: forwarded contract.
    unsafe { set_ret_code(ret_code) };
    0
}

/// Interop property query. No interop object exists in this runtime, so
/// every query fails with `omp_irc_other`.
///
/// # Safety
/// `ret_code` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_ptr(_interop: *const c_void, _property: c_int, ret_code: *mut c_int) -> *mut c_void {
    not_implemented("omp_get_interop_ptr");
    // SAFETY: forwarded contract.
    unsafe { set_ret_code(ret_code) };
    core::ptr::null_mut()
}

/// Interop property query. No interop object exists in this runtime, so
/// every query fails with `omp_irc_other`.
///
/// # Safety
/// `ret_code` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_str(_interop: *const c_void, _property: c_int, ret_code: *mut c_int) -> *const c_char {
    not_implemented("omp_get_interop_str");
    // SAFETY: forwarded contract.
    unsafe { set_ret_code(ret_code) };
    core::ptr::null()
}

/// Interop property name: NULL.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_name(_interop: *const c_void, _property: c_int) -> *const c_char {
    not_implemented("omp_get_interop_name");
    core::ptr::null()
}

/// Interop property description: NULL.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_type_desc(_interop: *const c_void, _property: c_int) -> *const c_char {
    not_implemented("omp_get_interop_type_desc");
    core::ptr::null()
}

/// Interop completion callback: fails.
#[unsafe(no_mangle)]
pub extern "C" fn ompx_interop_add_completion_callback(
    _interop: *mut c_void,
    _cb: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
    _data: *mut c_void,
) -> c_int {
    not_implemented("ompx_interop_add_completion_callback");
    crate::abi::OFFLOAD_FAIL
}

/// Kernel record/replay: fails.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_activate_record_replay(
    _device_id: i64,
    _memory_size: u64,
    _vaddr: *mut c_void,
    _is_record: bool,
    _save_output: bool,
    _req_ptr_arg_offset: *mut u64,
) -> c_int {
    not_implemented("__tgt_activate_record_replay");
    crate::abi::OFFLOAD_FAIL
}

/// Replays a recorded kernel: fails.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_target_kernel_replay(
    _loc: *mut ident_t,
    _device_id: i64,
    _host_ptr: *mut c_void,
    _device_memory: *mut c_void,
    _device_memory_size: i64,
    _tgt_args: *mut *mut c_void,
    _tgt_offsets: *mut isize,
    _num_args: i32,
    _num_teams: i32,
    _thread_limit: i32,
    _loop_tripcount: u64,
) -> c_int {
    not_implemented("__tgt_target_kernel_replay");
    crate::abi::OFFLOAD_FAIL
}

/// CUDA-style grid dimensions.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// Saves a CUDA-style launch configuration: fails (kernel language not supported yet).
#[unsafe(no_mangle)]
pub extern "C" fn __llvmPushCallConfiguration(_grid: dim3, _block: dim3, _shared_mem: usize, _stream: *mut c_void) -> u32 {
    not_implemented("__llvmPushCallConfiguration");
    1
}

/// Restores a CUDA-style launch configuration: fails.
#[unsafe(no_mangle)]
pub extern "C" fn __llvmPopCallConfiguration(_grid: *mut dim3, _block: *mut dim3, _shared_mem: *mut usize, _stream: *mut c_void) -> u32 {
    not_implemented("__llvmPopCallConfiguration");
    1
}

/// CUDA-style kernel launch: fails.
#[unsafe(no_mangle)]
pub extern "C" fn llvmLaunchKernel(
    _func: *const c_void,
    _grid: dim3,
    _block: dim3,
    _args: *mut c_void,
    _shared_mem: usize,
    _stream: *mut c_void,
) -> u32 {
    not_implemented("llvmLaunchKernel");
    1
}
