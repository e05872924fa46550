//! Data motion for map-entering, map-exiting and update constructs
//! (abi-reference §6.5–§6.12): `targetDataBegin`, `targetDataEnd`,
//! `targetDataUpdate`, pointer attachment and user-defined mappers.
//!
//! Host memory is touched only through the device's plugin (copies) and
//! through pointer reads/writes the ABI makes the caller responsible for
//! (`PTR_AND_OBJ` bases, shadow-pointer restoration).

use super::Runtime;
use super::async_info::AsyncInfo;
use super::device::OmpDevice;
use super::mapping::{Found, Insert, Lookup, MapEntry, Seen, Shadow, ShardGuard, ShardReader};
use crate::abi::MapType;
use crate::abi::mapper::MapperComponents;
use crate::base::config::info;
use crate::base::diag::{self, ptr};
use crate::base::error::{OffloadError, Result};
use crate::plugins::AllocKind;
use std::sync::Arc;

/// The arguments of one call; calls with few arguments (nearly all) keep
/// them on the stack.
pub type ArgList = smallvec::SmallVec<[MapArg; 8]>;
/// Entries queued by [`data_end`] for [`finish_end`].
pub type EndQueue = smallvec::SmallVec<[EndItem; 8]>;

/// One entry of the argument arrays of a data or kernel call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapArg {
    pub base: usize,
    pub begin: usize,
    pub size: i64,
    pub ty: MapType,
    /// `map_var_info_t` (0 = none).
    pub name: usize,
    /// User-defined mapper function (0 = none).
    pub mapper: usize,
    /// Device address of `begin` found by the map-entering step, so a
    /// launch does not look the entry up again (None until then).
    pub(crate) resolved: Option<u64>,
}

impl MapArg {
    /// One argument as compiled code passes it.
    pub fn new(base: usize, begin: usize, size: i64, ty: MapType, name: usize, mapper: usize) -> Self {
        MapArg { base, begin, size, ty, name, mapper, resolved: None }
    }

    fn size_u(&self) -> u64 {
        self.size.max(0) as u64
    }
    fn var_name(&self) -> String {
        name_of(self.name)
    }
}

fn name_of(info: usize) -> String {
    // SAFETY: names are compiler-emitted static strings (or 0).
    unsafe { crate::abi::ptr::var_info(info) }.0
}

/// Signature of a clang-generated mapper function.
type MapperFn = unsafe extern "C" fn(*mut core::ffi::c_void, usize, usize, i64, i64, usize);

/// Runs a user-defined mapper on one argument and returns its components.
fn run_mapper(arg: &MapArg) -> Vec<MapArg> {
    let mut comps = MapperComponents::new();
    // SAFETY: `arg.mapper` is a mapper function clang generated for this argument (ArgMappers[i]); it only calls back into `__tgt_push_mapper_component` with the handle we pass.
    let f: MapperFn = unsafe { core::mem::transmute::<usize, MapperFn>(arg.mapper) };
    // SAFETY: see above; `comps` outlives the call.
    unsafe { f((&mut comps as *mut MapperComponents).cast(), arg.base, arg.begin, arg.size, arg.ty.0 as i64, arg.name) };
    crate::debug!("mapper {:#x} produced {} components", arg.mapper, comps.len());
    let args = comps
        .as_slice()
        .iter()
        .map(|c| MapArg::new(c.base as usize, c.begin as usize, c.size, MapType(c.ty as u64), c.name as usize, 0))
        .collect();
    comps.release();
    args
}

/// A pointer-attachment request deferred to the end of a construct.
#[derive(Debug, Clone, Copy)]
struct Attach {
    ptr_addr: usize,
    pointee_begin: usize,
    ptr_size: u64,
    always: bool,
    name: usize,
}

/// State of one map-entering construct.
#[derive(Debug, Default)]
pub struct BeginState {
    attach: Vec<Attach>,
    /// Host ranges allocated by this construct (for ATTACH decisions).
    new_allocs: Vec<(usize, usize)>,
    /// Whether `new_allocs` is needed: only constructs with ATTACH entries
    /// (or mappers, which may produce them) consult it.
    track_new_allocs: bool,
    /// Map names of a kernel construct's arguments (TARGET_PARAM), kept only
    /// when it has ATTACH entries (see [`unreachable_pointee`]).
    param_names: Vec<usize>,
}

impl BeginState {
    /// State for a construct with these top-level arguments.
    pub fn for_args(args: &[MapArg]) -> Self {
        // One pass over the list for both questions (every construct asks them).
        let (attach, mapper) = args.iter().fold((false, false), |(t, m), a| (t | a.ty.any(MapType::ATTACH), m | (a.mapper != 0)));
        let track_new_allocs = attach || mapper;
        let param_names = if attach {
            args.iter().filter(|a| a.ty.any(MapType::TARGET_PARAM) && a.name != 0).map(|a| a.name).collect()
        } else {
            Vec::new()
        };
        BeginState { track_new_allocs, param_names, ..Default::default() }
    }
}

/// The outcome of `getTargetPointer`.
#[derive(Debug, Clone)]
pub struct TargetPointer {
    /// Device address of the host begin (host address for host pointers).
    pub tgt: u64,
    pub entry: Option<Arc<MapEntry>>,
    pub is_new: bool,
    pub is_host: bool,
}

/// Inputs of `getTargetPointer`.
struct GetTarget {
    begin: usize,
    base: usize,
    padding: u64,
    size: u64,
    name: usize,
    to: bool,
    always: bool,
    implicit: bool,
    update_ref: bool,
    close: bool,
    present: bool,
    hold: bool,
}

fn refcount_str(c: u64) -> String {
    if c == super::mapping::INF { "INF".into() } else { c.to_string() }
}

/// `getTargetPointer`: find or create the mapping of `[begin, +size)`.
/// `Ok(None)` is LLVM's NULL result (message already printed).
fn get_target_pointer(rt: &Runtime, dev: &OmpDevice, g: &GetTarget, q: &mut AsyncInfo) -> Result<Option<TargetPointer>> {
    // Reuse decision and count update happen under the table's read lock.
    let reuse = |e: &Arc<MapEntry>| {
        if g.update_ref {
            e.inc(g.hold);
            (e.clone(), " (incremented)", false)
        } else {
            let is_new = e.total() == 1;
            (e.clone(), " (update suppressed)", is_new)
        }
    };
    let ((reused, extends), seen) = dev.table.lookup_with(g.begin, g.size, |l| match l {
        Found::Contained(e) => (Some(reuse(e)), None),
        Found::Extends(e) if g.implicit => (Some(reuse(e)), None),
        Found::Extends(e) => (None, Some(e.clone())),
        Found::NotFound => (None, None),
    });
    let mut created = false;
    let mut tp = if let Some((e, action, is_new)) = reused {
        diag::info(info::MAPPING_EXISTS, dev.id, || {
            format!(
                "Mapping exists{} with HstPtrBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}{}, HoldRefCount={}{}, Name={}",
                if g.implicit { " (implicit)" } else { "" },
                ptr(g.begin as u64),
                ptr(e.tgt_of(g.begin)),
                g.size,
                refcount_str(e.dyn_count()),
                if g.hold { "" } else { action },
                refcount_str(e.hold_count()),
                if g.hold { action } else { "" },
                name_of(g.name)
            )
        });
        crate::debug!(
            "device {}: reuse mapping of host {:#x} (+{}) at {:#x}{action}, counts {}/{}",
            dev.id,
            g.begin,
            g.size,
            e.tgt_of(g.begin),
            refcount_str(e.dyn_count()),
            refcount_str(e.hold_count())
        );
        TargetPointer { tgt: e.tgt_of(g.begin), entry: Some(e), is_new, is_host: false }
    } else if let Some(e) = &extends {
        diag::message(&format!(
            "explicit extension not allowed: host address specified is {} ({} bytes), but device allocation maps to host at {} ({} bytes)",
            ptr(g.begin as u64),
            g.size,
            ptr(e.host_begin as u64),
            e.size()
        ));
        // Beyond LLVM, with LIBOMPTARGET_DEBUG: say which mapping is in the
        // way (without it stderr is 22.1's, line for line).
        if crate::base::config().debug {
            diag::message(&format!("the existing mapping is {}", describe(e)));
        }
        if g.present {
            present_missing(g.begin, g.size);
        }
        return Ok(None);
    } else if rt.unified_shared_memory() && !g.close {
        if g.size > 0 {
            diag::info(info::MAPPING_CHANGED, dev.id, || {
                format!("Return HstPtrBegin {} Size={} for unified shared memory", ptr(g.begin as u64), g.size)
            });
        }
        TargetPointer { tgt: g.begin as u64, entry: None, is_new: false, is_host: true }
    } else if g.present {
        present_missing(g.begin, g.size);
        return Ok(None);
    } else if g.size == 0 {
        // Zero-length sections of unmapped memory keep their host address.
        TargetPointer { tgt: g.begin as u64, entry: None, is_new: false, is_host: true }
    } else {
        let tp = create_entry(dev, g, seen, q)?;
        // Found meanwhile: another context's copy into it may be in flight.
        created = tp.is_new;
        tp
    };
    // Data another context is still copying into the entry: wait for it on
    // the device before this construct's work uses it.
    if !created
        && q.queued()
        && let Some(e) = tp.entry.as_ref()
    {
        // The lock keeps the event alive until the wait is queued.
        let ev = e.event.lock();
        if *ev != 0 {
            q.wait_event(*ev)?;
        }
    }

    // Data motion for reused entries that count as new, or `always`
    // (entries created here were filled before they became visible).
    if let Some(e) = tp.entry.as_ref()
        && g.to
        && g.size > 0
        && !created
        && (tp.is_new || g.always)
    {
        // A pointer inside the range that was attached to a device pointee
        // (e.g. a struct member reached again through a mapper) must not be
        // overwritten with its host value: skip the copy, as LLVM does.
        let end = g.begin.saturating_add(g.size as usize);
        let attached_inside = e.shadows.lock().iter().any(|s| s.host_ptr_addr >= g.begin && s.host_ptr_addr < end);
        if !attached_inside {
            submit(q, tp.tgt, g.begin, g.size, g.name, e.name)?;
            set_event(e, q)?;
        }
    }
    if tp.is_host {
        tp.entry = None;
    }
    Ok(Some(tp))
}

