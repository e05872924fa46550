//! The `omp_*` / `llvm_omp_*` device API exports (abi-reference §1.3.6,
//! §1.3.7, §9). Shims over `openmp::device_api`.

use super::boundary::{int_entry, ptr_entry, value_entry, void_entry};
use crate::abi::{self, omp_depend_t, ptr};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::openmp;
use crate::plugins::AllocKind;
use core::ffi::{c_char, c_int, c_void};

/// Number of offload devices.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_num_devices() -> c_int {
    value_entry("omp_get_num_devices", 0, || Ok(openmp::get().num_devices() as c_int))
}

/// Same as `omp_get_num_devices`; libomp looks this name up first, so its
/// own `omp_get_num_devices` reaches this runtime whatever the load order.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_get_num_devices() -> c_int {
    omp_get_num_devices()
}

/// The initial (host) device number, equal to the number of devices.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_initial_device() -> c_int {
    omp_get_num_devices()
}

/// On the host: the initial device number.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_device_num() -> c_int {
    omp_get_initial_device()
}

/// Allocates device memory (NULL for size 0 or on failure).
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_alloc")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub extern "C" fn omp_target_alloc(size: usize, device_num: c_int) -> *mut c_void {
    // A panic in the fast path (none is expected) is reported and the
    // general path runs.
    let mut fast = core::ptr::null_mut();
    if super::boundary::fast_path("omp_target_alloc", || {
        fast = openmp::device_api::alloc_fast(size, i64::from(device_num)) as *mut c_void;
        !fast.is_null()
    }) {
        return fast;
    }
    alloc_general(size, device_num)
}

/// `omp_target_alloc`'s general path, out of line: the fast path's frame stays small.
#[inline(never)]
fn alloc_general(size: usize, device_num: c_int) -> *mut c_void {
    ptr_entry("omp_target_alloc", || Ok(openmp::get().target_alloc(size, device_num as i64, AllocKind::Default) as *mut c_void))
}

/// Frees memory from `omp_target_alloc`.
///
/// # Safety
/// `device_ptr` is NULL or was returned by `omp_target_alloc` for `device_num`.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_free")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_free(device_ptr: *mut c_void, device_num: c_int) {
    // A panic in the fast path (none is expected) is reported and the
    // general path runs.
    if super::boundary::fast_path("omp_target_free", || openmp::device_api::free_fast(device_ptr as usize, i64::from(device_num))) {
        return;
    }
    free_general(device_ptr, device_num)
}

/// `omp_target_free`'s general path, out of line: the fast path's frame stays small.
#[inline(never)]
fn free_general(device_ptr: *mut c_void, device_num: c_int) {
    void_entry("omp_target_free", || {
        openmp::get().target_free(device_ptr as usize, device_num as i64, AllocKind::Default);
        Ok(())
    })
}

/// Allocates device memory (LLVM extension); NULL for size 0 or on failure.
#[unsafe(export_name = "__omptarget_rs_impl_llvm_omp_target_alloc_device")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub extern "C" fn llvm_omp_target_alloc_device(size: usize, device_num: c_int) -> *mut c_void {
    ptr_entry("llvm_omp_target_alloc_device", || Ok(openmp::get().target_alloc(size, device_num as i64, AllocKind::Device) as *mut c_void))
}

/// Frees memory from `llvm_omp_target_alloc_device`.
///
/// # Safety
/// `ptr` is NULL or was returned by `llvm_omp_target_alloc_device` for `device_num`.
#[unsafe(export_name = "__omptarget_rs_impl_llvm_omp_target_free_device")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn llvm_omp_target_free_device(ptr: *mut c_void, device_num: c_int) {
    void_entry("llvm_omp_target_free_device", || {
        openmp::get().target_free(ptr as usize, device_num as i64, AllocKind::Device);
        Ok(())
    })
}

