//! The inner code of every `ol*` entry point, in the order of the
//! declaration list. Each function checks its arguments in the order 22.1's
//! header lists the conditions (the generated validation 22.1 runs first),
//! then resolves handles through [`handles`], then acts on the runtime's
//! devices and plugins.
//!
//! Queues execute work when it is enqueued (in order, trivially): a queue
//! or event is complete when the enqueuing call returns.

use super::devices;
use super::error::{OlResult, err, errc, validation};
use super::handles::{self, OlDevice, OlEvent, OlProgram, OlQueue, OlSymbol};
use super::info::{self, Value, write_out};
use super::types::*;
use crate::device::AddrHash;
use crate::device::image::{elf_symbol_size, parse_offload_binary};
use crate::plugins::{AllocKind, LaunchDims};
use core::ffi::{CStr, c_char, c_void};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
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
    handles::topology();
    super::init_count().fetch_add(1, Ordering::AcqRel);
    Ok(())
}

pub(crate) fn shut_down() -> OlResult<()> {
    let _ = super::init_count().fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1));
    Ok(())
}

pub(crate) fn iterate_devices(callback: IterateCb, user_data: *mut c_void) -> OlResult<()> {
    let Some(cb) = callback else { return null_pointer("Callback") };
    for d in &handles::topology().devices {
        // SAFETY: a callback from the caller with the header's signature; the handle is a live device.
        if !unsafe { cb(*d as *const OlDevice, user_data) } {
            break;
        }
    }
    Ok(())
}

pub(crate) fn get_device_info(device: DeviceH, prop: DeviceInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, size, value, || devices::device_info(handles::device(device)?, prop))
}

pub(crate) fn get_device_info_size(device: DeviceH, prop: DeviceInfo, ret: *mut usize) -> OlResult<()> {
    info::size(device.is_null(), "Device", errc::INVALID_NULL_HANDLE, ret, || devices::device_info(handles::device(device)?, prop))
}

pub(crate) fn get_platform_info(platform: PlatformH, prop: PlatformInfo, size: usize, value: *mut c_void) -> OlResult<()> {
    info::get(platform.is_null(), "Platform", errc::INVALID_NULL_HANDLE, size, value, || {
        devices::platform_info(handles::platform(platform)?, prop)
    })
}

pub(crate) fn get_platform_info_size(platform: PlatformH, prop: PlatformInfo, ret: *mut usize) -> OlResult<()> {
    info::size(platform.is_null(), "Platform", errc::INVALID_NULL_HANDLE, ret, || {
        devices::platform_info(handles::platform(platform)?, prop)
    })
}

// ---- Memory ---------------------------------------------------------------

struct Allocation {
    size: usize,
    device: &'static OlDevice,
    kind: AllocType,
}

/// Live `olMemAlloc` allocations by base address. A hash map: alloc and
/// free (the frequent calls) look up exact bases; a pointer inside an
/// allocation (`olGetMemInfo`, `olMemFill` without a queue) falls back to a scan.
static ALLOCS: Mutex<Option<HashMap<usize, Allocation, AddrHash>>> = Mutex::new(None);
/// `olMemRegister` ranges: (device handle, base) → size.
static REGISTERED: Mutex<BTreeMap<(usize, usize), usize>> = Mutex::new(BTreeMap::new());

/// Fork safety: the allocation and registration tables.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&ALLOCS) && held.mutex(&REGISTERED)
}

fn alloc_kind(t: AllocType) -> OlResult<AllocKind> {
    match t.0 {
        0 => Ok(AllocKind::Host),
        1 => Ok(AllocKind::Device),
        2 => Ok(AllocKind::Shared),
        v => err(errc::INVALID_ENUMERATION, format!("unknown ol_alloc_type_t value {v}")),
    }
}

/// The allocation containing `ptr`: (base, size, device, type).
fn find_alloc(ptr: usize) -> Option<(usize, usize, &'static OlDevice, AllocType)> {
    let allocs = ALLOCS.lock();
    let allocs = allocs.as_ref()?;
    if let Some(a) = allocs.get(&ptr) {
        return Some((ptr, a.size, a.device, a.kind));
    }
    allocs.iter().find(|&(&base, a)| ptr > base && ptr - base < a.size).map(|(&base, a)| (base, a.size, a.device, a.kind))
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
    let dev = handles::device(device)?;
    let kind = alloc_kind(ty)?;
    let rt = dev.plugin_device("olMemAlloc")?;
    let ptr = rt.alloc(size as u64, kind)? as usize;
    ALLOCS.lock().get_or_insert_with(HashMap::default).insert(ptr, Allocation { size, device: dev, kind: ty });
    if let Err(e) = write_out(out, ptr as *mut c_void) {
        ALLOCS.lock().as_mut().map(|m| m.remove(&ptr));
        let _ = rt.free(ptr as u64, kind);
        return Err(e);
    }
    Ok(())
}

