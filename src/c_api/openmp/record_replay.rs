//! Kernel record/replay entry points (`__tgt_activate_record_replay`,
//! `__tgt_target_kernel_replay`), as LLVM's `llvm-omp-kernel-replay` tool
//! calls them; the mechanism is in `openmp::record_replay` and the device
//! layer's `device::record_memory`.

use super::boundary::int_entry;
use crate::abi::ident_t;
use crate::abi::ptr::{Loc, slice};
use crate::base::error::OffloadError;
use crate::openmp::record_replay;
use core::ffi::{c_int, c_void};

/// Starts recording or replaying on a GPU device (reserves its memory
/// block); stores the offset the caller must subtract from pointer arguments
/// of the replayed kernel. `OFFLOAD_FAIL` when the block cannot be reserved.
///
/// # Safety
/// `req_ptr_arg_offset` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_activate_record_replay(
    device_id: i64,
    memory_size: u64,
    vaddr: *mut c_void,
    is_record: bool,
    save_output: bool,
    req_ptr_arg_offset: *mut u64,
) -> c_int {
    int_entry("__tgt_activate_record_replay", || {
        let dev = crate::openmp::get().device(device_id)?;
        let offset = crate::device::record_memory::activate(dev, memory_size, vaddr as u64, is_record, save_output)?;
        if !req_ptr_arg_offset.is_null() && (req_ptr_arg_offset as usize).is_multiple_of(align_of::<u64>()) {
            // SAFETY: non-NULL, aligned, caller's contract.
            unsafe { *req_ptr_arg_offset = offset };
        }
        Ok(crate::abi::OFFLOAD_SUCCESS)
    })
}

/// Replays a recorded kernel: restores `device_memory` into the device's
/// block and launches the kernel of `host_ptr` with the recorded arguments.
///
/// # Safety
/// `device_memory` holds `device_memory_size` bytes; `tgt_args` and
/// `tgt_offsets` hold `num_args` elements (NULL when 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_target_kernel_replay(
    loc: *mut ident_t,
    device_id: i64,
    host_ptr: *mut c_void,
    device_memory: *mut c_void,
    device_memory_size: i64,
    tgt_args: *mut *mut c_void,
    tgt_offsets: *mut isize,
    num_args: i32,
    num_teams: i32,
    thread_limit: i32,
    loop_tripcount: u64,
) -> c_int {
    int_entry("__tgt_target_kernel_replay", || {
        // SAFETY: `loc` is NULL or valid (caller's contract).
        let src = unsafe { Loc::new(loc) };
        let rt = crate::openmp::get();
        let Some(id) = rt.check_device(device_id, &src) else { return Ok(crate::abi::OFFLOAD_FAIL) };
        let n = usize::try_from(num_args).map_err(|_| OffloadError::InvalidArgument(format!("negative NumArgs {num_args}")))?;
        let size = usize::try_from(device_memory_size)
            .map_err(|_| OffloadError::InvalidArgument(format!("negative device memory size {device_memory_size}")))?;
        // SAFETY: the arrays and the memory hold the given counts (caller's contract); NULL only with 0.
        let (args, offsets, memory) = unsafe {
            (
                slice(tgt_args as *const *mut c_void, n, "replay arguments")?,
                slice(tgt_offsets as *const isize, n, "replay argument offsets")?,
                slice(device_memory as *const u8, size, "replay device memory")?,
            )
        };
        let params: Vec<u64> = args.iter().zip(offsets).map(|(&a, &o)| (a as u64).wrapping_add(o as u64)).collect();
        let dev = rt.device_or_fatal(id);
        let r = record_replay::replay(
            rt,
            dev,
            host_ptr as usize,
            memory,
            &params,
            num_teams.max(0) as u32,
            thread_limit.max(0) as u32,
            loop_tripcount,
        );
        if let Err(e) = &r {
            crate::base::diag::report(&e.to_string());
        }
        Ok(if r.is_ok() { crate::abi::OFFLOAD_SUCCESS } else { crate::abi::OFFLOAD_FAIL })
    })
}