/// Allocates pinned host memory (LLVM extension); NULL for size 0 or on failure.
#[unsafe(export_name = "__omptarget_rs_impl_llvm_omp_target_alloc_host")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub extern "C" fn llvm_omp_target_alloc_host(size: usize, device_num: c_int) -> *mut c_void {
    ptr_entry("llvm_omp_target_alloc_host", || Ok(openmp::get().target_alloc(size, device_num as i64, AllocKind::Host) as *mut c_void))
}

/// Frees memory from `llvm_omp_target_alloc_host`.
///
/// # Safety
/// `ptr` is NULL or was returned by `llvm_omp_target_alloc_host` for `device_num`.
#[unsafe(export_name = "__omptarget_rs_impl_llvm_omp_target_free_host")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn llvm_omp_target_free_host(ptr: *mut c_void, device_num: c_int) {
    void_entry("llvm_omp_target_free_host", || {
        openmp::get().target_free(ptr as usize, device_num as i64, AllocKind::Host);
        Ok(())
    })
}

/// Allocates managed (shared) memory (LLVM extension); NULL for size 0 or on failure.
#[unsafe(export_name = "__omptarget_rs_impl_llvm_omp_target_alloc_shared")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub extern "C" fn llvm_omp_target_alloc_shared(size: usize, device_num: c_int) -> *mut c_void {
    ptr_entry("llvm_omp_target_alloc_shared", || Ok(openmp::get().target_alloc(size, device_num as i64, AllocKind::Shared) as *mut c_void))
}

/// Frees memory from `llvm_omp_target_alloc_shared`.
///
/// # Safety
/// `ptr` is NULL or was returned by `llvm_omp_target_alloc_shared` for `device_num`.
#[unsafe(export_name = "__omptarget_rs_impl_llvm_omp_target_free_shared")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn llvm_omp_target_free_shared(ptr: *mut c_void, device_num: c_int) {
    void_entry("llvm_omp_target_free_shared", || {
        openmp::get().target_free(ptr as usize, device_num as i64, AllocKind::Shared);
        Ok(())
    })
}

/// 1 when `ptr` is mapped on the device.
#[unsafe(no_mangle)]
pub extern "C" fn omp_target_is_present(ptr: *const c_void, device_num: c_int) -> c_int {
    value_entry("omp_target_is_present", 0, || Ok(openmp::get().target_is_present(ptr as usize, device_num as i64) as c_int))
}

/// 1 when the device can access the host range directly.
#[unsafe(no_mangle)]
pub extern "C" fn omp_target_is_accessible(ptr: *const c_void, size: usize, device_num: c_int) -> c_int {
    value_entry("omp_target_is_accessible", 0, || Ok(openmp::get().target_is_accessible(ptr as usize, size, device_num as i64) as c_int))
}

/// Copies between host and device memory.
///
/// # Safety
/// `dst`/`src` (plus offsets) address `length` bytes on their devices.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_memcpy")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    int_entry("omp_target_memcpy", || {
        Ok(openmp::get().target_memcpy(dst as usize, src as usize, length, dst_offset, src_offset, dst_device as i64, src_device as i64))
    })
}

/// Copies a rectangular sub-volume.
///
/// # Safety
/// The arrays hold `num_dims` elements; the buffers cover the described volumes.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_memcpy_rect")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_memcpy_rect(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device: c_int,
    src_device: c_int,
) -> c_int {
    int_entry("omp_target_memcpy_rect", || {
        if dst.is_null() && src.is_null() {
            return Ok(c_int::MAX);
        }
        let invalid = || {
            diag::report("Call to omp_target_memcpy_rect with invalid arguments");
            Ok(-1)
        };
        if element_size == 0 || num_dims <= 0 || dst.is_null() || src.is_null() {
            return invalid();
        }
        let n = num_dims as usize;
        let arrays = [volume, dst_offsets, src_offsets, dst_dimensions, src_dimensions];
        if arrays.iter().any(|a| a.is_null()) {
            return invalid();
        }
        // SAFETY: each array holds `num_dims` elements (caller's contract).
        let s: Vec<&[usize]> = arrays.iter().map(|&a| unsafe { ptr::slice(a, n, "memcpy_rect array") }).collect::<Result<_>>()?;
        let rt = openmp::get();
        let (_, _) = (rt.api_target(dst_device as i64), rt.api_target(src_device as i64));
        Ok(rt.target_memcpy_rect(
            dst as usize,
            src as usize,
            element_size,
            s[0],
            s[1],
            s[2],
            s[3],
            s[4],
            dst_device as i64,
            src_device as i64,
        ))
    })
}

