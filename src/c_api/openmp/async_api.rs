//! The asynchronous launch path newest rustc emits (not in LLVM 22.1; the
//! signatures of LLVM PR #212862): `__tgt_async_info_create`,
//! `__tgt_target_kernel_async`, `__tgt_async_info_synchronize`,
//! `__tgt_async_info_destroy`. A handle collects the work of one queue; the
//! launch does not wait, synchronisation reports the first failure.
//!
//! A handle keeps one runtime async context per device it launched on: on
//! plugins with queues (CUDA streams, HSA queues) the launch's copies and
//! kernel are queued there and `__tgt_async_info_synchronize` waits for them
//! and runs their clean-up; the host plugin completes every operation before
//! returning, so there only failures are remembered.

use super::boundary::{int_entry, ptr_entry, void_entry};
use crate::abi::{self, __tgt_kernel_arguments, ident_t};
use crate::base::error::{OffloadError, Result};
use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

const ASYNC_TAG: u64 = 0x6f6d_7074_6173_796e;

/// What an async handle points to.
#[derive(Debug)]
pub struct AsyncInfo {
    tag: u64,
    pub device: i64,
    failed: AtomicBool,
    contexts: crate::openmp::constructs::HandleContexts,
}

/// Checks a handle received from C.
///
/// # Safety
/// `h` is NULL or a pointer returned by `__tgt_async_info_create` and not yet destroyed.
unsafe fn handle<'a>(h: *mut c_void) -> Result<&'a AsyncInfo> {
    if h.is_null() || !(h as usize).is_multiple_of(align_of::<AsyncInfo>()) {
        return Err(OffloadError::InvalidArgument("async info handle is NULL or misaligned".into()));
    }
    // SAFETY: non-NULL, aligned; created by `__tgt_async_info_create` (caller's contract).
    let info = unsafe { &*(h as *const AsyncInfo) };
    if info.tag != ASYNC_TAG {
        return Err(OffloadError::InvalidArgument("not an async info handle of this runtime".into()));
    }
    Ok(info)
}

/// Creates an async handle for `device` (`-1` = the default device).
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_async_info_create(device: i64) -> *mut c_void {
    ptr_entry("__tgt_async_info_create", || {
        Ok(Box::into_raw(Box::new(AsyncInfo { tag: ASYNC_TAG, device, failed: AtomicBool::new(false), contexts: Default::default() }))
            .cast())
    })
}

/// Waits for the handle's work; 0 when it all succeeded (and for NULL).
///
/// # Safety
/// `async_info` is NULL or a live handle from `__tgt_async_info_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_async_info_synchronize(async_info: *mut c_void) -> i32 {
    int_entry("__tgt_async_info_synchronize", || {
        if async_info.is_null() {
            return Ok(abi::OFFLOAD_SUCCESS);
        }
        // SAFETY: forwarded contract.
        let info = unsafe { handle(async_info)? };
        let mut failed = info.failed.swap(false, Ordering::AcqRel);
        for mut ctx in std::mem::take(&mut *info.contexts.lock()) {
            if let Err(e) = ctx.synchronize() {
                crate::base::diag::report(&e.to_string());
                failed = true;
            }
        }
        Ok(if failed { abi::OFFLOAD_FAIL } else { abi::OFFLOAD_SUCCESS })
    })
}

/// Synchronises and frees a handle. NULL is ignored.
///
/// # Safety
/// `async_info` is NULL or a live handle from `__tgt_async_info_create`; it
/// must not be used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_async_info_destroy(async_info: *mut c_void) {
    void_entry("__tgt_async_info_destroy", || {
        if async_info.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract; checked before taking ownership back.
        unsafe { handle(async_info)? };
        // SAFETY: created by Box::into_raw in `__tgt_async_info_create`, destroyed once.
        drop(unsafe { Box::from_raw(async_info as *mut AsyncInfo) });
        Ok(())
    })
}

/// Launches like `__tgt_target_kernel` without waiting for completion; the
/// result is collected by `__tgt_async_info_synchronize`. A NULL handle
/// launches synchronously.
///
/// # Safety
/// As `__tgt_target_kernel`; `async_info` is NULL or a live handle.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_kernel_async")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_kernel_async(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
    async_info: *mut c_void,
) -> i32 {
    int_entry("__tgt_target_kernel_async", || {
        let info = if async_info.is_null() {
            None
        } else {
            // SAFETY: forwarded contract.
            Some(unsafe { handle(async_info)? })
        };
        // SAFETY: forwarded contract.
        let rc = unsafe {
            crate::openmp::constructs::target_kernel(
                "__tgt_target_kernel_async",
                loc,
                device_id,
                num_teams,
                thread_limit,
                host_ptr,
                args,
                info.map(|i| &i.contexts),
            )
        };
        if rc != abi::OFFLOAD_SUCCESS
            && let Some(info) = info
        {
            info.failed.store(true, Ordering::Release);
        }
        Ok(rc)
    })
}
