//! The inner code of every `ol*` entry point, in the order of the
//! declaration list. Each function checks its arguments in the order 22.1's
//! header lists the conditions (the generated validation 22.1 runs first),
//! then resolves handles through [`handles`], then acts on the device
//! layer: memory through its allocation table (shared with OpenMP), work on
//! queues through its work queues, programs through its programs.

use super::devices;
use super::error::{OlError, OlResult, err, errc, validation};
use super::handles::{self, OlDevice, OlEvent, OlProgram, OlQueue, OlSymbol};
use super::info::{self, Value, write_out};
use super::types::*;
use crate::device::Device;
use crate::device::memory::{self, Origin};
use crate::device::program::{Program, SymbolKind as Kind};
use crate::device::queue::Queue;
use crate::plugins::{AllocKind, LaunchDims};
use core::ffi::{CStr, c_char, c_void};
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

fn null_handle<T>(what: &str) -> OlResult<T> {
    validation(errc::INVALID_NULL_HANDLE, &format!("NULL == {what}"))
}

fn null_pointer<T>(what: &str) -> OlResult<T> {
    validation(errc::INVALID_NULL_POINTER, &format!("NULL == {what}"))
}

/// Bytes from C: `ptr` is non-NULL (checked by the caller).
fn bytes<'a>(ptr: *const c_void, len: usize) -> OlResult<&'a [u8]> {
    if isize::try_from(len).is_err() {
        return err(errc::INVALID_SIZE, format!("size {len} is too large"));
    }
    // SAFETY: non-NULL (checked by every caller) and the header makes the caller provide `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

// ---- Init, devices, platforms -------------------------------------------

pub(crate) fn init() -> OlResult<()> {
    super::join_fork_handlers();
    devices::topology();
    super::init_count().fetch_add(1, Ordering::AcqRel);
    Ok(())
}

pub(crate) fn shut_down() -> OlResult<()> {
    let before = super::init_count().fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1));
    if before == Ok(1) {
        // The last olShutDown: queued work finishes (or, stuck for a
        // minute, is cancelled) before the API is closed.
        crate::device::work_queue::shutdown(std::time::Duration::from_secs(60));
    }
    Ok(())
}

pub(crate) fn iterate_devices(callback: IterateCb, user_data: *mut c_void) -> OlResult<()> {
    let Some(cb) = callback else { return null_pointer("Callback") };
    for d in &devices::topology().devices {
        // SAFETY: a callback from the caller with the header's signature; the handle is a live device.
        if !unsafe { cb(*d as *const OlDevice, user_data) } {
            break;
        }
    }
    Ok(())
}

pub(crate) fn get_device_info(device: DeviceH, prop: DeviceInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, size, value, || devices::device_info(devices::device(device)?, prop))
}

pub(crate) fn get_device_info_size(device: DeviceH, prop: DeviceInfo, ret: *mut usize) -> OlResult<()> {
    info::size(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, ret, || devices::device_info(devices::device(device)?, prop))
}

pub(crate) fn get_platform_info(platform: PlatformH, prop: PlatformInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(platform.is_null(), "Platform", errc::INVALID_NULL_HANDLE, size, value, || {
        devices::platform_info(devices::platform(platform)?, prop)
    })
}

pub(crate) fn get_platform_info_size(platform: PlatformH, prop: PlatformInfo, ret: *mut usize) -> OlResult<()> {
    info::size(platform.is_null(), "Platform", errc::INVALID_NULL_HANDLE, ret, || {
        devices::platform_info(devices::platform(platform)?, prop)
    })
}

// ---- Memory ---------------------------------------------------------------

/// `olMemRegister` ranges: (device number, base) → (size, registrations).
static REGISTERED: Mutex<BTreeMap<(usize, usize), (usize, usize)>> = Mutex::new(BTreeMap::new());

/// Fork safety: the registration table.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&REGISTERED)
}

fn alloc_kind(t: AllocType) -> OlResult<AllocKind> {
    match t.0 {
        0 => Ok(AllocKind::Host),
        1 => Ok(AllocKind::Device),
        2 => Ok(AllocKind::Shared),
        v => err(errc::INVALID_ENUMERATION, format!("unknown ol_alloc_type_t value {v}")),
    }
}

