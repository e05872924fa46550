//! The entry points of LLVM 21's API whose form differs from 22.1's:
//! `olGetKernel` (a kernel symbol), `olWaitQueue` and `olWaitEvent` (22.1's
//! `olSyncQueue` and `olSyncEvent`), the `EventOut` parameters of `olMemcpy`
//! and `olLaunchKernel`, and 21's device-info numbering. 21's device model
//! is 22.1's (CPU devices, then the virtual host device, the one of backend
//! HOST).

use super::devices;
use super::error::{OlError, OlResult, err, errc, validation};
use super::handles::{self, OlDevice, OlEvent};
use super::imp;
use super::info::{self, Value, write_out};
use super::types::*;
use core::ffi::{c_char, c_void};

/// 21's device-info values, from 22.1's under 21's numbers.
fn device_value(device: DeviceH, prop: DeviceInfo21) -> OlResult<Value> {
    let dev = devices::device(device)?;
    let as22 = match prop.0 {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => 5,
        4 => 6,
        // MAX_WORK_GROUP_SIZE is the per-dimension maximum, an ol_dimensions_t.
        5 => 8,
        v => return err(errc::INVALID_ENUMERATION, format!("getDeviceInfo enum '{v}' is invalid")),
    };
    devices::device_info(dev, DeviceInfo(as22))
}

pub(crate) fn get_device_info(device: DeviceH, prop: DeviceInfo21, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, size, value, || device_value(device, prop))
}

pub(crate) fn get_device_info_size(device: DeviceH, prop: DeviceInfo21, ret: *mut usize) -> OlResult<()> {
    info::size(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, ret, || device_value(device, prop))
}

/// Writes the event of an operation just enqueued (or, without a queue,
/// done) to `out` when it is not NULL.
fn event_out(queue: QueueH, dev: Option<&OlDevice>, out: *mut EventH) -> OlResult<()> {
    if out.is_null() {
        return Ok(());
    }
    if !queue.is_null() {
        return imp::create_event(queue, out);
    }
    // No queue: the operation completed in the call; the event is a point
    // already reached (NULL when no device took part: host to host).
    let Some(rt) = dev.and_then(OlDevice::real) else { return write_out(out, std::ptr::null()) };
    let (h, _) = handles::EVENTS.insert(OlEvent { queue: 0, event: crate::device::work_queue::WorkQueue::new(rt).record() });
    if let Err(e) = write_out(out, h) {
        handles::EVENTS.remove(h);
        return Err(e);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn memcpy(
    queue: QueueH,
    dst: *mut c_void,
    dst_dev: DeviceH,
    src: *const c_void,
    src_dev: DeviceH,
    size: usize,
    out: *mut EventH,
) -> OlResult<()> {
    if !(dst_dev.is_null() || src_dev.is_null() || dst.is_null() || src.is_null()) {
        super::v23::refuse_host_to_host_on_queue(queue, dst_dev, src_dev)?;
    }
    imp::memcpy(queue, dst, dst_dev, src, src_dev, size)?;
    let dev = [dst_dev, src_dev].into_iter().filter_map(|d| devices::device(d).ok()).find(|d| d.real().is_some());
    event_out(queue, dev, out)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn launch_kernel(
    queue: QueueH,
    device: DeviceH,
    kernel: KernelH,
    args: *const c_void,
    args_size: usize,
    sizes: *const LaunchSizeArgs,
    out: *mut EventH,
) -> OlResult<()> {
    imp::launch_kernel(queue, device, kernel, args, args_size, sizes)?;
    event_out(queue, devices::device(device).ok(), out)
}

pub(crate) fn get_kernel(program: ProgramH, name: *const c_char, out: *mut KernelH) -> OlResult<()> {
    if program.is_null() {
        return validation(errc::INVALID_NULL_HANDLE, "NULL == Program");
    }
    if name.is_null() {
        return validation(errc::INVALID_NULL_POINTER, "NULL == KernelName");
    }
    if out.is_null() {
        return validation(errc::INVALID_NULL_POINTER, "NULL == Kernel");
    }
    // 21 has no symbol kinds: what is not a kernel of the program is not found.
    imp::get_symbol(program, name, SymbolKind(0), out)
        .map_err(|e| if e.code == errc::SYMBOL_KIND { OlError { code: errc::NOT_FOUND, details: e.details } } else { e })
}

/// 21's `ol_platform_backend_t` names: it had no `LEVEL_ZERO`, and `HOST` was 3.
const PLATFORM_BACKEND_21_NAMES: &[&str] =
    &["OL_PLATFORM_BACKEND_UNKNOWN", "OL_PLATFORM_BACKEND_CUDA", "OL_PLATFORM_BACKEND_AMDGPU", "OL_PLATFORM_BACKEND_HOST"];

/// 21's platform-info values: 22.1's, with 21's backend numbering.
fn platform_value(platform: PlatformH, prop: PlatformInfo) -> OlResult<Value> {
    let p = devices::platform(platform)?;
    match devices::platform_info(p, prop)? {
        Value::Enum(b, _) => Ok(Value::Enum(if b == devices::HOST_BACKEND { 3 } else { b }, PLATFORM_BACKEND_21_NAMES)),
        v => Ok(v),
    }
}

pub(crate) fn get_platform_info(platform: PlatformH, prop: PlatformInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(platform.is_null(), "Platform", errc::INVALID_NULL_HANDLE, size, value, || platform_value(platform, prop))
}

pub(crate) fn get_platform_info_size(platform: PlatformH, prop: PlatformInfo, ret: *mut usize) -> OlResult<()> {
    info::size(platform.is_null(), "Platform", errc::INVALID_NULL_HANDLE, ret, || platform_value(platform, prop))
}