/// Orders an `_async` operation after its depend objects: waits for the
/// tasks they name, then the caller performs the operation before returning
/// (a valid schedule of the task the API describes).
///
/// # Safety
/// `list` is NULL or holds `count` depend objects initialised by `depobj`.
unsafe fn wait_for_depobjs(name: &'static str, count: c_int, list: *mut omp_depend_t) -> Result<()> {
    if count <= 0 {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    let objs = unsafe { ptr::slice(list as *const omp_depend_t, count as usize, "depend object list")? };
    // SAFETY: forwarded contract.
    if unsafe { crate::base::libomp::wait_depobjs(objs) } {
        Ok(())
    } else {
        Err(OffloadError::NotImplemented(match name {
            "omp_target_memcpy_async" => "omp_target_memcpy_async with depend objects without libomp",
            "omp_target_memcpy_rect_async" => "omp_target_memcpy_rect_async with depend objects without libomp",
            _ => "omp_target_memset_async with depend objects without libomp",
        }))
    }
}

/// The depend objects of an `_async` call.
///
/// # Safety
/// `list` is NULL or holds `count` depend objects.
unsafe fn depobjs<'a>(count: c_int, list: *mut omp_depend_t) -> Result<&'a [omp_depend_t]> {
    if count <= 0 {
        return Ok(&[]);
    }
    // SAFETY: forwarded contract.
    unsafe { ptr::slice(list as *const omp_depend_t, count as usize, "depend object list") }
}

/// Runs an `_async` operation as libomp does for LLVM 22.1: in a hidden-helper
/// task after the depend objects' tasks (`taskwait` waits for it); without
/// libomp, here after waiting for them. `now` is the synchronous form.
///
/// # Safety
/// As [`wait_for_depobjs`]; the operation's memory stays valid until the task ran.
unsafe fn run_async(
    name: &'static str,
    count: c_int,
    list: *mut omp_depend_t,
    task: Box<dyn FnOnce() + Send>,
    now: impl FnOnce() -> c_int,
) -> Result<c_int> {
    // SAFETY: forwarded contract.
    let objs = unsafe { depobjs(count, list)? };
    // SAFETY: forwarded contract.
    match unsafe { crate::abi::omp_task::spawn(task, objs) } {
        Ok(rc) => Ok(rc),
        Err(_not_run) => {
            // SAFETY: forwarded contract.
            unsafe { wait_for_depobjs(name, count, list)? };
            Ok(now())
        }
    }
}

/// Asynchronous copy: a task after the depend objects' tasks (see
/// [`run_async`]). Returns -1 for a NULL pointer, else the task creation's
/// result; copy errors are reported by the task.
///
/// # Safety
/// As `omp_target_memcpy`; the memory stays valid until the task completes.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_memcpy_async")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device: c_int,
    src_device: c_int,
    depobj_count: c_int,
    depobj_list: *mut omp_depend_t,
) -> c_int {
    int_entry("omp_target_memcpy_async", || {
        if dst.is_null() || src.is_null() {
            return Ok(abi::OFFLOAD_FAIL);
        }
        let (d, s) = (dst as usize, src as usize);
        let copy = move || {
            // SAFETY: forwarded contract.
            unsafe { omp_target_memcpy(d as *mut c_void, s as *const c_void, length, dst_offset, src_offset, dst_device, src_device) }
        };
        let task = Box::new(move || {
            copy();
        });
        // SAFETY: forwarded contract.
        unsafe { run_async("omp_target_memcpy_async", depobj_count, depobj_list, task, copy) }
    })
}