pub(crate) fn mem_free(address: *mut c_void) -> OlResult<()> {
    if address.is_null() {
        return null_pointer("Address");
    }
    let Some(a) = ALLOCS.lock().as_mut().and_then(|m| m.remove(&(address as usize))) else {
        return err(errc::INVALID_ARGUMENT, format!("{address:p} is not the start of a live olMemAlloc allocation"));
    };
    let rt = a.device.plugin_device("olMemFree")?;
    rt.free(address as u64, alloc_kind(a.kind)?)?;
    Ok(())
}

fn mem_value(ptr: *const c_void, prop: MemInfo) -> OlResult<Value> {
    let Some((base, size, dev, kind)) = find_alloc(ptr as usize) else {
        return err(errc::NOT_FOUND, format!("{ptr:p}: memory was not allocated by liboffload"));
    };
    Ok(match prop.0 {
        0 => Value::Ptr(dev as *const OlDevice as usize),
        1 => Value::Ptr(base),
        2 => Value::Usize(size),
        3 => Value::Enum(kind.0, ALLOC_TYPE_NAMES),
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
fn opt_queue(queue: QueueH) -> OlResult<Option<&'static OlQueue>> {
    if queue.is_null() { Ok(None) } else { handles::queue(queue).map(Some) }
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
    opt_queue(queue)?;
    let (dd, sd) = (handles::device(dst_dev)?, handles::device(src_dev)?);
    if size == 0 {
        return Ok(());
    }
    let (d, s, n) = (dst as usize, src as usize, size as u64);
    match (dd.plugin(), sd.plugin()) {
        (None, None) => {
            // SAFETY: both are host memory of `size` bytes (the header's contract); `copy` allows overlap.
            unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), size) };
        }
        (None, Some((p, pd))) => {
            // SAFETY: host memory of `size` bytes at `dst` (the caller's contract); `src` is a device range.
            unsafe { p.retrieve(pd, d, s as u64, n)? }
        }
        (Some((p, pd)), None) => {
            // SAFETY: host memory of `size` bytes at `src` (the caller's contract); `dst` is a device range.
            unsafe { p.submit(pd, d as u64, s, n)? }
        }
        (Some((dp, dpd)), Some((sp, spd))) => {
            if std::ptr::addr_eq(dp, sp) {
                dp.exchange(spd, s as u64, dpd, d as u64, n)?;
            } else {
                let mut stage = vec![0u8; size];
                // SAFETY: `stage` is a live buffer of `size` bytes.
                unsafe {
                    sp.retrieve(spd, stage.as_mut_ptr() as usize, s as u64, n)?;
                    dp.submit(dpd, d as u64, stage.as_ptr() as usize, n)?;
                }
            }
        }
    }
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
    let dev = match opt_queue(queue)? {
        Some(q) => q.device,
        None => match find_alloc(ptr as usize) {
            Some((_, _, d, _)) => d,
            None => return err(errc::NOT_FOUND, format!("{ptr:p}: olMemFill without a queue needs memory from olMemAlloc")),
        },
    };
    let pat = bytes(pattern, pattern_size)?.to_vec();
    if fill_size == 0 {
        return Ok(());
    }
    let Some((p, pd)) = dev.plugin() else {
        // SAFETY: host memory of `fill_size` bytes (the caller's contract).
        let dst = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u8>(), fill_size) };
        dst.chunks_mut(pattern_size).for_each(|c| c.copy_from_slice(&pat[..c.len()]));
        return Ok(());
    };
    if pat.iter().all(|&b| b == pat[0]) {
        return Ok(p.memset(pd, ptr as u64, pat[0], fill_size as u64)?);
    }
    // A host buffer of whole patterns, copied in as many pieces as needed.
    let chunk = fill_size.min((1 << 20) / pattern_size * pattern_size).max(pattern_size);
    let buf: Vec<u8> = pat.iter().copied().cycle().take(chunk).collect();
    let mut done = 0;
    while done < fill_size {
        let n = chunk.min(fill_size - done);
        // SAFETY: `buf` holds `n` readable bytes; the destination range lies inside the caller's `fill_size` bytes.
        unsafe { p.submit(pd, (ptr as usize + done) as u64, buf.as_ptr() as usize, n as u64)? };
        done += n;
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
    let dev = handles::device(device)?;
    let rt = dev.plugin_device("olMemRegister")?;
    if rt.plugin.name() != "x86_64" {
        return err(errc::UNSUPPORTED, format!("olMemRegister is not supported on {} devices by omptarget-rs yet", dev.platform.name));
    }
    let (key, start) = (device as usize, ptr as usize);
    let end = start.checked_add(size).ok_or(()).or_else(|_| err(errc::INVALID_SIZE, "Ptr + Size overflows"))?;
    let mut reg = REGISTERED.lock();
    let overlaps = reg.range((key, 0)..(key, end)).next_back().is_some_and(|(&(_, b), &s)| b + s > start);
    if overlaps {
        return err(errc::INVALID_ARGUMENT, format!("[{ptr:p}, +{size}) overlaps memory already registered on this device"));
    }
    // The CPU device reaches host memory directly: the pinned pointer is the host pointer.
    write_out(pinned, ptr)?;
    reg.insert((key, start), size);
    Ok(())
}