fn alloc_type(k: AllocKind) -> AllocType {
    AllocType(match k {
        AllocKind::Host => 0,
        AllocKind::Shared => 2,
        AllocKind::Device | AllocKind::Default => 1,
    })
}

pub(crate) fn mem_alloc(device: DeviceH, ty: AllocType, size: usize, out: *mut *mut c_void) -> OlResult<()> {
    if size == 0 {
        return validation(errc::INVALID_SIZE, "Size == 0");
    }
    if device.is_null() {
        return null_handle("Device");
    }
    if out.is_null() {
        return null_pointer("AllocationOut");
    }
    let dev = devices::device(device)?;
    let kind = alloc_kind(ty)?;
    let rt = dev.device("olMemAlloc")?;
    let ptr = memory::allocate(rt, size as u64, kind, Origin::Offload)?;
    if let Err(e) = write_out(out, ptr as usize as *mut c_void) {
        let _ = memory::deallocate(ptr);
        return Err(e);
    }
    Ok(())
}

pub(crate) fn mem_free(address: *mut c_void) -> OlResult<()> {
    if address.is_null() {
        return null_pointer("Address");
    }
    memory::deallocate(address as u64).map_err(|e| OlError {
        code: errc::INVALID_ARGUMENT,
        details: match e {
            crate::base::error::OffloadError::InvalidArgument(_) => format!("{address:p} is not the start of a live allocation"),
            other => other.to_string(),
        },
    })?;
    Ok(())
}

fn mem_value(ptr: *const c_void, prop: MemInfo) -> OlResult<Value> {
    let Some(a) = memory::allocation_containing(ptr as u64) else {
        return err(errc::NOT_FOUND, format!("{ptr:p}: memory was not allocated by liboffload"));
    };
    let dev = crate::device::registry().get(a.device).and_then(devices::device_of);
    Ok(match prop.0 {
        0 => Value::Ptr(dev.map_or(0, |d| d as *const OlDevice as usize)),
        1 => Value::Ptr(a.base as usize),
        2 => Value::Usize(a.size as usize),
        3 => Value::Enum(alloc_type(a.kind).0, ALLOC_TYPE_NAMES),
        v => return err(errc::INVALID_ENUMERATION, format!("getMemInfo enum '{v}' is invalid")),
    })
}

pub(crate) fn get_mem_info(ptr: *const c_void, prop: MemInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(ptr.is_null(), "Ptr", errc::INVALID_NULL_POINTER, size, value, || mem_value(ptr, prop))
}

pub(crate) fn get_mem_info_size(ptr: *const c_void, prop: MemInfo, ret: *mut usize) -> OlResult<()> {
    info::size(ptr.is_null(), "Ptr", errc::INVALID_NULL_POINTER, ret, || mem_value(ptr, prop))
}

/// An optional queue: checked when given.
fn opt_queue(queue: QueueH) -> OlResult<Option<Arc<OlQueue>>> {
    if queue.is_null() { Ok(None) } else { handles::queue(queue).map(Some) }
}

/// Checks that `[ptr, ptr+len)` may be touched on `dev`. Only devices
/// whose memory is host memory are checked (the runtime itself would read
/// or write it): the range must lie inside one live allocation of the
/// allocation table or one live program's global. GPU drivers check their
/// own pointers.
fn check_range(dev: &Device, ptr: usize, len: usize, what: &str) -> OlResult<()> {
    if !dev.memory_is_host() || len == 0 {
        return Ok(());
    }
    let (p, n) = (ptr as u64, len as u64);
    if let Some(a) = memory::allocation_containing(p) {
        let same_memory = crate::device::registry().get(a.device).is_some_and(|d| std::ptr::addr_eq(d.plugin, dev.plugin));
        if same_memory && a.contains(p, n) {
            return Ok(());
        }
        if same_memory {
            return err(
                errc::INVALID_ARGUMENT,
                format!(
                    "{what} [{ptr:#x}, +{len}) extends past the end of its allocation [{:#x}, +{}) on device {}",
                    a.base, a.size, a.device
                ),
            );
        }
    }
    if crate::device::program::in_live_global(dev.id, p, n) {
        return Ok(());
    }
    err(errc::INVALID_ARGUMENT, format!("{what} [{ptr:#x}, +{len}) is not inside a live allocation or global of device {}", dev.id))
}