/// Asynchronous rectangular copy: a task (see [`run_async`]) with its own
/// copies of the shape arrays. `INT_MAX` for two NULL pointers (the query
/// form), -1 for invalid arguments.
///
/// # Safety
/// As `omp_target_memcpy_rect`; the memory stays valid until the task completes.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_memcpy_rect_async")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_memcpy_rect_async(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device: c_int,
    src_device: c_int,
    depobj_count: c_int,
    depobj_list: *mut omp_depend_t,
) -> c_int {
    int_entry("omp_target_memcpy_rect_async", || {
        if dst.is_null() && src.is_null() {
            return Ok(c_int::MAX);
        }
        let arrays = [volume, dst_offsets, src_offsets, dst_dimensions, src_dimensions];
        if dst.is_null() || src.is_null() || element_size == 0 || num_dims <= 0 || arrays.iter().any(|a| a.is_null()) {
            return Ok(abi::OFFLOAD_FAIL);
        }
        let n = num_dims as usize;
        let shape: Vec<Vec<usize>> =
            // SAFETY: each array holds `num_dims` elements (caller's contract); copied because the caller may reuse them before the task runs.
            arrays.iter().map(|&a| unsafe { ptr::slice(a, n, "memcpy_rect array") }.map(<[usize]>::to_vec)).collect::<Result<_>>()?;
        let (d, s) = (dst as usize, src as usize);
        let copy = move || {
            // SAFETY: forwarded contract; `shape` holds `num_dims` elements per array.
            unsafe {
                omp_target_memcpy_rect(
                    d as *mut c_void,
                    s as *const c_void,
                    element_size,
                    num_dims,
                    shape[0].as_ptr(),
                    shape[1].as_ptr(),
                    shape[2].as_ptr(),
                    shape[3].as_ptr(),
                    shape[4].as_ptr(),
                    dst_device,
                    src_device,
                )
            }
        };
        let shared = std::sync::Arc::new(parking_lot::Mutex::new(Some(copy)));
        let in_task = shared.clone();
        let task = Box::new(move || {
            if let Some(copy) = in_task.lock().take() {
                copy();
            }
        });
        let now = move || shared.lock().take().map_or(abi::OFFLOAD_FAIL, |copy| copy());
        // SAFETY: forwarded contract.
        unsafe { run_async("omp_target_memcpy_rect_async", depobj_count, depobj_list, task, now) }
    })
}

/// Fills device memory; returns `ptr`.
///
/// # Safety
/// `ptr` addresses `num_bytes` bytes on `device_num`.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_memset")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_memset(ptr: *mut c_void, byte_val: c_int, num_bytes: usize, device_num: c_int) -> *mut c_void {
    void_entry("omp_target_memset", || {
        openmp::get().target_memset(ptr as usize, byte_val, num_bytes, device_num as i64);
        Ok(())
    });
    ptr
}

/// Asynchronous fill: a task (see [`run_async`]); returns `ptr`. A NULL
/// pointer or zero bytes is a no-op, as in 22.1.
///
/// # Safety
/// As `omp_target_memset`; the memory stays valid until the task completes.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_memset_async")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn omp_target_memset_async(
    ptr: *mut c_void,
    byte_val: c_int,
    num_bytes: usize,
    device_num: c_int,
    depobj_count: c_int,
    depobj_list: *mut omp_depend_t,
) -> *mut c_void {
    ptr_entry("omp_target_memset_async", || {
        if ptr.is_null() || num_bytes == 0 {
            return Ok(ptr);
        }
        let p = ptr as usize;
        let fill = move || {
            // SAFETY: forwarded contract.
            unsafe { omp_target_memset(p as *mut c_void, byte_val, num_bytes, device_num) };
            0
        };
        let task = Box::new(move || {
            fill();
        });
        // SAFETY: forwarded contract.
        unsafe { run_async("omp_target_memset_async", depobj_count, depobj_list, task, fill)? };
        Ok(ptr)
    })
}