/// Allocates and inserts a new entry (under the table's write lock, so two
/// threads mapping the same new range agree on one entry).
fn create_entry(dev: &OmpDevice, g: &GetTarget, seen: Seen, q: &mut AsyncInfo) -> Result<TargetPointer> {
    // Allocate and fill the device copy before the entry exists: nobody else
    // can see it yet, and the write lock below then only guards the insert.
    let alloc = dev.alloc_for(g.padding + g.size, AllocKind::Default, g.begin)?;
    let tgt = alloc + g.padding;
    // LLVM's order of INFO lines: the creation, then the copy.
    diag::info(info::MAPPING_CHANGED, dev.id, || {
        format!(
            "Creating new map entry with HstPtrBase={}, HstPtrBegin={}, TgtAllocBegin={}, TgtPtrBegin={}, Size={}, DynRefCount={}, HoldRefCount={}, Name={}",
            ptr(g.base as u64),
            ptr(g.begin as u64),
            ptr(alloc),
            ptr(tgt),
            g.size,
            u8::from(!g.hold),
            u8::from(g.hold),
            name_of(g.name)
        )
    });
    if g.to
        && let Err(err) = submit(q, tgt, g.begin, g.size, g.name, g.name)
    {
        q.free_after(alloc);
        return Err(err);
    }
    // Other contexts that find the entry wait for this copy.
    let event = std::cell::Cell::new(if g.to { q.record_event()?.unwrap_or(0) } else { 0 });
    let mut refill_error = None;
    let outcome = dev.table.insert_unless_mapped(
        seen,
        g.base,
        g.begin,
        g.size,
        || MapEntry::new(g.base, g.begin, g.size, alloc, tgt, g.name, g.hold).with_event(event.get()),
        // Another thread mapped the range since our lookup: take a reference
        // while the locks are held.
        |found| {
            if let Lookup::Contained(e) = found {
                e.inc(g.hold);
            }
        },
        // The range may have been mapped and copied back since our copy:
        // copy the host data again, under the lock.
        || {
            if !g.to {
                return true;
            }
            let again = submit(q, tgt, g.begin, g.size, g.name, g.name).and_then(|()| {
                let old = event.replace(q.record_event()?.unwrap_or(0));
                if old != 0 {
                    dev.plugin.event_release(dev.plugin_device, old);
                }
                Ok(())
            });
            again.map_err(|e| refill_error = Some(e)).is_ok()
        },
    );
    let event = event.get();
    match outcome {
        Insert::Inserted(e) => {
            crate::debug!("device {}: new mapping host [{:#x}, +{}) -> {tgt:#x}", dev.id, g.begin, g.size);
            Ok(TargetPointer { tgt, entry: Some(e), is_new: true, is_host: false })
        }
        Insert::Found(found) => {
            // Ours is not needed (once our copy into it completed).
            if event != 0 {
                dev.plugin.event_release(dev.plugin_device, event);
            }
            q.free_after(alloc);
            match found {
                Lookup::Contained(e) => Ok(TargetPointer { tgt: e.tgt_of(g.begin), entry: Some(e), is_new: false, is_host: false }),
                _ => Err(OffloadError::Mapping("concurrent conflicting mapping".into())),
            }
        }
        Insert::Refused => {
            if event != 0 {
                dev.plugin.event_release(dev.plugin_device, event);
            }
            q.free_after(alloc);
            Err(refill_error.unwrap_or_else(|| OffloadError::Mapping("copy to the device failed".into())))
        }
    }
}

fn present_missing(begin: usize, size: u64) {
    diag::message(&format!(
        "device mapping required by 'present' map type modifier does not exist for host address {} ({size} bytes)",
        ptr(begin as u64)
    ));
}

/// One mapping in words, for messages that go beyond LLVM's.
pub fn describe(e: &MapEntry) -> String {
    // SAFETY: entry names are compiler-emitted static strings or our own.
    let (name, decl) = unsafe { crate::abi::ptr::var_info(e.name) };
    format!(
        "'{name}' ({decl}): host [{}, {}) ({} bytes) -> device {}, DynRefCount={}, HoldRefCount={}",
        ptr(e.host_begin as u64),
        ptr(e.host_end as u64),
        e.size(),
        ptr(e.tgt_begin),
        refcount_str(e.dyn_count()),
        refcount_str(e.hold_count())
    )
}

/// Replaces the entry's in-flight event after this context copied into it.
#[inline]
fn set_event(e: &MapEntry, q: &mut AsyncInfo) -> Result<()> {
    if !q.queued() {
        return Ok(());
    }
    chain_event(e, q, |_| Ok(()))
}

/// Queued contexts: orders this context's work on `e` with the work other
/// contexts queued on it before. The queue first waits for the entry's
/// event (the last copy or launch another context ordered on the entry),
/// then queues `work`, then records an event that covers both and makes it
/// the entry's. So a copy back waits for every kernel that used the entry
/// and released it earlier, and an entry is removed (once its last
/// releaser's queue drained, which waited for that event) only when no
/// queued work names its memory any more.
fn chain_event(e: &MapEntry, q: &mut AsyncInfo, work: impl FnOnce(&mut AsyncInfo) -> Result<()>) -> Result<()> {
    if !q.queued() {
        return work(q);
    }
    let mut slot = e.event.lock();
    if *slot != 0 {
        q.wait_event(*slot)?;
    }
    work(q)?;
    if let Some(ev) = q.record_event()? {
        let old = std::mem::replace(&mut *slot, ev);
        if old != 0 {
            q.dev.plugin.event_release(q.dev.plugin_device, old);
        }
    }
    Ok(())
}

#[inline(always)] // A flag test and the plugin call: not worth a call of its own.
/// `name` is the list item's (the profile's variable); `entry_name` the
/// mapping's, which 22.1's INFO line names (`unknown` for an unnamed one,
/// e.g. a struct's combined entry).
fn submit(q: &mut AsyncInfo, tgt: u64, host: usize, size: u64, name: usize, entry_name: usize) -> Result<()> {
    diag::info(info::DATA_TRANSFER, q.dev.id, || {
        format!(
            "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={size}, Name={}",
            ptr(host as u64),
            ptr(tgt),
            name_of(entry_name)
        )
    });
    if crate::tools::profile::on() {
        crate::tools::profile::set_var(name);
    }
    // SAFETY: `host` is the begin of a map list item of `size` bytes, which the program guarantees to be valid host memory during the construct.
    unsafe { q.submit(tgt, host, size) }.inspect_err(|_| diag::report("Copying data to device failed."))
}