/// One side of a copy: a device, or host memory (the virtual host device).
#[derive(Clone, Copy)]
enum End {
    Host,
    Device(&'static Device),
}

fn end_of(d: &OlDevice) -> End {
    match d.real() {
        Some(dev) => End::Device(dev),
        None => End::Host,
    }
}

/// Copies `size` bytes; on `q`'s device through `q` (queued where the plugin queues).
///
/// # Safety
/// Host ends are `size` bytes of memory the caller keeps valid until the copy
/// completed; device ends were checked with [`check_range`].
unsafe fn copy(q: &mut Queue, dst: End, d: usize, src: End, s: usize, size: usize) -> crate::base::error::Result<()> {
    let n = size as u64;
    match (dst, src) {
        (End::Host, End::Host) => {
            // SAFETY: the caller's contract; `copy` allows overlap.
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, size) };
            Ok(())
        }
        (End::Host, End::Device(sd)) if std::ptr::eq(sd, q.dev) => {
            // SAFETY: the caller's contract.
            unsafe { q.retrieve(d, s as u64, n) }
        }
        (End::Host, End::Device(sd)) => {
            // SAFETY: the caller's contract.
            unsafe { sd.retrieve(d, s as u64, n) }
        }
        (End::Device(dd), End::Host) if std::ptr::eq(dd, q.dev) => {
            // SAFETY: the caller's contract.
            unsafe { q.submit(d as u64, s, n) }
        }
        (End::Device(dd), End::Host) => {
            // SAFETY: the caller's contract.
            unsafe { dd.submit(d as u64, s, n) }
        }
        (End::Device(dd), End::Device(sd)) => {
            // Device-to-device copies run synchronously: let queued work land first.
            q.drain()?;
            dd.exchange_from(sd, s as u64, d as u64, n)
        }
    }
}

/// Runs device work now, on a queue of its own that is waited for (the
/// calls without a queue are synchronous).
fn run_now(dev: &'static Device, work: impl FnOnce(&mut Queue) -> crate::base::error::Result<()>) -> OlResult<()> {
    let mut q = Queue::new(dev);
    let r = work(&mut q);
    let s = q.synchronize();
    r.and(s)?;
    Ok(())
}

pub(crate) fn memcpy(queue: QueueH, dst: *mut c_void, dst_dev: DeviceH, src: *const c_void, src_dev: DeviceH, size: usize) -> OlResult<()> {
    if dst_dev.is_null() {
        return null_handle("DstDevice");
    }
    if src_dev.is_null() {
        return null_handle("SrcDevice");
    }
    if dst.is_null() {
        return null_pointer("DstPtr");
    }
    if src.is_null() {
        return null_pointer("SrcPtr");
    }
    let q = opt_queue(queue)?;
    let (dd, sd) = (devices::device(dst_dev)?, devices::device(src_dev)?);
    if size == 0 {
        return Ok(());
    }
    if isize::try_from(size).is_err() {
        return err(errc::INVALID_SIZE, format!("Size {size} is too large"));
    }
    let (d, s) = (dst as usize, src as usize);
    if let Some(dev) = dd.real() {
        check_range(dev, d, size, "DstPtr")?;
    }
    if let Some(dev) = sd.real() {
        check_range(dev, s, size, "SrcPtr")?;
    }
    let (de, se) = (end_of(dd), end_of(sd));
    let Some(q) = q else {
        // Synchronous: on a device end's queue, or plain memory for host to host.
        let dev = dd.real().or(sd.real());
        return match dev {
            // SAFETY: the ends are the caller's memory of `size` bytes (the header's contract) or checked device ranges; waited for before returning.
            Some(dev) => run_now(dev, |q| unsafe { copy(q, de, d, se, s, size) }),
            None => {
                // SAFETY: both are host memory of `size` bytes (the header's contract); `copy` allows overlap.
                unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
                Ok(())
            }
        };
    };
    q.queue.enqueue(Box::new(move |wq: &mut Queue| {
        // SAFETY: the caller keeps the host ends valid until the queue passes this copy (the header's contract for queued copies); device ends were checked.
        unsafe { copy(wq, de, d, se, s, size) }
    }))?;
    Ok(())
}