pub(crate) fn mem_unregister(device: DeviceH, ptr: *mut c_void) -> OlResult<()> {
    if device.is_null() {
        return null_handle("Device");
    }
    if ptr.is_null() {
        return null_pointer("Ptr");
    }
    let dev = handles::device(device)?;
    dev.plugin_device("olMemUnregister")?;
    if REGISTERED.lock().remove(&(device as usize, ptr as usize)).is_none() {
        return err(errc::INVALID_ARGUMENT, format!("{ptr:p} was not registered on this device with olMemRegister"));
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
    let dev = handles::device(device)?;
    dev.plugin_device("olCreateQueue")?;
    let q = handles::new_queue(OlQueue { device: dev });
    if let Err(e) = write_out(out, q) {
        let _ = handles::destroy_queue(q);
        return Err(e);
    }
    Ok(())
}

pub(crate) fn destroy_queue(queue: QueueH) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    handles::destroy_queue(queue)?;
    Ok(())
}

pub(crate) fn sync_queue(queue: QueueH) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    handles::queue(queue)?;
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
    handles::queue(queue)?;
    for e in list {
        handles::event(*e)?;
    }
    // Every event is complete when created.
    Ok(())
}

fn queue_value(queue: QueueH, prop: QueueInfo) -> OlResult<Value> {
    let q = handles::queue(queue)?;
    Ok(match prop.0 {
        0 => Value::Ptr(q.device as *const OlDevice as usize),
        1 => Value::Bool(true),
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
    handles::queue(queue)?;
    // SAFETY: the caller's callback with the header's signature; it runs now, after all earlier work of the queue.
    unsafe { cb(user_data) };
    Ok(())
}

pub(crate) fn create_event(queue: QueueH, out: *mut EventH) -> OlResult<()> {
    if queue.is_null() {
        return null_handle("Queue");
    }
    if out.is_null() {
        return null_pointer("Event");
    }
    handles::queue(queue)?;
    let e = handles::new_event(OlEvent { queue: queue as usize });
    if let Err(x) = write_out(out, e) {
        let _ = handles::destroy_event(e);
        return Err(x);
    }
    Ok(())
}

pub(crate) fn destroy_event(event: EventH) -> OlResult<()> {
    if event.is_null() {
        return null_handle("Event");
    }
    handles::destroy_event(event)?;
    Ok(())
}

pub(crate) fn sync_event(event: EventH) -> OlResult<()> {
    if event.is_null() {
        return null_handle("Event");
    }
    handles::event(event)?;
    Ok(())
}

fn event_value(event: EventH, prop: EventInfo) -> OlResult<Value> {
    let e = handles::event(event)?;
    Ok(match prop.0 {
        0 => Value::Ptr(e.queue),
        1 => Value::Bool(true),
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

/// The image a device would load from `data` (an OffloadBinary is
/// unwrapped), or why it cannot.
fn device_image<'a>(dev: &OlDevice, data: &'a [u8]) -> OlResult<&'a [u8]> {
    let Some((p, pd)) = dev.plugin() else {
        return err(errc::INVALID_DEVICE, "the virtual host device cannot load programs; use a CPU or GPU device");
    };
    let inner = match parse_offload_binary(data)? {
        Some(ob) => &data[ob.image],
        None => data,
    };
    if !p.is_compatible(inner) {
        return err(errc::INVALID_BINARY, format!("the image is not a program for {} devices", dev.platform.name));
    }
    if !p.is_device_compatible(pd, inner) {
        return err(errc::INVALID_BINARY, format!("the image is not compatible with device {} ({})", p.uid(pd), dev.platform.name));
    }
    Ok(inner)
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
    let dev = handles::device(device)?;
    let ok = device_image(dev, bytes(data, size)?).is_ok();
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
    let dev = handles::device(device)?;
    let image = device_image(dev, bytes(data, size)?)?;
    let rt = dev.plugin_device("olCreateProgram")?;
    let handle = rt
        .plugin
        .load_binary(rt.plugin_device, image)
        .map_err(|e| super::error::OlError { code: errc::INVALID_BINARY, details: e.to_string() })?;
    let p = handles::new_program(OlProgram { device: dev, image: handle, bytes: image.to_vec(), symbols: Mutex::default() });
    if let Err(e) = write_out(out, p) {
        let _ = destroy_program(p);
        return Err(e);
    }
    Ok(())
}

pub(crate) fn destroy_program(program: ProgramH) -> OlResult<()> {
    if program.is_null() {
        return null_handle("Program");
    }
    let p = handles::destroy_program(program)?;
    for (_, sym) in p.symbols.lock().drain() {
        let _ = handles::destroy_symbol(sym as SymbolH);
    }
    let rt = p.device.plugin_device("olDestroyProgram")?;
    rt.plugin.unload_binary(rt.plugin_device, p.image)?;
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
    if kind.name().is_none() {
        return err(errc::INVALID_ENUMERATION, format!("unknown ol_symbol_kind_t value {}", kind.0));
    }
    // SAFETY: non-NULL; the header requires a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(name) }.to_str().ok().ok_or(()).or_else(|_| err(errc::INVALID_ARGUMENT, "Name is not UTF-8"))?;
    let mut symbols = p.symbols.lock();
    if let Some(&s) = symbols.get(&(name.to_owned(), kind.0)) {
        return write_out(out, s as SymbolH);
    }
    let rt = p.device.plugin_device("olGetSymbol")?;
    let (handle, size) = if kind.0 == 0 {
        let h = rt
            .plugin
            .get_function(rt.plugin_device, p.image, name)
            .map_err(|_| super::error::OlError { code: errc::NOT_FOUND, details: format!("could not find kernel '{name}'") })?;
        (h, 0)
    } else {
        let size = elf_symbol_size(&p.bytes, name).unwrap_or(0);
        let addr = rt
            .plugin
            .get_global(rt.plugin_device, p.image, name, size)
            .map_err(|e| super::error::OlError { code: errc::NOT_FOUND, details: format!("could not find global '{name}': {e}") })?;
        (addr, size)
    };
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    let s = handles::new_symbol(OlSymbol { program: program as usize, device: p.device, kind, name: leaked, handle, size });
    symbols.insert((name.to_owned(), kind.0), s as usize);
    write_out(out, s)
}

fn symbol_value(symbol: SymbolH, prop: SymbolInfo) -> OlResult<Value> {
    let s = handles::symbol(symbol)?;
    let global = s.kind.0 == 1;
    Ok(match prop.0 {
        0 => Value::Enum(s.kind.0, SYMBOL_KIND_NAMES),
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

fn kernel_on(device: DeviceH, kernel: SymbolH) -> OlResult<(&'static OlDevice, &'static OlSymbol)> {
    let sym = handles::symbol(kernel)?;
    // A live symbol's device is a device: when it is `device`, no search is needed.
    if !std::ptr::eq(sym.device, device) {
        handles::device(device)?;
    }
    if sym.kind.0 != 0 {
        return err(errc::SYMBOL_KIND, "the provided symbol is not a kernel");
    }
    if !std::ptr::eq(sym.device, device) {
        return err(errc::INVALID_DEVICE, "the kernel's program was created for another device");
    }
    Ok((sym.device, sym))
}

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
    if let Some(q) = opt_queue(queue)?
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
    let dyn_shared =
        u32::try_from(sz.dyn_shared_memory).ok().ok_or(()).or_else(|_| err(errc::INVALID_ARGUMENT, "DynSharedMemory is too large"))?;
    // The argument buffer as 8-byte values (the last one zero-padded).
    let mut words: smallvec::SmallVec<[u64; 16]> = smallvec::SmallVec::new();
    if args_size > 0 {
        words.resize(args_size.div_ceil(8), 0);
        let b = bytes(args, args_size)?;
        // SAFETY: `words` has at least `args_size` bytes; u8 copies need no alignment.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), words.as_mut_ptr().cast::<u8>(), args_size) };
    }
    let (p, pd) = dev.plugin().ok_or(()).or_else(|_| err(errc::INVALID_DEVICE, "the virtual host device runs no kernels"))?;
    let dims = LaunchDims { teams, threads, dyn_shared_bytes: dyn_shared, tripcount: 0 };
    p.launch(pd, sym.handle, sym.name, &words, &dims)?;
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
    let rt = dev.plugin_device("olCalculateOptimalOccupancy")?;
    if rt.plugin.name() != "x86_64" {
        return err(errc::UNSUPPORTED, format!("the {} backend cannot provide this information in omptarget-rs yet", dev.platform.name));
    }
    // A CPU-device kernel runs as one work item.
    write_out(out, 1usize)
}