#[inline(always)] // A flag test and the plugin call: not worth a call of its own.
/// Names as in [`submit`].
fn retrieve(q: &mut AsyncInfo, host: usize, tgt: u64, size: u64, name: usize, entry_name: usize) -> Result<()> {
    retrieve_shown_as(q, host, host, tgt, size, name, entry_name)
}

/// [`retrieve`] into `dst`, reported as a copy to the list item at `host`.
#[allow(clippy::too_many_arguments)] // retrieve's list item plus where the bytes land.
#[inline(always)] // As `retrieve`.
fn retrieve_shown_as(q: &mut AsyncInfo, host: usize, dst: usize, tgt: u64, size: u64, name: usize, entry_name: usize) -> Result<()> {
    diag::info(info::DATA_TRANSFER, q.dev.id, || {
        format!(
            "Copying data from device to host, TgtPtr={}, HstPtr={}, Size={size}, Name={}",
            ptr(tgt),
            ptr(host as u64),
            name_of(entry_name)
        )
    });
    if crate::tools::profile::on() {
        crate::tools::profile::set_var(name);
    }
    // SAFETY: as in `submit`: a map list item the program keeps valid, or a staging buffer of `size` bytes kept until the copy landed.
    unsafe { q.retrieve(dst, tgt, size) }.inspect_err(|_| diag::report("Copying data from device failed."))
}

/// The copy back of `[host, host+size)` of `e` (device address `tgt`).
/// Where pointers attached to device memory lie inside the range, the
/// device bytes land in a staging buffer and only the bytes around those
/// pointers are written to the host, once the copy landed: a host pointer
/// is never overwritten with the device address only to be restored
/// afterwards. (LLVM writes and restores, so another thread that maps the
/// same host struct, to another device, can read the device address in
/// between and attach through it.) One copy either way, as the tools see it.
#[inline(always)] // One flag test in front of `retrieve` on the copy-back paths.
fn retrieve_entry(q: &mut AsyncInfo, e: &MapEntry, host: usize, tgt: u64, size: u64, name: usize, entry_name: usize) -> Result<()> {
    if !e.has_shadows() {
        return retrieve(q, host, tgt, size, name, entry_name);
    }
    retrieve_around_shadows(q, e, host, tgt, size, name, entry_name)
}

/// [`retrieve_entry`] of an entry with attached pointers.
#[cold]
#[inline(never)]
fn retrieve_around_shadows(
    q: &mut AsyncInfo,
    e: &MapEntry,
    host: usize,
    tgt: u64,
    size: u64,
    name: usize,
    entry_name: usize,
) -> Result<()> {
    let end = host.saturating_add(size as usize);
    let mut slots: smallvec::SmallVec<[usize; 4]> =
        e.shadows.lock().iter().map(|s| s.host_ptr_addr).filter(|&a| a >= host && a < end).collect();
    if slots.is_empty() {
        return retrieve(q, host, tgt, size, name, entry_name);
    }
    slots.sort_unstable();
    let len = usize::try_from(size).map_err(|_| OffloadError::Mapping(format!("no host memory for a {size}-byte copy back")))?;
    let mut stage: Vec<u8> = Vec::new();
    stage.try_reserve_exact(len).map_err(|_| OffloadError::Mapping(format!("no host memory for a {size}-byte copy back")))?;
    stage.resize(len, 0);
    let stage = stage.into_boxed_slice();
    let staging = stage.as_ptr() as usize;
    crate::tools::ompt::showing_host_as(staging, host, || retrieve_shown_as(q, host, staging, tgt, size, name, entry_name))?;
    q.after(move || {
        let mut at = host;
        for slot in slots.iter().copied().chain(std::iter::once(end)) {
            if slot > at {
                let from = &stage[at - host..slot - host];
                // SAFETY: [at, slot) lies in the map list item's host range, which the program keeps valid; the staging buffer holds its bytes.
                unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), at as *mut u8, from.len()) };
            }
            at = at.max(slot.saturating_add(8).min(end));
        }
        Ok(())
    })
}

/// Reads the pointer stored at host address `addr`.
fn read_host_ptr(addr: usize) -> usize {
    if addr == 0 || !addr.is_multiple_of(align_of::<usize>()) {
        return 0;
    }
    // SAFETY: `addr` is the address of a pointer variable named in a map clause (PTR_AND_OBJ base / ATTACH pointer); the program keeps it valid.
    unsafe { (addr as *const usize).read() }
}

/// Writes a pointer value back to host address `addr` (shadow restore).
/// Restores a host pointer once the copy back that overwrote it landed.
pub(crate) fn write_host_after(q: &mut AsyncInfo, addr: usize, value: u64) {
    let _ = q.after(move || {
        write_host_ptr(addr, value);
        Ok(())
    });
}

/// Runs `targetDataEnd`'s post-processing once the copies back landed. The
/// caller's queue is taken only when it has to wait: the common case does
/// not copy it (~140 bytes inline).
#[inline]
pub fn finish_end_queue(q: &mut AsyncInfo, post: &mut EndQueue) -> Result<()> {
    if q.holds_queue() {
        let (dev, taken) = (q.dev, std::mem::take(post));
        q.after(move || finish_end(dev, taken))
    } else {
        finish_end_items(q.dev, post)
    }
}

pub(crate) fn write_host_ptr(addr: usize, value: u64) {
    if addr == 0 || !addr.is_multiple_of(align_of::<usize>()) {
        return;
    }
    // SAFETY: `addr` lies inside a mapped host range that was just copied back from the device; it held a pointer we recorded when attaching.
    unsafe { (addr as *mut u64).write(value) }
}