pub(crate) fn mem_fill(queue: QueueH, ptr: *mut c_void, pattern_size: usize, pattern: *const c_void, fill_size: usize) -> OlResult<()> {
    if pattern_size == 0 {
        return validation(errc::INVALID_SIZE, "PatternSize == 0");
    }
    if !fill_size.is_multiple_of(pattern_size) {
        return validation(errc::INVALID_SIZE, "FillSize % PatternSize != 0");
    }
    if ptr.is_null() {
        return null_pointer("Ptr");
    }
    if pattern.is_null() {
        return null_pointer("PatternPtr");
    }
    let q = opt_queue(queue)?;
    let dev: Option<&'static Device> = match &q {
        Some(q) => q.device.real(),
        None => match memory::allocation_containing(ptr as u64) {
            Some(a) => crate::device::registry().get(a.device),
            None => return err(errc::NOT_FOUND, format!("{ptr:p}: olMemFill without a queue needs memory from olMemAlloc")),
        },
    };
    let pat = bytes(pattern, pattern_size)?.to_vec();
    if fill_size == 0 {
        return Ok(());
    }
    let p = ptr as usize;
    let Some(dev) = dev else {
        // The virtual host device's queue: host memory of `fill_size` bytes.
        let fill = move || {
            // SAFETY: host memory of `fill_size` bytes (the caller's contract).
            let dst = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, fill_size) };
            dst.chunks_mut(pattern_size).for_each(|c| c.copy_from_slice(&pat[..c.len()]));
        };
        fill();
        return Ok(());
    };
    check_range(dev, p, fill_size, "Ptr")?;
    let work = move |wq: &mut Queue| {
        wq.drain()?;
        wq.dev.fill(p as u64, &pat, fill_size as u64)
    };
    match q {
        Some(q) => q.queue.enqueue(Box::new(work))?,
        None => run_now(dev, work)?,
    }
    Ok(())
}

pub(crate) fn mem_register(device: DeviceH, ptr: *mut c_void, size: usize, _flags: u32, pinned: *mut *mut c_void) -> OlResult<()> {
    if size == 0 {
        return validation(errc::INVALID_SIZE, "Size == 0");
    }
    if device.is_null() {
        return null_handle("Device");
    }
    if ptr.is_null() {
        return null_pointer("Ptr");
    }
    if pinned.is_null() {
        return null_pointer("PinnedPtr");
    }
    let dev = devices::device(device)?;
    let rt = dev.device("olMemRegister")?;
    if !rt.memory_is_host() {
        return err(errc::UNSUPPORTED, format!("olMemRegister is not supported on {} devices by omptarget-rs yet", dev.platform.name));
    }
    let (key, start) = (rt.id, ptr as usize);
    let end = start.checked_add(size).ok_or(()).or_else(|_| err(errc::INVALID_SIZE, "Ptr + Size overflows"))?;
    let mut reg = REGISTERED.lock();
    // A range inside one registered already counts one more registration of
    // it; a range that overlaps one only in part is refused.
    let containing = reg.range((key, 0)..=(key, start)).next_back().filter(|(k, v)| k.1 + v.0 >= end).map(|(k, _)| *k);
    if let Some(k) = containing {
        write_out(pinned, ptr)?;
        if let Some(v) = reg.get_mut(&k) {
            v.1 += 1;
        }
        return Ok(());
    }
    let overlaps = reg.range((key, 0)..(key, end)).next_back().is_some_and(|(k, v)| k.1 + v.0 > start);
    if overlaps {
        return err(errc::INVALID_ARGUMENT, format!("[{ptr:p}, +{size}) overlaps memory registered on this device in part"));
    }
    // The CPU device reaches host memory directly: the pinned pointer is the host pointer.
    write_out(pinned, ptr)?;
    reg.insert((key, start), (size, 1));
    Ok(())
}

pub(crate) fn mem_unregister(device: DeviceH, ptr: *mut c_void) -> OlResult<()> {
    if device.is_null() {
        return null_handle("Device");
    }
    if ptr.is_null() {
        return null_pointer("Ptr");
    }
    let dev = devices::device(device)?;
    let rt = dev.device("olMemUnregister")?;
    let mut reg = REGISTERED.lock();
    let p = ptr as usize;
    let found = reg.range((rt.id, 0)..=(rt.id, p)).next_back().filter(|(k, v)| p < k.1 + v.0).map(|(k, _)| *k);
    let Some(k) = found else {
        return err(errc::INVALID_ARGUMENT, format!("{ptr:p} was not registered on this device with olMemRegister"));
    };
    if let Some(v) = reg.get_mut(&k) {
        v.1 -= 1;
        if v.1 == 0 {
            reg.remove(&k);
        }
    }
    Ok(())
}

