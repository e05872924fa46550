//! The entry points of LLVM 23's API whose meaning differs from 22.1's or
//! that 22.1 lacks; the others are 22.1's (`imp`), run in 23's device
//! model ([`super::devices::select_host_model`]: the host plugin is a
//! platform of backend HOST, its devices host devices, no virtual host
//! device). Checks come first, in the order of 23's generated validation.

use super::devices::{self, HOST_BACKEND};
use super::error::{OlResult, err, errc, validation};
use super::handles;
use super::imp;
use super::info::{self, Value, write_out};
use super::types::*;
use core::ffi::c_void;
use parking_lot::Mutex;
use std::sync::atomic::Ordering;

/// Serialises `olInit` and `olShutDown` of this generation (the first
/// `olInit` makes the device model).
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Fork safety: the `olInit` lock.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&INIT_LOCK)
}

pub(crate) fn init(args: InitArgsP) -> OlResult<()> {
    let _serial = INIT_LOCK.lock();
    let count = super::init_count();
    if count.load(Ordering::Acquire) > 0 {
        // Later calls only count (the arguments of the first one hold).
        count.fetch_add(1, Ordering::AcqRel);
        return Ok(());
    }
    let mut requested = Vec::new();
    if !args.is_null() {
        if !(args as usize).is_multiple_of(align_of::<InitArgs>()) {
            return err(errc::INVALID_ARGUMENT, format!("InitArgs {args:p} is misaligned"));
        }
        // SAFETY: non-NULL and aligned; every version of the struct starts with its size.
        let size = unsafe { args.cast::<usize>().read() };
        if size < size_of::<InitArgs>() {
            return err(errc::INVALID_SIZE, "ol_init_args_t Size field is too small");
        }
        // SAFETY: the caller says (Size) that the whole struct is there.
        let a = unsafe { args.read() };
        if a.num_platforms > 0 {
            if a.platforms.is_null() {
                return err(errc::INVALID_NULL_POINTER, "NumPlatforms > 0 but Platforms is null");
            }
            if !(a.platforms as usize).is_multiple_of(align_of::<PlatformBackend>()) {
                return err(errc::INVALID_ARGUMENT, "Platforms is misaligned");
            }
            // SAFETY: non-NULL, aligned, and the caller provides NumPlatforms values (the header's contract).
            let list = unsafe { std::slice::from_raw_parts(a.platforms, a.num_platforms as usize) };
            requested.extend(list.iter().map(|b| b.0));
        }
    }
    super::join_fork_handlers();
    devices::select_host_model(&requested);
    count.fetch_add(1, Ordering::AcqRel);
    Ok(())
}

pub(crate) fn shut_down() -> OlResult<()> {
    let _serial = INIT_LOCK.lock();
    imp::shut_down()
}

/// 23's device-info values: 22.1's, and the three `*_FP_SUPPORT` booleans.
fn device_value(device: DeviceH, prop: DeviceInfo23) -> OlResult<Value> {
    let dev = devices::device(device)?;
    match prop.0 {
        0..=28 => devices::device_info(dev, DeviceInfo(prop.0)),
        29..=31 => {
            let rt = dev.device("olGetDeviceInfo")?;
            let gpu = rt.properties().device_type == crate::plugins::DeviceType::Gpu;
            // x86-64 has no native half-precision arithmetic; GPUs have all three.
            Ok(Value::Bool(prop.0 != 31 || gpu))
        }
        v => err(errc::INVALID_ENUMERATION, format!("getDeviceInfo enum '{v}' is invalid")),
    }
}

pub(crate) fn get_device_info(device: DeviceH, prop: DeviceInfo23, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, size, value, || device_value(device, prop))
}

pub(crate) fn get_device_info_size(device: DeviceH, prop: DeviceInfo23, ret: *mut usize) -> OlResult<()> {
    info::size(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, ret, || device_value(device, prop))
}

/// Refuses a queued copy between two host ends (23 and 21 do: nothing
/// orders a host `memcpy` with the queue's other work).
pub(crate) fn refuse_host_to_host_on_queue(queue: QueueH, dst_dev: DeviceH, src_dev: DeviceH) -> OlResult<()> {
    if queue.is_null() || dst_dev.is_null() || src_dev.is_null() {
        return Ok(());
    }
    let (Ok(d), Ok(s)) = (devices::device(dst_dev), devices::device(src_dev)) else { return Ok(()) };
    if d.platform.backend == HOST_BACKEND && s.platform.backend == HOST_BACKEND {
        return err(errc::INVALID_ARGUMENT, "one of DstDevice and SrcDevice must be a non-host device if Queue is specified");
    }
    Ok(())
}

pub(crate) fn memcpy(queue: QueueH, dst: *mut c_void, dst_dev: DeviceH, src: *const c_void, src_dev: DeviceH, size: usize) -> OlResult<()> {
    if !(dst_dev.is_null() || src_dev.is_null() || dst.is_null() || src.is_null()) {
        refuse_host_to_host_on_queue(queue, dst_dev, src_dev)?;
    }
    imp::memcpy(queue, dst, dst_dev, src, src_dev, size)
}

pub(crate) fn mem_register(device: DeviceH, ptr: *mut c_void, size: usize, flags: u32, locked: *mut *mut c_void) -> OlResult<()> {
    imp::mem_register(device, ptr, size, flags, locked)
}

pub(crate) fn mem_unregister(device: DeviceH, ptr: *mut c_void, _flags: u32) -> OlResult<()> {
    imp::mem_unregister(device, ptr)
}

pub(crate) fn query_queue(queue: QueueH, done: *mut bool) -> OlResult<()> {
    if queue.is_null() {
        return validation(errc::INVALID_NULL_HANDLE, "NULL == Queue");
    }
    let q = handles::queue(queue)?;
    let empty = q.queue.is_empty();
    if !done.is_null() {
        write_out(done, empty)?;
    }
    Ok(())
}

pub(crate) fn get_event_elapsed_time(start: EventH, end: EventH, out: *mut f32) -> OlResult<()> {
    if start.is_null() {
        return validation(errc::INVALID_NULL_HANDLE, "NULL == StartEvent");
    }
    if end.is_null() {
        return validation(errc::INVALID_NULL_HANDLE, "NULL == EndEvent");
    }
    if out.is_null() {
        return validation(errc::INVALID_NULL_POINTER, "NULL == ElapsedTime");
    }
    let (s, e) = (handles::event(start)?, handles::event(end)?);
    if !std::ptr::eq(s.event.device(), e.event.device()) {
        return err(errc::INVALID_DEVICE, "StartEvent and EndEvent must belong to the same device");
    }
    // The time between the points: once both are reached.
    s.event.synchronize()?;
    e.event.synchronize()?;
    let (Some(t0), Some(t1)) = (s.event.completed_at(), e.event.completed_at()) else {
        return err(errc::BACKEND_FAILURE, "an event was reached without a completion time");
    };
    let ms = if t1 >= t0 { t1.duration_since(t0).as_secs_f64() * 1e3 } else { -(t0.duration_since(t1).as_secs_f64() * 1e3) };
    write_out(out, ms as f32)
}

pub(crate) fn platform_register_rpc_callback(platform: PlatformH, callback: RpcCb) -> OlResult<()> {
    if platform.is_null() {
        return validation(errc::INVALID_NULL_HANDLE, "NULL == Platform");
    }
    let Some(cb) = callback else { return validation(errc::INVALID_NULL_POINTER, "NULL == Callback") };
    let p = devices::platform(platform)?;
    crate::device::rpc::register(p.plugin, cb);
    Ok(())
}