/// `targetDataBegin`. `args[i].base` is rewritten for `RETURN_PARAM` entries.
pub fn data_begin(
    rt: &Runtime,
    dev: &OmpDevice,
    args: &mut [MapArg],
    from_mapper: bool,
    st: &mut BeginState,
    q: &mut AsyncInfo,
) -> Result<()> {
    // Queued contexts order their copies with events: the general path.
    let fast = !from_mapper && !q.queued() && quiet();
    for i in 0..args.len() {
        let a = args[i];
        let t = a.ty;
        if fast
            && a.mapper == 0
            && a.size > 0
            && t.0 & !BEGIN_FAST_BITS == 0
            && args.get(i + 1).is_none_or(|next| next.ty.member_of() != Some(i))
            && let Some(tgt) = begin_fast(rt, dev, &a, st, q)?
        {
            args[i].resolved = Some(tgt);
            continue;
        }
        if t.any(MapType::LITERAL | MapType::PRIVATE) {
            continue;
        }
        if a.mapper != 0 {
            let mut comps = run_mapper(&a);
            data_begin(rt, dev, &mut comps, true, st, q)
                // 22.1's text has no full stop here (unlike the End and Update ones).
                .inspect_err(|_| diag::report("Call to targetDataBegin via targetDataMapper for custom mapper failed"))?;
            continue;
        }
        if t.any(MapType::ATTACH) {
            st.attach.push(Attach {
                ptr_addr: a.base,
                pointee_begin: a.begin,
                ptr_size: a.size_u(),
                always: t.any(MapType::ALWAYS),
                name: a.name,
            });
            continue;
        }
        let mut base = a.base;
        let mut padding = 0u64;
        if t.member_of().is_none()
            && let Some(next) = args.get(i + 1)
            && next.ty.member_of() == Some(i)
        {
            // Combined struct entry: keep the host alignment phase of the begin.
            let align = if base == 0 { 16 } else { (1usize << base.trailing_zeros()).min(16) };
            padding = (a.begin % align) as u64;
        }
        let mut update_ref = t.member_of().is_none() && !(from_mapper && i == 0);
        let implicit = t.any(MapType::IMPLICIT);
        let close = t.any(MapType::CLOSE);
        let present = t.any(MapType::PRESENT);
        let hold = t.any(MapType::OMPX_HOLD);
        let mut pointer_tp = None;
        if t.any(MapType::PTR_AND_OBJ) {
            let g = GetTarget {
                begin: a.base,
                base: a.base,
                padding: 0,
                size: 8,
                // LLVM looks the pointer up without a name ("unknown").
                name: 0,
                to: false,
                always: false,
                implicit,
                update_ref,
                close,
                present,
                hold,
            };
            let Some(ptp) = get_target_pointer(rt, dev, &g, q)? else {
                return Err(null_pointer(present));
            };
            if ptp.is_new && !ptp.is_host && st.track_new_allocs {
                st.new_allocs.push((a.base, a.base + 8));
            }
            pointer_tp = Some(ptp);
            base = read_host_ptr(a.base);
            update_ref = !from_mapper || i != 0;
        }
        let g = GetTarget {
            begin: a.begin,
            base,
            padding,
            size: a.size_u(),
            name: a.name,
            to: t.any(MapType::TO),
            always: t.any(MapType::ALWAYS),
            implicit,
            update_ref,
            close,
            present,
            hold,
        };
        let tp = match get_target_pointer(rt, dev, &g, q)? {
            Some(tp) => tp,
            None if a.size != 0 || present => return Err(null_pointer(present)),
            None => TargetPointer { tgt: 0, entry: None, is_new: false, is_host: false },
        };
        if tp.is_new && !tp.is_host && st.track_new_allocs {
            st.new_allocs.push((a.begin, a.begin + a.size_u() as usize));
        }
        if !from_mapper && tp.entry.is_some() {
            args[i].resolved = Some(tp.tgt);
        }
        if t.any(MapType::RETURN_PARAM) {
            // use_device_ptr/addr: hand the device base back to the program.
            args[i].base = if tp.is_host || tp.entry.is_none() { base } else { (tp.tgt as usize).wrapping_sub(a.begin.wrapping_sub(base)) };
        }
        if t.any(MapType::PTR_AND_OBJ)
            && let (Some(ptp), Some(_)) = (&pointer_tp, &tp.entry)
            && let Some(pentry) = &ptp.entry
        {
            attach(q, pentry, a.base, ptp.tgt, base, a.begin, tp.tgt, 8)?;
        }
        if t.0 != 0 && t.member_of().is_none() && !implicit && !present && tp.entry.is_none() {
            diag::info(info::EMPTY_MAPPING, dev.id, || format!("variable {} does not have a valid device counterpart", a.var_name()));
        }
    }
    Ok(())
}

/// No INFO output and no debug trace: the fast paths print nothing.
#[inline]
pub(crate) fn quiet() -> bool {
    let c = crate::base::config();
    c.info() == 0 && !c.debug
}

/// Map-type bits of a list item [`begin_fast`] handles exactly as the
/// general path of [`data_begin`] would: no member, pointer, attach,
/// `always`, `present`, private or returned-pointer semantics.
const BEGIN_FAST_BITS: u64 =
    MapType::TO | MapType::FROM | MapType::DELETE | MapType::TARGET_PARAM | MapType::IMPLICIT | MapType::CLOSE | MapType::OMPX_HOLD;

/// [`data_begin`] for one plain list item of positive size (top level, not
/// followed by its members, no mapper, nothing to print, a context without
/// queues, so no copy of another context can be in flight): takes a reference
/// to the existing mapping under the lookup's lock, or creates the mapping.
/// Returns the device address of the begin, or `None` when the general path
/// must decide (partial overlaps, unified shared memory), which then looks
/// the item up again.
#[inline]
fn begin_fast(rt: &Runtime, dev: &OmpDevice, a: &MapArg, st: &mut BeginState, q: &mut AsyncInfo) -> Result<Option<u64>> {
    let size = a.size as u64;
    let hold = a.ty.any(MapType::OMPX_HOLD);
    let implicit = a.ty.any(MapType::IMPLICIT);
    let reuse = |e: &MapEntry| {
        e.inc(hold);
        Ok(e.tgt_of(a.begin))
    };
    let (hit, seen) = dev.table.lookup_with(a.begin, size, |l| match l {
        Found::Contained(e) => reuse(e),
        Found::Extends(e) if implicit => reuse(e),
        Found::Extends(_) => Err(false),
        Found::NotFound => Err(true),
    });
    match hit {
        Ok(tgt) => Ok(Some(tgt)),
        Err(true) if !rt.unified_shared_memory() => {
            let g = GetTarget {
                begin: a.begin,
                base: a.base,
                padding: 0,
                size,
                name: a.name,
                to: a.ty.any(MapType::TO),
                always: false,
                implicit,
                update_ref: true,
                close: a.ty.any(MapType::CLOSE),
                present: false,
                hold,
            };
            let tp = create_entry(dev, &g, seen, q)?;
            if tp.is_new && st.track_new_allocs {
                st.new_allocs.push((a.begin, a.begin + size as usize));
            }
            Ok(Some(tp.tgt))
        }
        Err(_) => Ok(None),
    }
}

/// Map-type bits of a list item [`end_fast`] handles exactly as the general
/// path of [`data_end`] would (`present` only matters for a missing item,
/// which [`end_fast`] leaves to the general path).
const END_FAST_BITS: u64 = MapType::TO
    | MapType::FROM
    | MapType::ALWAYS
    | MapType::DELETE
    | MapType::TARGET_PARAM
    | MapType::IMPLICIT
    | MapType::CLOSE
    | MapType::OMPX_HOLD;

/// [`data_end`] for one plain list item of positive size (top level, no
/// mapper, nothing to print, a context without queues: no event to record
/// for the copy back): releases the reference under the lookup's
/// lock, copies back when this was the last one (or `always`), and queues
/// the entry for [`finish_end`]. Returns false when the item is not mapped
/// and the general path must decide.
#[inline]
fn end_fast(dev: &OmpDevice, a: &MapArg, post: &mut EndQueue, q: &mut AsyncInfo) -> Result<bool> {
    let size = a.size as u64;
    let t = a.ty;
    let (hold, force_delete) = (t.any(MapType::OMPX_HOLD), t.any(MapType::DELETE));
    let from = t.any(MapType::FROM);
    let release = |e: &Arc<MapEntry>| {
        // A copy back around attached pointers takes the general path.
        if from && e.has_shadows() {
            return None;
        }
        let is_last = e.release(hold, force_delete);
        // The copy back of the last reference is ordered with other
        // releases of the entry (see `MapEntry::take_copy_ticket`).
        let ticket = (is_last && from).then(|| e.take_copy_ticket());
        // finish_end has work only for an entry whose count is now zero, or
        // one with attached pointers to restore (attached by another thread
        // since the test above): only those are queued (an
        // exit from still-referenced data then takes no reference at all).
        let queue = is_last || e.total() == 0 || (from && e.has_shadows());
        Some((queue.then(|| e.clone()), ticket, e.tgt_of(a.begin), e.name))
    };
    let (hit, _) = dev.table.lookup_with(a.begin, size, |l| match l {
        Found::Contained(e) => release(e),
        Found::Extends(e) if t.any(MapType::IMPLICIT) => release(e),
        _ => None,
    });
    let Some((entry, ticket, tgt, entry_name)) = hit else { return Ok(false) };
    match (ticket, &entry) {
        (Some(ticket), Some(e)) => copy_back_in_turn(e, ticket, || retrieve(q, a.begin, tgt, size, a.name, entry_name))?,
        _ if from && t.any(MapType::ALWAYS) => retrieve(q, a.begin, tgt, size, a.name, entry_name)?,
        _ => {}
    }
    if let Some(entry) = entry {
        post.push(EndItem::new(entry, size, from, true, false));
    }
    Ok(true)
}

/// Runs the copy back `copy` of `e` for copy-back ticket `ticket` once every
/// earlier ticket's copy has landed, then completes the ticket (also when the
/// copy fails). Synchronous contexts only: the copy has landed on return.
fn copy_back_in_turn(e: &MapEntry, ticket: u32, copy: impl FnOnce() -> Result<()>) -> Result<()> {
    e.wait_copy_turn(ticket);
    let r = copy();
    e.complete_copy_ticket();
    r
}