// ---- Queues and events ----------------------------------------------------

pub(crate) fn create_queue(device: DeviceH, out: *mut QueueH) -> OlResult<()> {
    if device.is_null() {
        return null_handle("Device");
    }
    if out.is_null() {
        return null_pointer("Queue");
    }
    let dev = devices::device(device)?;
    let rt = dev.device("olCreateQueue")?;
    let (h, _) = handles::QUEUES.insert(OlQueue { device: dev, queue: crate::device::work_queue::WorkQueue::new(rt) });
    if let Err(e) = write_out(out, h) {
        handles::QUEUES.remove(h);
        return Err(e);
    }
    Ok(())
}

pub(crate) fn destroy_queue(queue: QueueH) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    // Work still queued goes on, and its events stay valid (22.1's contract).
    match handles::QUEUES.remove(queue) {
        Some(_) => Ok(()),
        None => err(errc::INVALID_QUEUE, format!("{queue:p} is not a live queue handle")),
    }
}

pub(crate) fn sync_queue(queue: QueueH) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    let q = handles::queue(queue)?;
    q.queue.synchronize()?;
    Ok(())
}

pub(crate) fn wait_events(queue: QueueH, events: *const EventH, num: usize) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    if events.is_null() {
        return null_pointer("Events");
    }
    if !(events as usize).is_multiple_of(align_of::<EventH>()) || num > isize::MAX as usize / size_of::<EventH>() {
        return err(errc::INVALID_ARGUMENT, "Events is misaligned or NumEvents too large");
    }
    // SAFETY: non-NULL, aligned, and the caller provides `num` handles (the header's contract).
    let list = unsafe { std::slice::from_raw_parts(events, num) };
    if list.iter().any(|e| e.is_null()) {
        return validation(errc::INVALID_NULL_HANDLE, "Any event handle in the list is NULL");
    }
    let q = handles::queue(queue)?;
    let evs = list.iter().map(|e| handles::event(*e)).collect::<OlResult<Vec<_>>>()?;
    for e in evs {
        q.queue.wait_for(&e.event)?;
    }
    Ok(())
}

fn queue_value(queue: QueueH, prop: QueueInfo) -> OlResult<Value> {
    let q = handles::queue(queue)?;
    Ok(match prop.0 {
        0 => Value::Ptr(q.device as *const OlDevice as usize),
        1 => Value::Bool(q.queue.is_empty()),
        v => return err(errc::INVALID_ENUMERATION, format!("getQueueInfo enum '{v}' is invalid")),
    })
}

pub(crate) fn get_queue_info(queue: QueueH, prop: QueueInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(queue.is_null(), "Queue", errc::INVALID_NULL_HANDLE, size, value, || queue_value(queue, prop))
}

pub(crate) fn get_queue_info_size(queue: QueueH, prop: QueueInfo, ret: *mut usize) -> OlResult<()> {
    info::size(queue.is_null(), "Queue", errc::INVALID_NULL_HANDLE, ret, || queue_value(queue, prop))
}

pub(crate) fn launch_host_function(queue: QueueH, callback: HostFunctionCb, user_data: *mut c_void) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    let Some(cb) = callback else { return null_pointer("Callback") };
    let q = handles::queue(queue)?;
    let data = user_data as usize;
    q.queue.enqueue_host(Box::new(move || {
        // SAFETY: the caller's callback with the header's signature and its own data; it runs once, after all earlier work of the queue.
        unsafe { cb(data as *mut c_void) }
    }))?;
    Ok(())
}

pub(crate) fn create_event(queue: QueueH, out: *mut EventH) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    if out.is_null() {
        return null_pointer("Event");
    }
    let q = handles::queue(queue)?;
    let (h, _) = handles::EVENTS.insert(OlEvent { queue: queue as usize, event: q.queue.record() });
    if let Err(x) = write_out(out, h) {
        handles::EVENTS.remove(h);
        return Err(x);
    }
    Ok(())
}