/// Associates a device buffer with a host address.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_associate_ptr")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub extern "C" fn omp_target_associate_ptr(
    host_ptr: *const c_void,
    device_ptr: *const c_void,
    size: usize,
    device_offset: usize,
    device_num: c_int,
) -> c_int {
    int_entry("omp_target_associate_ptr", || {
        Ok(openmp::get().associate_ptr(host_ptr as usize, device_ptr as usize, size, device_offset, device_num as i64))
    })
}

/// Removes an association made by `omp_target_associate_ptr`.
#[unsafe(export_name = "__omptarget_rs_impl_omp_target_disassociate_ptr")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub extern "C" fn omp_target_disassociate_ptr(host_ptr: *const c_void, device_num: c_int) -> c_int {
    int_entry("omp_target_disassociate_ptr", || Ok(openmp::get().disassociate_ptr(host_ptr as usize, device_num as i64)))
}

/// The device address mapped to `ptr`, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_mapped_ptr(ptr: *const c_void, device_num: c_int) -> *mut c_void {
    ptr_entry("omp_get_mapped_ptr", || Ok(openmp::get().get_mapped_ptr(ptr as usize, device_num as i64) as *mut c_void))
}

/// The UID string of a device (a static string; never freed).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_uid_from_device(device_num: c_int) -> *const c_char {
    ptr_entry("omp_get_uid_from_device", || {
        let uid = openmp::get().uid_of(device_num as i64);
        Ok(crate::base::intern::intern_uid(uid).as_ptr() as *mut c_char)
    })
}

/// The device number of a UID, or `omp_invalid_device`.
///
/// # Safety
/// `device_uid` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_device_from_uid(device_uid: *const c_char) -> c_int {
    value_entry("omp_get_device_from_uid", crate::abi::OMP_INVALID_DEVICE, || {
        // SAFETY: forwarded contract.
        match unsafe { ptr::c_string(device_uid) } {
            None => Ok(crate::abi::OMP_INVALID_DEVICE),
            Some(uid) => Ok(openmp::get().device_of_uid(&uid)),
        }
    })
}

/// Page-locks host memory for faster transfers; the host plugin needs none.
#[unsafe(no_mangle)]
pub extern "C" fn llvm_omp_target_lock_mem(ptr: *mut c_void, size: usize, device_num: c_int) -> *mut c_void {
    ptr_entry("llvm_omp_target_lock_mem", || {
        let _ = (size, openmp::get().api_target(device_num as i64));
        Ok(ptr)
    })
}

/// Undoes `llvm_omp_target_lock_mem`.
#[unsafe(no_mangle)]
pub extern "C" fn llvm_omp_target_unlock_mem(ptr: *mut c_void, device_num: c_int) {
    void_entry("llvm_omp_target_unlock_mem", || {
        let _ = (ptr, openmp::get().api_target(device_num as i64));
        Ok(())
    })
}

/// Host stub of the device-side dynamic shared memory query: NULL.
#[unsafe(no_mangle)]
pub extern "C" fn llvm_omp_target_dynamic_shared_alloc() -> *mut c_void {
    core::ptr::null_mut()
}

/// Prints every device's mapping table to stdout.
#[unsafe(no_mangle)]
pub extern "C" fn ompx_dump_mapping_tables() {
    void_entry("ompx_dump_mapping_tables", || {
        openmp::get().dump_tables("libomptarget:0:0", true);
        Ok(())
    })
}

/// Prints the plugin's description of a device; returns 1.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_print_device_info(device_id: i64) -> c_int {
    value_entry("__tgt_print_device_info", 1, || {
        openmp::get().print_device_info(device_id)?;
        Ok(1)
    })
}

/// Sets the `LIBOMPTARGET_INFO` mask at run time.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_set_info_flag(new_info_level: u32) {
    crate::base::config().set_info(new_info_level);
}