fn null_pointer(present: bool) -> OffloadError {
    let why = if present { "'present' map type modifier" } else { "device failure or illegal mapping" };
    diag::report(&format!("Call to getTargetPointer returned null pointer ({why})."));
    OffloadError::Mapping(format!("getTargetPointer failed ({why})"))
}

/// Processes the deferred ATTACH entries of a construct (§6.8).
#[inline]
pub fn process_attach(dev: &OmpDevice, st: &BeginState, q: &mut AsyncInfo) -> Result<()> {
    if st.attach.is_empty() {
        return Ok(());
    }
    process_attach_entries(dev, st, q)
}

fn process_attach_entries(dev: &OmpDevice, st: &BeginState, q: &mut AsyncInfo) -> Result<()> {
    let always_cfg = crate::base::config().attach_always;
    let is_new = |addr: usize| st.new_allocs.iter().any(|&(b, e)| addr >= b && addr < e);
    for a in &st.attach {
        unreachable_pointee(dev, st, a)?;
        if !(a.always || always_cfg || is_new(a.pointee_begin) || is_new(a.ptr_addr)) {
            continue;
        }
        // Both lookups print LLVM's "Mapping exists ... (update suppressed)" lines.
        let pointee = get_tgt_ptr_begin(dev, a.pointee_begin, 0, false, false, true, false);
        if pointee.entry.is_none() {
            continue;
        }
        let pointer = get_tgt_ptr_begin(dev, a.ptr_addr, a.ptr_size, false, false, true, false);
        let Some(pointer_entry) = pointer.entry else { continue };
        let host_base = read_host_ptr(a.ptr_addr);
        attach(q, &pointer_entry, a.ptr_addr, pointer.tgt, host_base, a.pointee_begin, pointee.tgt, a.ptr_size)
            .inspect_err(|_| diag::report("Failed to process ATTACH entries."))?;
    }
    Ok(())
}

/// Beyond LLVM (where the region then dereferences a pointer read past the
/// end of a too small device copy and crashes): in a kernel construct, an
/// attached pointer that is a member of a kernel argument's variable (by the
/// map names: `s.in.p[0:5]` and the argument `s.tag` share `s`) is read by
/// the region from that argument's device copy; if its storage is not mapped,
/// the region cannot reach the pointee, so the construct fails with a
/// message. clang 22 emits this for a nested struct's pointer member, e.g.
/// `map(tofrom: s.in.p[0:5]) map(to: s.tag)`: it maps `s.tag` alone as the
/// struct argument and leaves `s.in.p` out. Without map names (no `-g`) it
/// cannot be told from a pointer the region does not use, and is not
/// checked; unified shared memory (host addresses throughout) is unaffected.
/// Whether `a`'s pointee is mapped but its pointer is not (silent lookups).
/// Out of line: `MappingTable::contains` stays inlined where it is hot
/// (`omp_target_is_present`).
#[inline(never)]
fn pointee_without_pointer(dev: &OmpDevice, a: &Attach) -> bool {
    !dev.table.contains(a.ptr_addr, a.ptr_size) && dev.table.contains(a.pointee_begin, 0)
}

/// The pointer expression an attachment named `name` goes through: `name`
/// without its last subscript (`a[1].p` for `a[1].p[0:3]`) or, when it ends
/// in a member, without that member access (`s.in` for `s.in.p`, `dvptr` for
/// `dvptr->dataptr`).
fn pointer_expr(name: &str) -> &str {
    let n = name.trim_end();
    if n.ends_with(']') {
        // The '[' that opens the last subscript (subscripts may nest).
        let mut depth = 0usize;
        for (i, c) in n.char_indices().rev() {
            match c {
                ']' => depth += 1,
                '[' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return &n[..i];
                    }
                }
                _ => {}
            }
        }
        return n;
    }
    let dot = n.rfind('.');
    let arrow = n.rfind("->");
    match (dot, arrow) {
        (Some(d), Some(a)) => &n[..d.max(a)],
        (Some(i), None) | (None, Some(i)) => &n[..i],
        (None, None) => n,
    }
}

fn unreachable_pointee(dev: &OmpDevice, st: &BeginState, a: &Attach) -> Result<()> {
    if st.param_names.is_empty() || a.name == 0 || super::get().unified_shared_memory() {
        return Ok(());
    }
    // Silent lookups: this check is ours, so it must not add LLVM's "Mapping
    // exists" INFO lines (22.1 prints them only for the attachment's own
    // lookups). The cheaper name test runs first; `map(a[i])` of a pointer
    // `a` (no member) skips both lookups.
    let unreachable = || pointee_without_pointer(dev, a);
    fn root(n: &str) -> &str {
        n.split(['.', '[', '-', '(', ' ']).next().unwrap_or("")
    }
    // Borrowed names: this runs for every construct with an attached
    // pointer, so it allocates nothing.
    let borrowed_name = |info: usize| {
        // SAFETY: map names are compiler-emitted static strings.
        unsafe { crate::abi::ptr::var_name_cow(info) }
    };
    let name = borrowed_name(a.name);
    let attach_root = root(&name);
    // The pointer attached through is the attachment's expression without its
    // last subscript or member access (`s.in.p` for `s.in.p[0:5]`, `dvptr`
    // for `dvptr->dataptr`): only a pointer that is itself a member (reached
    // through `.` or `->`) lives in a variable's storage the region reads.
    let pointer = pointer_expr(&name);
    let rest = pointer.get(attach_root.len()..).unwrap_or("");
    let member = rest.contains('.') || rest.contains("->");
    if !member || attach_root.is_empty() || !st.param_names.iter().any(|&p| root(&borrowed_name(p)) == attach_root) {
        return Ok(());
    }
    if !unreachable() {
        return Ok(());
    }
    let msg = format!(
        "cannot map '{name}' on device {}: the pointer it is attached through (host address {}, {} bytes) is not mapped, so the region cannot reach it \
         through '{attach_root}'; map that pointer (or all of '{attach_root}') too (clang 22 leaves a nested struct's pointer member out of the struct's mapping)",
        dev.id,
        ptr(a.ptr_addr as u64),
        a.ptr_size
    );
    diag::message(&msg);
    Err(OffloadError::Mapping(msg))
}

/// `performPointerAttachment`: make the device copy of the pointer at
/// `host_ptr_addr` point at the device copy of its pointee, and remember the
/// host value so copies back to the host keep it.
#[allow(clippy::too_many_arguments)] // Mirrors the reference's parameter list.
fn attach(
    q: &mut AsyncInfo,
    pointer_entry: &MapEntry,
    host_ptr_addr: usize,
    tgt_ptr_addr: u64,
    host_pointee_base: usize,
    host_pointee_begin: usize,
    tgt_pointee_begin: u64,
    ptr_size: u64,
) -> Result<()> {
    let tgt_pointee_base = tgt_pointee_begin.wrapping_sub(host_pointee_begin.wrapping_sub(host_pointee_base) as u64);
    let shadow = Shadow { host_ptr_addr, host_ptr_value: host_pointee_base as u64, tgt_ptr_addr, tgt_ptr_value: tgt_pointee_base };
    {
        let mut shadows = pointer_entry.shadows.lock();
        if shadows.contains(&shadow) {
            return Ok(());
        }
        shadows.retain(|s| s.host_ptr_addr != host_ptr_addr);
        shadows.push(shadow);
        pointer_entry.mark_shadows();
    }
    crate::debug!("attach: device pointer at {tgt_ptr_addr:#x} := {tgt_pointee_base:#x} (host {host_ptr_addr:#x})");
    let value = tgt_pointee_base;
    diag::info(info::DATA_TRANSFER, q.dev.id, || {
        format!(
            "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={}, Name={}",
            ptr(&value as *const u64 as u64),
            ptr(tgt_ptr_addr),
            ptr_size.max(8),
            name_of(pointer_entry.name)
        )
    });
    // Descriptors larger than a pointer (Fortran) keep their tail on the device.
    q.write_u64(tgt_ptr_addr, value).inspect_err(|_| diag::report("Failed to update pointer on device."))
}

/// Result of `getTgtPtrBegin`.
#[derive(Debug, Clone)]
pub struct TgtPtrBegin {
    pub tgt: u64,
    pub entry: Option<Arc<MapEntry>>,
    pub is_last: bool,
    /// The copy-back ticket taken with the last release, if asked for.
    pub ticket: Option<u32>,
}