pub(crate) fn destroy_event(event: EventH) -> OlResult<()> {
    if event.is_null() {
        return null_handle("Event");
    }
    match handles::EVENTS.remove(event) {
        Some(_) => Ok(()),
        None => err(errc::INVALID_EVENT, format!("{event:p} is not a live event handle")),
    }
}

pub(crate) fn sync_event(event: EventH) -> OlResult<()> {
    if event.is_null() {
        return null_handle("Event");
    }
    let e = handles::event(event)?;
    e.event.synchronize()?;
    Ok(())
}

fn event_value(event: EventH, prop: EventInfo) -> OlResult<Value> {
    let e = handles::event(event)?;
    Ok(match prop.0 {
        0 => Value::Ptr(e.queue),
        1 => Value::Bool(e.event.is_complete()),
        v => return err(errc::INVALID_ENUMERATION, format!("getEventInfo enum '{v}' is invalid")),
    })
}

pub(crate) fn get_event_info(event: EventH, prop: EventInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(event.is_null(), "Event", errc::INVALID_NULL_HANDLE, size, value, || event_value(event, prop))
}

pub(crate) fn get_event_info_size(event: EventH, prop: EventInfo, ret: *mut usize) -> OlResult<()> {
    info::size(event.is_null(), "Event", errc::INVALID_NULL_HANDLE, ret, || event_value(event, prop))
}

// ---- Programs, symbols, launches ------------------------------------------

/// The device a program is for, or why there is none.
fn program_device(dev: &OlDevice) -> OlResult<&'static Device> {
    dev.real().ok_or(()).or_else(|_| err(errc::INVALID_DEVICE, "the virtual host device cannot load programs; use a CPU or GPU device"))
}

fn binary_error(e: crate::base::error::OffloadError) -> OlError {
    OlError { code: errc::INVALID_BINARY, details: e.to_string() }
}

pub(crate) fn is_valid_binary(device: DeviceH, data: *const c_void, size: usize, valid: *mut bool) -> OlResult<()> {
    if device.is_null() {
        return null_handle("Device");
    }
    if data.is_null() {
        return null_pointer("ProgData");
    }
    if valid.is_null() {
        return null_pointer("Valid");
    }
    let dev = devices::device(device)?;
    let ok = program_device(dev).is_ok_and(|d| d.runnable_image(bytes(data, size).unwrap_or(&[])).is_ok());
    write_out(valid, ok)
}

pub(crate) fn create_program(device: DeviceH, data: *const c_void, size: usize, out: *mut ProgramH) -> OlResult<()> {
    if device.is_null() {
        return null_handle("Device");
    }
    if data.is_null() {
        return null_pointer("ProgData");
    }
    if out.is_null() {
        return null_pointer("Program");
    }
    let dev = devices::device(device)?;
    let rt = program_device(dev)?;
    let program = Program::load(rt, bytes(data, size)?).map_err(binary_error)?;
    let (h, _) = handles::PROGRAMS.insert(OlProgram { device: dev, program: RwLock::new(Some(program)), symbols: Mutex::default() });
    if let Err(e) = write_out(out, h) {
        let _ = destroy_program(h);
        return Err(e);
    }
    Ok(())
}

pub(crate) fn destroy_program(program: ProgramH) -> OlResult<()> {
    if program.is_null() {
        return null_handle("Program");
    }
    let Some(p) = handles::PROGRAMS.remove(program) else {
        return err(errc::INVALID_ARGUMENT, format!("{program:p} is not a live program handle"));
    };
    for (_, sym) in p.symbols.lock().drain() {
        handles::SYMBOLS.remove(sym as SymbolH);
    }
    // Work queued before this call (launches of its kernels, copies into
    // its globals) finishes first; a launch queued after it fails.
    crate::device::work_queue::drain_all();
    let loaded = p.program.write().take();
    if let Some(loaded) = loaded {
        loaded.unload()?;
    }
    Ok(())
}

