//! Kernel-language launches: what clang 22 emits for CUDA/HIP
//! source compiled with `-foffload-via-llvm`. `kernel<<<grid, block, shmem,
//! stream>>>(args)` becomes `__llvmPushCallConfiguration(grid, block, shmem,
//! stream)` followed by a call of the kernel's host stub, which pops the
//! configuration (`__llvmPopCallConfiguration`) and calls
//! `llvmLaunchKernel(stub, grid, block, &params, shmem, stream)` where
//! `params` is `{ size, packed argument buffer, NULL }`.
//!
//! As in 22.1 the configuration is per thread, the launch goes to device 0
//! and completes before `llvmLaunchKernel` returns (the stream argument is
//! not used), and the return value is 0 for a launch, `u32::MAX` (-1) when
//! offloading is disabled or there is no device (the stub then runs nothing).
//! Unlike 22.1, whose launch struct has Version 0 and so keeps only
//! `grid.x`/`block.x` and drops the dynamic shared memory, the whole 3-D
//! configuration and `shmem` are launched (y and z of 0 mean 1).
//! The argument buffer reaches the plugin as the kernel's parameter buffer
//! ([`Plugin::launch_raw`]): the CUDA plugin launches it; the host and AMDGPU
//! plugins report that they cannot and the failure policy applies.
//!
//! [`Plugin::launch_raw`]: crate::plugins::Plugin::launch_raw

#![allow(non_camel_case_types, non_snake_case)] // dim3 and the exports keep their C names.

use super::boundary::value_entry;
use crate::abi::ptr::Loc;
use crate::plugins::LaunchDims;
use core::cell::Cell;
use core::ffi::c_void;

/// CUDA-style grid dimensions.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `<<<grid, block, shmem, stream>>>` of the next launch on this thread.
#[derive(Debug, Clone, Copy, Default)]
struct CallConfig {
    grid: dim3,
    block: dim3,
    shared_mem: usize,
    stream: usize,
}

thread_local! {
    static CONFIG: Cell<CallConfig> = const { Cell::new(CallConfig { grid: dim3 { x: 0, y: 0, z: 0 }, block: dim3 { x: 0, y: 0, z: 0 }, shared_mem: 0, stream: 0 }) };
}

/// Saves the launch configuration of the next kernel call on this thread. Returns 0.
#[unsafe(no_mangle)]
pub extern "C" fn __llvmPushCallConfiguration(grid: dim3, block: dim3, shared_mem: usize, stream: *mut c_void) -> u32 {
    CONFIG.with(|c| c.set(CallConfig { grid, block, shared_mem, stream: stream as usize }));
    0
}

/// Writes one popped value where the stub asked for it.
///
/// # Safety
/// `dst` is NULL or points to a writable `T`.
unsafe fn put<T>(dst: *mut T, value: T) {
    if !dst.is_null() && (dst as usize).is_multiple_of(align_of::<T>()) {
        // SAFETY: non-NULL, aligned, caller's contract.
        unsafe { dst.write(value) };
    }
}

/// Hands the saved configuration to the kernel's host stub. Returns 0.
///
/// # Safety
/// Each pointer is NULL or writable (`stream` points to a `void *`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __llvmPopCallConfiguration(grid: *mut dim3, block: *mut dim3, shared_mem: *mut usize, stream: *mut c_void) -> u32 {
    let c = CONFIG.with(|c| c.get());
    // SAFETY: forwarded contract.
    unsafe {
        put(grid, c.grid);
        put(block, c.block);
        put(shared_mem, c.shared_mem);
        put(stream.cast::<*mut c_void>(), c.stream as *mut c_void);
    }
    0
}

/// `KernelLaunchParamsTy`: the packed argument buffer clang builds.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelLaunchParams {
    pub size: usize,
    pub data: *mut c_void,
    pub ptrs: *mut *mut c_void,
}

/// Launches the kernel whose host stub is `func` on device 0 and waits.
///
/// # Safety
/// `args` points to a `KernelLaunchParams` whose buffer holds `size`
/// readable bytes laid out as the kernel's parameters.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn llvmLaunchKernel(
    func: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut c_void,
    shared_mem: usize,
    _stream: *mut c_void,
) -> u32 {
    value_entry("llvmLaunchKernel", u32::MAX, || {
        let rt = crate::openmp::get();
        let loc = Loc::none();
        let Some(id) = rt.check_device(0, &loc) else { return Ok(u32::MAX) };
        let args = args as *const KernelLaunchParams;
        if args.is_null() || !(args as usize).is_multiple_of(align_of::<KernelLaunchParams>()) {
            return Err(crate::base::error::OffloadError::InvalidArgument("launch parameters pointer is NULL or misaligned".into()));
        }
        // SAFETY: non-NULL, aligned, caller's contract.
        let p = unsafe { *args };
        // SAFETY: the buffer holds `size` bytes (caller's contract); checked for NULL with a non-zero size.
        let params = unsafe { crate::abi::ptr::slice(p.data as *const u8, p.size, "kernel argument buffer")? };
        let dev = rt.device_or_fatal(id);
        let r = rt.kernel(dev, func as usize).and_then(|k| {
            crate::debug!(
                "llvmLaunchKernel: {} on device {id}: grid {grid:?} block {block:?}, {shared_mem} bytes shared memory, {} argument bytes",
                k.name,
                p.size
            );
            // The wrapper header's dim3 defaults y and z to 0: they mean 1.
            let one = |v: u32| v.max(1);
            let dims = LaunchDims {
                teams: [grid.x, one(grid.y), one(grid.z)],
                threads: [block.x, one(block.y), one(block.z)],
                dyn_shared_bytes: u32::try_from(shared_mem).unwrap_or(u32::MAX),
                tripcount: 0,
            };
            dev.plugin.launch_raw(dev.plugin_device, k.handle, k.name, params, &dims)
        });
        if let Err(e) = &r {
            crate::base::diag::report(&e.to_string());
        }
        rt.handle_outcome(r.is_ok(), &loc);
        Ok(if r.is_ok() { 0 } else { u32::MAX })
    })
}