/// `getTgtPtrBegin`: look up (and optionally release) an existing mapping.
pub fn get_tgt_ptr_begin(
    dev: &OmpDevice,
    begin: usize,
    size: u64,
    update_ref: bool,
    hold: bool,
    must_contain: bool,
    force_delete: bool,
) -> TgtPtrBegin {
    get_tgt_ptr_begin_ticket(dev, begin, size, update_ref, hold, must_contain, force_delete, false)
}

/// [`get_tgt_ptr_begin`]; with `ticket`, a release that makes this the last
/// reference also takes a copy-back ticket of the entry (see
/// `MapEntry::take_copy_ticket`), returned in [`TgtPtrBegin::ticket`].
#[allow(clippy::too_many_arguments)]
#[inline]
fn get_tgt_ptr_begin_ticket(
    dev: &OmpDevice,
    begin: usize,
    size: u64,
    update_ref: bool,
    hold: bool,
    must_contain: bool,
    force_delete: bool,
    ticket: bool,
) -> TgtPtrBegin {
    // The release and the "is last" decision happen under the read lock.
    // Without a count update (struct members) "last" still tells whether the
    // owning entry is about to go, which decides the member's copy-back.
    let decide = |e: &Arc<MapEntry>| {
        if update_ref {
            let last = e.release(hold, force_delete);
            (last, (last && ticket).then(|| e.take_copy_ticket()))
        } else {
            (e.dec_should_remove(hold, force_delete), None)
        }
    };
    let (found, _) = dev.table.lookup_with(begin, size, |l| match l {
        Found::Contained(e) => Some((e.clone(), decide(e))),
        Found::Extends(e) if !must_contain => Some((e.clone(), decide(e))),
        _ => None,
    });
    let Some((e, (is_last, ticket))) = found else {
        return TgtPtrBegin { tgt: begin as u64, entry: None, is_last: false, ticket: None };
    };
    let action = match (update_ref, is_last, force_delete) {
        (false, _, _) => " (update suppressed)",
        (true, true, true) => " (reset, delayed deletion)",
        (true, true, false) => " (decremented, delayed deletion)",
        (true, false, _) => " (decremented)",
    };
    diag::info(info::MAPPING_EXISTS, dev.id, || {
        format!(
            "Mapping exists with HstPtrBegin={}, TgtPtrBegin={}, Size={size}, DynRefCount={}{}, HoldRefCount={}{}",
            ptr(begin as u64),
            ptr(e.tgt_of(begin)),
            refcount_str(e.dyn_count()),
            if hold { "" } else { action },
            refcount_str(e.hold_count()),
            if hold { action } else { "" },
        )
    });
    TgtPtrBegin { tgt: e.tgt_of(begin), entry: Some(e), is_last, ticket }
}

/// An entry waiting for post-processing after a map-exiting construct.
#[derive(Debug)]
pub struct EndItem {
    entry: Arc<MapEntry>,
    /// The releasing list item's size: 22.1's "Removing map entry" line
    /// reports it (not the mapping's).
    size: u64,
    from: bool,
    may_delete: bool,
    /// What the item still holds of the entry ([`HOLDS_TICKET`],
    /// [`HOLDS_PIN`]), given back in [`finish_end`] once the queued copies
    /// have landed, or when the item is dropped unfinished (an error path),
    /// so it never blocks others.
    holds: std::sync::atomic::AtomicU8,
}

/// [`EndItem::holds`]: a copy-back ticket of the entry (a map-exiting
/// construct's, see `MapEntry::take_copy_ticket`).
const HOLDS_TICKET: u8 = 1;
/// [`EndItem::holds`]: a pin of the entry (a `target update`'s, see
/// `MapEntry::pin_live`).
const HOLDS_PIN: u8 = 2;

impl EndItem {
    fn new(entry: Arc<MapEntry>, size: u64, from: bool, may_delete: bool, ticket: bool) -> Self {
        let holds = if ticket { HOLDS_TICKET } else { 0 };
        EndItem { entry, size, from, may_delete, holds: holds.into() }
    }
    /// The pin of a `target update` on `entry`, given back once the update's
    /// copies have landed; the entry is removed then if its count went to
    /// zero meanwhile (its last release found it pinned).
    fn unpin_after_update(entry: Arc<MapEntry>, size: u64) -> Self {
        EndItem { entry, size, from: false, may_delete: true, holds: HOLDS_PIN.into() }
    }
    /// Takes what the item still holds; completes its copy-back ticket.
    #[inline]
    fn take_holds(&self) -> u8 {
        let holds = self.holds.swap(0, std::sync::atomic::Ordering::AcqRel);
        if holds & HOLDS_TICKET != 0 {
            self.entry.complete_copy_ticket();
        }
        holds
    }
}

impl Drop for EndItem {
    fn drop(&mut self) {
        if self.take_holds() & HOLDS_PIN != 0 {
            self.entry.unpin_unlocked();
        }
    }
}

/// `targetDataEnd`: copies back and releases; deletions are queued in `post`
/// and done by [`finish_end`] once all copies completed.
pub fn data_end(dev: &OmpDevice, args: &[MapArg], from_mapper: bool, post: &mut EndQueue, q: &mut AsyncInfo) -> Result<()> {
    // Queued contexts order their copies with events: the general path.
    let fast = !from_mapper && !q.queued() && quiet();
    for i in (0..args.len()).rev() {
        let a = args[i];
        let t = a.ty;
        if fast && a.mapper == 0 && a.size > 0 && t.0 & !END_FAST_BITS == 0 && end_fast(dev, &a, post, q)? {
            continue;
        }
        if t.any(MapType::LITERAL | MapType::PRIVATE | MapType::ATTACH) {
            continue;
        }
        if a.mapper != 0 {
            let comps = run_mapper(&a);
            data_end(dev, &comps, true, post, q)
                .inspect_err(|_| diag::report("Call to targetDataEnd via targetDataMapper for custom mapper failed."))?;
            continue;
        }
        let member = t.member_of().is_some();
        let ptr_and_obj = t.any(MapType::PTR_AND_OBJ);
        let update_ref = (!member || ptr_and_obj) && !(from_mapper && i == 0);
        let size = a.size_u();
        let from = t.any(MapType::FROM) && size != 0;
        if q.queued()
            && update_ref
            && let Some(e) = dev.table.lookup_with(a.begin, size, |l| l.entry_ref().map(Arc::clone)).0
        {
            // Before our reference goes: order the work this construct queued
            // on the entry (its kernel) before whatever the entry's last
            // releaser copies back or frees (see `chain_event`).
            chain_event(&e, q, |_| Ok(()))?;
        }
        // Queued contexts take a ticket on every last release, with or
        // without a copy back: the entry is removed only once every
        // construct that released it last has drained its queue. Without
        // it, a construct whose release came earlier could remove (and
        // free) the entry in its post-processing while the kernel of a
        // construct that mapped and released it meanwhile is still queued
        // (22.1 counts the threads in targetDataEnd for this).
        let r = get_tgt_ptr_begin_ticket(
            dev,
            a.begin,
            size,
            update_ref,
            t.any(MapType::OMPX_HOLD),
            !t.any(MapType::IMPLICIT),
            t.any(MapType::DELETE),
            from || q.queued(),
        );
        let Some(entry) = r.entry else {
            // Reference (targetDataEnd): a list item not present at exit is
            // ignored, unless the `present` modifier demands it. Under unified
            // shared memory (no `close`) it is the host pointer, as on entry.
            if t.any(MapType::PRESENT) && (t.any(MapType::CLOSE) || !super::get().unified_shared_memory()) {
                present_missing(a.begin, size);
                return Err(OffloadError::Mapping("present mapping missing at exit".into()));
            }
            continue;
        };
        let copy = from && (t.any(MapType::ALWAYS) || r.is_last);
        let mut ticket = false;
        if q.queued() {
            // The ticket completes in finish_end, after the copy landed.
            ticket = r.ticket.is_some();
            // Our copy back waits for the kernels of constructs that released
            // the entry before; a construct that maps the range again
            // meanwhile waits for our copy back.
            let chained =
                if copy { chain_event(&entry, q, |q| retrieve_entry(q, &entry, a.begin, r.tgt, size, a.name, entry.name)) } else { Ok(()) };
            if let Err(err) = chained {
                if ticket {
                    entry.complete_copy_ticket();
                }
                return Err(err);
            }
        } else {
            match r.ticket {
                Some(tk) => copy_back_in_turn(&entry, tk, || {
                    if copy { retrieve_entry(q, &entry, a.begin, r.tgt, size, a.name, entry.name) } else { Ok(()) }
                })?,
                None if copy => retrieve_entry(q, &entry, a.begin, r.tgt, size, a.name, entry.name)?,
                None => {}
            }
        }
        post.push(EndItem::new(entry, size, t.any(MapType::FROM), !member || ptr_and_obj, ticket));
    }
    Ok(())
}