pub(crate) fn get_symbol(program: ProgramH, name: *const c_char, kind: SymbolKind, out: *mut SymbolH) -> OlResult<()> {
    if program.is_null() {
        return null_handle("Program");
    }
    if name.is_null() {
        return null_pointer("Name");
    }
    if out.is_null() {
        return null_pointer("Symbol");
    }
    let p = handles::program(program)?;
    let k = match kind.0 {
        0 => Kind::Kernel,
        1 => Kind::Global,
        v => return err(errc::INVALID_ENUMERATION, format!("unknown ol_symbol_kind_t value {v}")),
    };
    // SAFETY: non-NULL; the header requires a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) }.to_str().ok().ok_or(()).or_else(|_| err(errc::INVALID_ARGUMENT, "Name is not UTF-8"))?;
    let mut symbols = p.symbols.lock();
    if let Some(&s) = symbols.get(&(name.to_owned(), k)) {
        return write_out(out, s as SymbolH);
    }
    let found = {
        let loaded = p.program.read();
        let Some(loaded) = loaded.as_ref() else {
            return err(errc::INVALID_ARGUMENT, format!("{program:p} is not a live program handle"));
        };
        loaded.symbol(name, k)
    };
    let sym = found.map_err(|e| {
        let what = if k == Kind::Kernel { "kernel" } else { "global" };
        let code = if matches!(e, crate::base::error::OffloadError::InvalidArgument(_)) { errc::SYMBOL_KIND } else { errc::NOT_FOUND };
        OlError { code, details: format!("could not find {what} '{name}': {e}") }
    })?;
    let (h, _) = handles::SYMBOLS.insert(OlSymbol {
        program: Arc::clone(&p),
        device: p.device,
        kind: k,
        name: name.to_owned(),
        handle: sym.handle,
        size: sym.size,
    });
    symbols.insert((name.to_owned(), k), h as usize);
    write_out(out, h)
}

fn symbol_value(symbol: SymbolH, prop: SymbolInfo) -> OlResult<Value> {
    let s = handles::symbol(symbol)?;
    let global = s.kind == Kind::Global;
    Ok(match prop.0 {
        0 => Value::Enum(u32::from(global), SYMBOL_KIND_NAMES),
        1 | 2 if !global => return err(errc::SYMBOL_KIND, "the symbol is a kernel, not a global variable"),
        1 => Value::Ptr(s.handle as usize),
        2 => Value::Usize(s.size as usize),
        v => return err(errc::INVALID_ENUMERATION, format!("getSymbolInfo enum '{v}' is invalid")),
    })
}

pub(crate) fn get_symbol_info(symbol: SymbolH, prop: SymbolInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(symbol.is_null(), "Symbol", errc::INVALID_NULL_HANDLE, size, value, || symbol_value(symbol, prop))
}

pub(crate) fn get_symbol_info_size(symbol: SymbolH, prop: SymbolInfo, ret: *mut usize) -> OlResult<()> {
    info::size(symbol.is_null(), "Symbol", errc::INVALID_NULL_HANDLE, ret, || symbol_value(symbol, prop))
}

fn kernel_on(device: DeviceH, kernel: SymbolH) -> OlResult<(&'static OlDevice, Arc<OlSymbol>)> {
    let sym = handles::symbol(kernel)?;
    // A live symbol's device is a device: when it is `device`, no search is needed.
    if !std::ptr::eq(sym.device, device) {
        devices::device(device)?;
    }
    if sym.kind != Kind::Kernel {
        return err(errc::SYMBOL_KIND, "the provided symbol is not a kernel");
    }
    if !std::ptr::eq(sym.device, device) {
        return err(errc::INVALID_DEVICE, "the kernel's program was created for another device");
    }
    Ok((sym.device, sym))
}

/// Most bytes of kernel arguments one launch may pass.
const MAX_ARGUMENT_BYTES: usize = 8 * crate::plugins::host::MAX_KERNEL_ARGS;

