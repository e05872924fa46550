//! Kernel record/replay (`__tgt_activate_record_replay`,
//! `__tgt_target_kernel_replay`, used by LLVM's `llvm-omp-kernel-replay`
//! tool and the `LIBOMPTARGET_RECORD`/`LIBOMPTARGET_REPLAY` environment of
//! 22.1's GPU plugins) is not supported yet: each entry prints one message
//! naming the symbol and returns `OFFLOAD_FAIL`, never a silent success.
//! (Interop lives in `interop.rs`, kernel-language launches in `kernel_lang.rs`.)

use crate::abi::ident_t;
use crate::env::diag;
use core::ffi::{c_int, c_void};

fn unsupported(name: &str) {
    diag::report(&format!("{name}: kernel record/replay is not supported by omptarget-rs"));
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
    unsupported("__tgt_activate_record_replay");
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
    unsupported("__tgt_target_kernel_replay");
    crate::abi::OFFLOAD_FAIL
}