/// Post-processing of `targetDataEnd`: restore shadow pointers of copied-back
/// entries, then remove entries whose count reached zero and free their memory.
pub fn finish_end(dev: &OmpDevice, post: EndQueue) -> Result<()> {
    finish_end_items(dev, &post)
}

/// [`finish_end`] on a borrowed queue: the hot paths call this one, so the
/// queue (~140 bytes inline) is not copied into the call.
pub fn finish_end_items(dev: &OmpDevice, post: &[EndItem]) -> Result<()> {
    for item in post {
        if item.take_holds() & HOLDS_PIN != 0 {
            dev.table.unpin(&item.entry);
        }
        // Entries without attached pointers have nothing to restore (no lock).
        if item.from && item.entry.has_shadows() {
            for s in item.entry.shadows.lock().iter() {
                write_host_ptr(s.host_ptr_addr, s.host_ptr_value);
            }
        }
        // The write lock is taken only for entries whose count reached zero.
        if item.may_delete && item.entry.total() == 0 && dev.table.remove_if_unused(&item.entry) {
            let e = &item.entry;
            diag::info(info::MAPPING_CHANGED, dev.id, || {
                format!(
                    "Removing map entry with HstPtrBegin={}, TgtPtrBegin={}, Size={}, Name={}",
                    ptr(e.host_begin as u64),
                    ptr(e.tgt_begin),
                    item.size,
                    name_of(e.name)
                )
            });
            crate::debug!("device {}: removed mapping of host [{:#x}, {:#x})", dev.id, e.host_begin, e.host_end);
            let ev = std::mem::take(&mut *e.event.lock());
            if ev != 0 {
                dev.plugin.event_release(dev.plugin_device, ev);
            }
            dev.free(e.tgt_alloc, AllocKind::Default).inspect_err(|_| diag::report("Deallocating data from device failed."))?;
        }
    }
    Ok(())
}

/// `targetDataUpdate`. Updates change no counts, so whether the list came
/// from a mapper makes no difference (the flag mirrors begin/end).
pub fn data_update(dev: &OmpDevice, args: &[MapArg], _from_mapper: bool, q: &mut AsyncInfo) -> Result<()> {
    for a in args {
        let t = a.ty;
        if t.any(MapType::LITERAL | MapType::PRIVATE) {
            continue;
        }
        if a.mapper != 0 {
            let comps = run_mapper(a);
            data_update(dev, &comps, true, q)
                .inspect_err(|_| diag::report("Call to targetDataUpdate via targetDataMapper for custom mapper failed."))?;
            continue;
        }
        if t.any(MapType::NON_CONTIG) {
            update_non_contiguous(dev, a, q)?;
        } else {
            update_contiguous(dev, a.begin, a.size_u(), t, a.name, q)?;
        }
    }
    Ok(())
}

/// For a `target update` of `[begin, begin+size)` on a synchronous device
/// with nothing to print or trace: when one live entry (count not zero)
/// without attached pointers holds the whole range (so the update is the
/// copy and nothing else), the device address of `begin` with the shard's
/// read guard. The caller copies while it holds the guard: no removal can
/// free the entry's device memory before (it needs the write lock), and no
/// reference is taken, so another thread's `exit data` releasing the mapping
/// meanwhile still copies back and removes it as usual. `None` otherwise
/// (not mapped, released already, attached pointers: the general path
/// decides).
#[inline(always)]
pub fn plain_update_target(dev: &OmpDevice, begin: usize, size: u64) -> Option<(ShardGuard<'_>, u64)> {
    dev.table.live_plain_target(begin, size)
}

/// For `target enter data` (`enter`) / `target exit data` of one list item
/// on a synchronous device with nothing to print or trace: when one entry
/// without attached pointers holds `[begin, begin+size)` and its dynamic
/// count is finite and at least 1 (enter) or 2 (exit), takes or drops that
/// reference, which is all the general path would do (no copy: the entry
/// is not new and does not reach zero), and returns true. Otherwise does
/// nothing and returns false.
#[inline]
pub fn plain_count_step(dev: &OmpDevice, begin: usize, size: u64, enter: bool) -> bool {
    dev.table.visit_in_shard(begin, size, |e| (!e.has_shadows() && e.step_live_count(enter)).then_some(())).is_some()
}

/// For a kernel launch's fast path (a synchronous device with nothing to
/// print or trace): when one entry without attached pointers holds
/// `[begin, begin+size)` and its dynamic count is finite and at least 1,
/// takes one reference and returns the device address of `begin` and the
/// entry, kept until [`region_ref_drop`] (so the end step needs no second
/// look-up). That is all the general begin step does for such an item (the
/// entry is not new, so nothing is copied in). Otherwise does nothing and
/// returns `None` (then [`region_ref_take_general`] serves the item).
#[inline(always)]
pub fn region_ref_take(reader: &mut ShardReader<'_>, begin: usize, size: u64) -> Option<(u64, Arc<MapEntry>)> {
    reader.visit(begin, size, |e| (!e.has_shadows() && e.step_live_count(true)).then(|| (e.tgt_of(begin), Arc::clone(e))))
}

/// The general begin step for one list item of a kernel launch's fast path
/// that [`region_ref_take`] could not serve (not mapped yet, attached
/// pointers, a count of zero or infinity, an extension): exactly what the
/// general path does for it, on its own context. Returns the device address
/// of `arg.begin`; an error has been reported as the general begin step
/// reports it. Its end step is [`region_ref_drop_general`].
#[cold]
#[inline(never)]
pub fn region_ref_take_general(rt: &Runtime, dev: &'static OmpDevice, arg: MapArg) -> Result<u64> {
    let mut args = [arg];
    let mut st = BeginState::for_args(&args);
    let mut q = AsyncInfo::new(dev);
    data_begin(rt, dev, &mut args, false, &mut st, &mut q).and_then(|_| process_attach(dev, &st, &mut q))?;
    q.finish(false)?;
    Ok(match args[0].resolved {
        Some(tgt) => tgt,
        None => get_tgt_ptr_begin(dev, arg.begin, arg.size_u(), false, false, false, false).tgt,
    })
}

/// Gives back the reference [`region_ref_take`] took on `entry` when the
/// count stays at least 1 (all the general end step does then) and returns
/// true; false, changing nothing, when this is the last reference (another
/// thread unmapped the item meanwhile): then the item needs the general end
/// step, [`region_ref_drop_general`] (copy back if `from`, removal).
#[inline(always)]
pub fn region_ref_drop(entry: Arc<MapEntry>) -> bool {
    entry.step_live_count(false)
}

/// The general end step for one list item of a kernel launch's fast path,
/// on its own context, as the general path does it for this item (see
/// [`region_ref_drop`], [`region_ref_take_general`]).
#[cold]
#[inline(never)]
pub fn region_ref_drop_general(dev: &'static OmpDevice, arg: &MapArg) -> Result<()> {
    let mut q = AsyncInfo::new(dev);
    let mut post = EndQueue::new();
    data_end(dev, std::slice::from_ref(arg), false, &mut post, &mut q).and_then(|_| finish_end_queue(&mut q, &mut post))?;
    q.finish(false)
}