pub(crate) fn launch_kernel(
    queue: QueueH,
    device: DeviceH,
    kernel: SymbolH,
    args: *const c_void,
    args_size: usize,
    sizes: *const LaunchSizeArgs,
) -> OlResult<()> {
    if args_size > 0 && args.is_null() {
        return validation(errc::INVALID_ARGUMENT, "ArgumentsSize > 0 && ArgumentsData == NULL");
    }
    if device.is_null() {
        return null_handle("Device");
    }
    if kernel.is_null() {
        return null_handle("Kernel");
    }
    if sizes.is_null() {
        return null_pointer("LaunchSizeArgs");
    }
    let (dev, sym) = kernel_on(device, kernel)?;
    let q = opt_queue(queue)?;
    if let Some(q) = &q
        && !std::ptr::eq(q.device, dev)
    {
        return err(errc::INVALID_DEVICE, "the queue does not belong to Device");
    }
    if !(sizes as usize).is_multiple_of(align_of::<LaunchSizeArgs>()) {
        return err(errc::INVALID_ARGUMENT, "LaunchSizeArgs is misaligned");
    }
    // SAFETY: non-NULL and aligned; the header makes the caller provide the struct.
    let sz = unsafe { sizes.read() };
    if !(1..=3).contains(&sz.dimensions) {
        return err(errc::INVALID_ARGUMENT, format!("LaunchSizeArgs.Dimensions is {}; it must be 1, 2 or 3", sz.dimensions));
    }
    // Dimensions past `Dimensions` count as 1 (selects, not a variable-length copy).
    let fix = |d: Dimensions| [d.x, if sz.dimensions > 1 { d.y } else { 1 }, if sz.dimensions > 2 { d.z } else { 1 }];
    let (teams, threads) = (fix(sz.num_groups), fix(sz.group_size));
    if teams.contains(&0) || threads.contains(&0) {
        return err(errc::INVALID_ARGUMENT, "a group count or group size is 0");
    }
    let rt = program_device(dev)?;
    let props = rt.properties();
    let group: u64 = threads.iter().map(|&t| u64::from(t)).product();
    if group > u64::from(props.max_group_size) || (0..3).any(|i| threads[i] > props.max_group_dims[i]) {
        return err(
            errc::INVALID_ARGUMENT,
            format!(
                "a work group of {threads:?} work items exceeds device {}'s maximum of {} ({:?} per dimension)",
                rt.id, props.max_group_size, props.max_group_dims
            ),
        );
    }
    if (0..3).any(|i| teams[i] > props.max_groups[i]) {
        return err(
            errc::INVALID_ARGUMENT,
            format!("{teams:?} work groups exceed device {}'s maximum of {:?} per dimension", rt.id, props.max_groups),
        );
    }
    let dyn_shared =
        u32::try_from(sz.dyn_shared_memory).ok().ok_or(()).or_else(|_| err(errc::INVALID_ARGUMENT, "DynSharedMemory is too large"))?;
    if args_size > MAX_ARGUMENT_BYTES {
        return err(errc::INVALID_SIZE, format!("ArgumentsSize {args_size} exceeds the {MAX_ARGUMENT_BYTES} bytes one launch may pass"));
    }
    // The argument buffer as 8-byte values (the last one zero-padded), copied now.
    let mut words: Vec<u64> = vec![0; args_size.div_ceil(8)];
    if args_size > 0 {
        let b = bytes(args, args_size)?;
        // SAFETY: `words` has at least `args_size` bytes; u8 copies need no alignment.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), words.as_mut_ptr().cast::<u8>(), args_size) };
    }
    let dims = LaunchDims { teams, threads, dyn_shared_bytes: dyn_shared, tripcount: 0 };
    let launch = move |wq: &mut Queue| {
        // The program stays loaded while its kernel runs (a destroy waits).
        let loaded = sym.program.program.read();
        if loaded.is_none() {
            return Err(crate::base::error::OffloadError::InvalidArgument(format!(
                "kernel {} was launched after its program was destroyed",
                sym.name
            )));
        }
        wq.launch(sym.handle, &sym.name, &words, &dims)?;
        // On a plugin queue the kernel runs on: wait, so the program outlives it.
        if wq.holds_queue() { wq.drain() } else { Ok(()) }
    };
    match q {
        Some(q) => q.queue.enqueue(Box::new(launch))?,
        None => run_now(rt, launch)?,
    }
    Ok(())
}

pub(crate) fn calculate_optimal_occupancy(device: DeviceH, kernel: SymbolH, _shared: usize, out: *mut usize) -> OlResult<()> {
    if device.is_null() {
        return null_handle("Device");
    }
    if kernel.is_null() {
        return null_handle("Kernel");
    }
    if out.is_null() {
        return null_pointer("GroupSize");
    }
    let (dev, _) = kernel_on(device, kernel)?;
    let rt = program_device(dev)?;
    if !rt.memory_is_host() {
        return err(errc::UNSUPPORTED, format!("the {} backend cannot provide this information in omptarget-rs yet", dev.platform.name));
    }
    // A CPU-device kernel runs as one work item.
    write_out(out, 1usize)
}