/// [`get_tgt_ptr_begin`] for a `target update` (no count changes, the
/// whole range inside one entry), which also pins the entry found
/// (`MapEntry::pin_live`) while the look-up's lock is held: its device
/// memory then stays until the pin is given back, even when another
/// thread's `exit data` releases the mapping meanwhile. An entry whose
/// count is zero (released, not yet removed) is not present.
fn get_tgt_ptr_begin_pinned(dev: &OmpDevice, begin: usize, size: u64) -> TgtPtrBegin {
    let (found, _) = dev.table.lookup_with(begin, size, |l| match l {
        Found::Contained(e) if e.pin_live() => Some(e.clone()),
        _ => None,
    });
    let Some(e) = found else {
        return TgtPtrBegin { tgt: begin as u64, entry: None, is_last: false, ticket: None };
    };
    diag::info(info::MAPPING_EXISTS, dev.id, || {
        format!(
            "Mapping exists with HstPtrBegin={}, TgtPtrBegin={}, Size={size}, DynRefCount={} (update suppressed), HoldRefCount={}",
            ptr(begin as u64),
            ptr(e.tgt_of(begin)),
            refcount_str(e.dyn_count()),
            refcount_str(e.hold_count()),
        )
    });
    TgtPtrBegin { tgt: e.tgt_of(begin), entry: Some(e), is_last: false, ticket: None }
}

fn update_contiguous(dev: &OmpDevice, begin: usize, size: u64, t: MapType, name: usize, q: &mut AsyncInfo) -> Result<()> {
    // The entry stays pinned until the copies have landed (at once on a
    // synchronous context, once the queue drained on a queued one): a last
    // release by another thread meanwhile leaves the removal, and the free
    // of the device memory, to the pin's end (`finish_end_items`).
    let r = get_tgt_ptr_begin_pinned(dev, begin, size);
    let Some(entry) = r.entry else {
        if t.any(MapType::PRESENT) {
            diag::message(&format!(
                "device mapping required by 'present' motion modifier does not exist for host address {} ({size} bytes)",
                ptr(begin as u64)
            ));
            return Err(OffloadError::Mapping("present motion modifier".into()));
        }
        return Ok(());
    };
    let copied = update_entry(&entry, begin, size, r.tgt, t, name, q);
    let mut post = EndQueue::new();
    post.push(EndItem::unpin_after_update(entry, size));
    copied.and(finish_end_queue(q, &mut post))
}

/// The copies of [`update_contiguous`] on the pinned `entry` (device address
/// `tgt` of `begin`), with the attached pointers inside the range kept.
#[allow(clippy::too_many_arguments)] // The list item, its entry and the context.
fn update_entry(entry: &MapEntry, begin: usize, size: u64, tgt: u64, t: MapType, name: usize, q: &mut AsyncInfo) -> Result<()> {
    let shadows = entry.has_shadows();
    // Queued contexts: each copy waits for the work other contexts queued
    // on the entry (the copy that filled a new mapping may not have landed).
    if t.any(MapType::TO) {
        chain_event(entry, q, |q| submit(q, tgt, begin, size, name, entry.name))?;
        if shadows {
            let shadows: Vec<Shadow> = entry.shadows.lock().clone();
            for s in shadows.iter().filter(|s| s.host_ptr_addr >= begin && s.host_ptr_addr < begin + size as usize) {
                q.write_u64(s.tgt_ptr_addr, s.tgt_ptr_value).inspect_err(|_| diag::report("Failed to update pointer on device."))?;
            }
        }
    }
    if t.any(MapType::FROM) {
        chain_event(entry, q, |q| retrieve_entry(q, entry, begin, tgt, size, name, entry.name))?;
        if shadows {
            let restores: smallvec::SmallVec<[(usize, u64); 4]> = entry
                .shadows
                .lock()
                .iter()
                .filter(|s| s.host_ptr_addr >= begin && s.host_ptr_addr < begin + size as usize)
                .map(|s| (s.host_ptr_addr, s.host_ptr_value))
                .collect();
            for (addr, value) in restores {
                write_host_after(q, addr, value);
            }
        }
    }
    Ok(())
}

/// The most dimensions a non-contiguous `target update` entry may have.
const MAX_NON_CONTIG_DIMS: usize = 32;

/// Non-contiguous `target update`: `begin` points to `size` descriptors.
fn update_non_contiguous(dev: &OmpDevice, a: &MapArg, q: &mut AsyncInfo) -> Result<()> {
    // Beyond LLVM (which reads whatever lies there and crashes): clang 22
    // passes, for some strided updates through a mapper, a byte size where
    // the dimension count belongs; no compiler emits more than 32 dimensions.
    let dims = usize::try_from(a.size).ok().filter(|&d| d <= MAX_NON_CONTIG_DIMS).ok_or_else(|| {
        let msg = format!(
            "non-contiguous update of '{}': {} dimensions (at most {MAX_NON_CONTIG_DIMS} are possible; a byte size passed as the dimension count?)",
            name_of(a.name),
            a.size
        );
        diag::message(&msg);
        OffloadError::InvalidArgument(msg)
    })?;
    // SAFETY: the descriptor type is plain integers; the helper checks NULL, alignment and readability.
    let desc = unsafe { crate::abi::ptr::copy_checked(a.begin as *const crate::abi::__tgt_target_non_contig, dims, "descriptor array") }
        .inspect_err(|e| {
            let why = if let OffloadError::InvalidArgument(s) = e { s.clone() } else { e.to_string() };
            diag::message(&format!("non-contiguous update of '{}': {why}", name_of(a.name)));
        })?;
    if desc.is_empty() {
        return Ok(());
    }
    // Merge trailing dimensions that are contiguous.
    let mut merged = 0;
    for k in (1..desc.len()).rev() {
        if desc[k].count.wrapping_mul(desc[k].stride) == desc[k - 1].stride {
            merged += 1;
        } else {
            break;
        }
    }
    let d = desc.len() - merged;
    let chunk = desc[d - 1].count.wrapping_mul(desc[d - 1].stride);
    // Beyond LLVM: clang 22 gives each dimension's lower bound in elements of
    // that dimension, and a stride of (section stride x element size). For
    // the innermost array dimension the element size is known (the trailing
    // element descriptor {0, 1, size}), so its lower bound counts in elements
    // (OpenMP 5.2 §13.9: a[1:4:3] is a[1], a[4], ...); LLVM 22.1 multiplies
    // it by the stride (a[3], a[6], ...). Outer dimensions keep LLVM's
    // (offset + i) * stride: their row size is not in the descriptors, which
    // is right for unit strides only (see strided_update_offset_2d).
    let n = desc.len();
    let elem = (n >= 2 && desc[n - 1].count == 1 && desc[n - 1].offset == 0).then(|| desc[n - 1].stride);
    let units: Vec<u64> = (0..n).map(|k| elem.filter(|_| k + 2 == n).unwrap_or(desc[k].stride)).collect();
    #[allow(clippy::too_many_arguments)] // The recursion's state, kept explicit.
    fn visit(
        dev: &OmpDevice,
        a: &MapArg,
        desc: &[crate::abi::__tgt_target_non_contig],
        units: &[u64],
        d: usize,
        level: usize,
        offset: u64,
        chunk: u64,
        q: &mut AsyncInfo,
    ) -> Result<()> {
        let start = offset.wrapping_add(desc[level].offset.wrapping_mul(units[level]));
        if level == d - 1 {
            return update_contiguous(dev, a.base.wrapping_add(start as usize), chunk, a.ty, a.name, q);
        }
        for idx in 0..desc[level].count {
            let off = start.wrapping_add(idx.wrapping_mul(desc[level].stride));
            visit(dev, a, desc, units, d, level + 1, off, chunk, q)?;
        }
        Ok(())
    }
    visit(dev, a, &desc, &units, d, 0, 0, chunk, q)
}

#[cfg(test)]
mod tests {
    use super::pointer_expr;

    #[test]
    fn pointer_expr_strips_the_last_subscript_or_member() {
        assert_eq!(pointer_expr("s.in.p[0:5]"), "s.in.p");
        assert_eq!(pointer_expr("s.in.p"), "s.in");
        assert_eq!(pointer_expr("dvptr->dataptr"), "dvptr");
        assert_eq!(pointer_expr("dvptr->dataptr[0:100]"), "dvptr->dataptr");
        assert_eq!(pointer_expr("a[1].p[0:3]"), "a[1].p");
        assert_eq!(pointer_expr("a[b[1]:2]"), "a");
        assert_eq!(pointer_expr("p->q.r"), "p->q");
        assert_eq!(pointer_expr("v"), "v");
        assert_eq!(pointer_expr("x]"), "x]");
    }
}
