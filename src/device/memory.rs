//! Device memory: allocation, copies in every direction, fill and exchange,
//! each reporting itself to the tools (OMPT data-op callbacks, the profile
//! timeline), and the one table of allocations made through either API.
//!
//! # The allocation table
//!
//! `omp_target_alloc` and `olMemAlloc` both record their block here and
//! `omp_target_free` and `olMemFree` both take it out: a pointer from one
//! API is known to the other, is freed once through either, and a second
//! free is an error instead of a double free in the plugin. Memory the
//! runtime allocates for itself (mapped variables, private copies) is not
//! recorded.
//!
//! The table is an open-addressing hash set of block addresses, one pair
//! of atomic words per slot, so the allocation fast path records a block
//! with one compare-and-swap and the free path takes it out with another
//! (no lock). A block that finds no free slot among [`PROBE`] goes to a
//! locked overflow map. Range questions (`olGetMemInfo` of a pointer inside
//! a block, the bounds checks of copies on devices whose memory is host
//! memory) ask an ordered index of the `ol*` blocks first and fall back to
//! a scan of the table for OpenMP's.

use super::Device;
use crate::base::error::{OffloadError, Result};
use crate::base::fork::ForkLocks;
use crate::plugins::AllocKind;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The API whose call made an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `omp_target_alloc` and the `llvm_omp_target_alloc_*` forms.
    OpenMp,
    /// `olMemAlloc`.
    Offload,
}

/// One allocation made through an API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub base: u64,
    pub size: u64,
    pub device: usize,
    pub kind: AllocKind,
    pub origin: Origin,
}

impl Allocation {
    /// Whether `[ptr, ptr + len)` lies inside the block.
    pub fn contains(&self, ptr: u64, len: u64) -> bool {
        ptr >= self.base && ptr.checked_add(len).is_some_and(|end| end <= self.base + self.size)
    }
}

const SIZE_BITS: u32 = 48;
const DEVICE_SHIFT: u32 = SIZE_BITS;
const KIND_SHIFT: u32 = DEVICE_SHIFT + 8;
const ORIGIN_SHIFT: u32 = KIND_SHIFT + 2;
const _: () = assert!(super::MAX_DEVICES <= 1 << 8);

fn kind_bits(k: AllocKind) -> u64 {
    match k {
        AllocKind::Default => 0,
        AllocKind::Device => 1,
        AllocKind::Host => 2,
        AllocKind::Shared => 3,
    }
}

fn kind_of(bits: u64) -> AllocKind {
    match bits & 3 {
        0 => AllocKind::Default,
        1 => AllocKind::Device,
        2 => AllocKind::Host,
        _ => AllocKind::Shared,
    }
}

/// Everything but the address, in one word (`None`: too large to pack).
#[inline(always)]
fn pack(size: u64, device: usize, kind: AllocKind, origin: Origin) -> Option<u64> {
    (size < 1 << SIZE_BITS).then_some(
        size | (device as u64) << DEVICE_SHIFT | kind_bits(kind) << KIND_SHIFT | ((origin == Origin::Offload) as u64) << ORIGIN_SHIFT,
    )
}

#[inline(always)]
fn unpack(base: u64, meta: u64) -> Allocation {
    Allocation {
        base,
        size: meta & ((1 << SIZE_BITS) - 1),
        device: ((meta >> DEVICE_SHIFT) & 0xff) as usize,
        kind: kind_of(meta >> KIND_SHIFT),
        origin: if (meta >> ORIGIN_SHIFT) & 1 == 1 { Origin::Offload } else { Origin::OpenMp },
    }
}

const SLOTS: usize = 1 << 14;
/// Slots an address may use, from its hash on.
const PROBE: usize = 16;
const EMPTY: u64 = 0;
/// A slot whose block was freed (reusable; look-ups go past it).
const TOMB: u64 = 1;

struct Slot {
    key: AtomicU64,
    meta: AtomicU64,
}

struct Table {
    /// Zero-initialised (`.bss` for the process's table): pages never
    /// written are not resident.
    slots: [Slot; SLOTS],
    /// Blocks that found no slot, or whose size does not pack: address → (size, device, kind, origin).
    overflow: Mutex<Option<HashMap<u64, Allocation>>>,
    overflowed: AtomicUsize,
    /// The `ol*` blocks by address, for range questions.
    offload_ranges: RwLock<BTreeMap<u64, Allocation>>,
}

static TABLE: Table = Table::new();

/// Fork participation: the table's locks.
pub(super) fn lock_for_fork(held: &mut ForkLocks) -> bool {
    let t = &TABLE;
    held.mutex(&t.overflow) && held.write(&t.offload_ranges)
}

#[inline(always)]
fn home(base: u64) -> usize {
    // malloc blocks are 16-aligned and small ones dense: consecutive blocks
    // get consecutive slots. (Large page-aligned blocks share fewer homes
    // and probe further; they are few.)
    (base >> 4) as usize
}

impl Table {
    const fn new() -> Table {
        Table {
            slots: [const { Slot { key: AtomicU64::new(0), meta: AtomicU64::new(0) } }; SLOTS],
            overflow: Mutex::new(None),
            overflowed: AtomicUsize::new(0),
            offload_ranges: RwLock::new(BTreeMap::new()),
        }
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> &Slot {
        &self.slots[i & (SLOTS - 1)]
    }

    /// Records a block (its address is not in the table: it was just allocated).
    #[inline(always)]
    fn insert(&self, a: Allocation) {
        if let Some(meta) = pack(a.size, a.device, a.kind, a.origin)
            && a.base > TOMB
        {
            let h = home(a.base);
            for i in 0..PROBE {
                let s = self.slot(h + i);
                let k = s.key.load(Ordering::Relaxed);
                if k <= TOMB && s.key.compare_exchange(k, a.base, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    s.meta.store(meta, Ordering::Release);
                    return self.index(a);
                }
            }
        }
        self.insert_overflow(a);
    }

    #[inline(always)]
    fn index(&self, a: Allocation) {
        if a.origin == Origin::Offload {
            self.offload_ranges.write().insert(a.base, a);
        }
    }

    #[cold]
    #[inline(never)]
    fn insert_overflow(&self, a: Allocation) {
        self.overflow.lock().get_or_insert_with(HashMap::new).insert(a.base, a);
        self.overflowed.fetch_add(1, Ordering::AcqRel);
        self.index(a);
    }

    /// Takes the block at `base` out; `None` if no block starts there (or
    /// another thread took it out first).
    #[inline(always)]
    fn remove(&self, base: u64) -> Option<Allocation> {
        let h = home(base);
        for i in 0..PROBE {
            let s = self.slot(h + i);
            let k = s.key.load(Ordering::Acquire);
            if k == base {
                let meta = s.meta.load(Ordering::Acquire);
                if s.key.compare_exchange(base, TOMB, Ordering::AcqRel, Ordering::Relaxed).is_err() {
                    return None;
                }
                let a = unpack(base, meta);
                if a.origin == Origin::Offload {
                    self.offload_ranges.write().remove(&base);
                }
                return Some(a);
            }
            if k == EMPTY {
                break;
            }
        }
        self.remove_overflow(base)
    }

    #[inline(always)]
    fn remove_overflow(&self, base: u64) -> Option<Allocation> {
        if self.overflowed.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.remove_overflow_slow(base)
    }

    #[cold]
    #[inline(never)]
    fn remove_overflow_slow(&self, base: u64) -> Option<Allocation> {
        let a = self.overflow.lock().as_mut()?.remove(&base)?;
        self.overflowed.fetch_sub(1, Ordering::AcqRel);
        if a.origin == Origin::Offload {
            self.offload_ranges.write().remove(&base);
        }
        Some(a)
    }

    /// The block that starts at `base`.
    fn get(&self, base: u64) -> Option<Allocation> {
        let h = home(base);
        for i in 0..PROBE {
            let s = self.slot(h + i);
            let k = s.key.load(Ordering::Acquire);
            if k == base {
                return Some(unpack(base, s.meta.load(Ordering::Acquire)));
            }
            if k == EMPTY {
                break;
            }
        }
        if self.overflowed.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.overflow.lock().as_ref()?.get(&base).copied()
    }

    /// The block that contains `ptr`.
    fn containing(&self, ptr: u64) -> Option<Allocation> {
        if let Some(a) = self.get(ptr) {
            return Some(a);
        }
        if let Some((_, a)) = self.offload_ranges.read().range(..=ptr).next_back()
            && a.contains(ptr, 1)
        {
            return Some(*a);
        }
        self.scan(ptr)
    }

    /// Every slot and the overflow map: for OpenMP blocks asked about by a
    /// pointer inside them (rare: an `ol*` call on `omp_target_alloc` memory;
    /// never before the OpenMP side has started).
    #[cold]
    fn scan(&self, ptr: u64) -> Option<Allocation> {
        if !OPENMP_STARTED.load(Ordering::Acquire) {
            return None;
        }
        for s in self.slots.iter() {
            let k = s.key.load(Ordering::Acquire);
            if k > TOMB && k <= ptr {
                let a = unpack(k, s.meta.load(Ordering::Acquire));
                if a.contains(ptr, 1) && s.key.load(Ordering::Acquire) == k {
                    return Some(a);
                }
            }
        }
        if self.overflowed.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.overflow.lock().as_ref()?.values().find(|a| a.contains(ptr, 1)).copied()
    }
}

/// The fast paths' form of [`record`]: an OpenMP allocation of default
/// memory. False, having recorded nothing, when it does not fit the
/// table's fast form (the caller then calls [`record`]).
#[inline(always)]
pub fn record_plain(base: u64, size: u64, device: usize) -> bool {
    // A plugin's block is never at 0 or 1, nor 2^48 bytes long (no
    // allocation of that size succeeds): the table's reserved values.
    debug_assert!(size < 1 << SIZE_BITS && base > TOMB);
    let meta = size | (device as u64) << DEVICE_SHIFT;
    let h = home(base);
    for i in 0..PROBE {
        let s = TABLE.slot(h + i);
        let k = s.key.load(Ordering::Relaxed);
        if k <= TOMB && s.key.compare_exchange(k, base, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            s.meta.store(meta, Ordering::Release);
            return true;
        }
    }
    false
}

/// The fast paths' form of [`take`]: takes out the OpenMP allocation of
/// default memory on `device` that starts at `base` and returns its size;
/// `None`, having taken nothing, for anything else (the caller then takes
/// the general path).
#[inline(always)]
pub fn take_plain(base: u64, device: usize) -> Option<u64> {
    let h = home(base);
    for i in 0..PROBE {
        let s = TABLE.slot(h + i);
        let k = s.key.load(Ordering::Acquire);
        if k == base {
            let meta = s.meta.load(Ordering::Acquire);
            // Device, default kind (0) and OpenMP origin (0): the bits above the size.
            if meta >> SIZE_BITS != device as u64 {
                return None;
            }
            return s
                .key
                .compare_exchange(base, TOMB, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
                .then_some(meta & ((1 << SIZE_BITS) - 1));
        }
        if k == EMPTY {
            return None;
        }
    }
    None
}

/// Set once the OpenMP side has started: before, no OpenMP allocation can
/// exist, so range questions need no scan for one.
static OPENMP_STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The OpenMP side started (it records its allocations from now on).
pub fn openmp_started() {
    OPENMP_STARTED.store(true, Ordering::Release);
}

/// Records an allocation made through an API (after the plugin made it).
#[inline(always)]
pub fn record(a: Allocation) {
    TABLE.insert(a);
}

/// Takes the allocation that starts at `ptr` out of the table, if any.
#[inline(always)]
pub fn take(ptr: u64) -> Option<Allocation> {
    TABLE.remove(ptr)
}

/// Puts back an allocation that [`take`] took out (a free that failed).
pub fn put_back(a: Allocation) {
    TABLE.insert(a);
}

/// The allocation that contains `ptr`, if one does.
pub fn allocation_containing(ptr: u64) -> Option<Allocation> {
    TABLE.containing(ptr)
}

/// An API allocation on `dev`, recorded in the table.
pub fn allocate(dev: &Device, size: u64, kind: AllocKind, origin: Origin) -> Result<u64> {
    let ptr = dev.alloc(size, kind)?;
    record(Allocation { base: ptr, size, device: dev.id, kind, origin });
    Ok(ptr)
}

/// Frees the API allocation that starts at `ptr`, through whichever API made
/// it: an error, doing nothing, when no live allocation starts there.
pub fn deallocate(ptr: u64) -> Result<Allocation> {
    let Some(a) = take(ptr) else {
        return Err(OffloadError::InvalidArgument(format!("{ptr:#x} is not the start of a live allocation")));
    };
    let Some(dev) = super::registry().get(a.device) else {
        put_back(a);
        return Err(OffloadError::Internal(format!("allocation {ptr:#x} names device {}, which does not exist", a.device)));
    };
    // Queued work that may still use the block finishes first.
    super::work_queue::drain_all();
    dev.free(ptr, a.kind).inspect_err(|_| put_back(a))?;
    Ok(a)
}

impl Device {
    /// Allocates device memory for the runtime (not recorded in the table).
    #[inline]
    pub fn alloc(&self, size: u64, kind: AllocKind) -> Result<u64> {
        self.alloc_for(size, kind, 0)
    }

    /// Allocation for the host range at `host` (reported to OMPT tools).
    #[inline]
    pub fn alloc_for(&self, size: u64, kind: AllocKind, host: usize) -> Result<u64> {
        // One test for record/replay and tools (`base::fast_path`).
        if !crate::base::fast_path::allowed() {
            return self.alloc_hooked(size, kind, host);
        }
        self.plugin.alloc(self.plugin_device, size, kind)
    }

    /// [`Device::alloc_for`] when some hook may be on.
    #[inline(never)]
    fn alloc_hooked(&self, size: u64, kind: AllocKind, host: usize) -> Result<u64> {
        // Kernel record/replay: device memory comes from one recorded block.
        if let Some(p) = super::record_memory::alloc(self, size, kind) {
            return Ok(p);
        }
        if crate::tools::ompt::on() {
            return self.alloc_traced(size, kind, host);
        }
        self.plugin.alloc(self.plugin_device, size, kind)
    }

    #[cold]
    #[inline(never)]
    fn alloc_traced(&self, size: u64, kind: AllocKind, host: usize) -> Result<u64> {
        crate::tools::ompt::alloc(true, self.id, host, 0, size);
        let r = self.plugin.alloc(self.plugin_device, size, kind);
        crate::tools::ompt::alloc(false, self.id, host, *r.as_ref().unwrap_or(&0), size);
        r
    }

    /// Frees memory from [`Device::alloc`].
    #[inline]
    pub fn free(&self, ptr: u64, kind: AllocKind) -> Result<()> {
        if !crate::base::fast_path::allowed() {
            return self.free_hooked(ptr, kind);
        }
        self.plugin.free(self.plugin_device, ptr, kind)
    }

    /// [`Device::free`] when some hook may be on.
    #[inline(never)]
    fn free_hooked(&self, ptr: u64, kind: AllocKind) -> Result<()> {
        if super::record_memory::owns(self.id, ptr) {
            return Ok(());
        }
        if crate::tools::ompt::on() {
            return self.free_traced(ptr, kind);
        }
        self.plugin.free(self.plugin_device, ptr, kind)
    }

    #[cold]
    #[inline(never)]
    fn free_traced(&self, ptr: u64, kind: AllocKind) -> Result<()> {
        crate::tools::ompt::delete(true, self.id, ptr);
        let r = self.plugin.free(self.plugin_device, ptr, kind);
        crate::tools::ompt::delete(false, self.id, ptr);
        r
    }

    /// Host → device copy.
    ///
    /// # Safety
    /// `[src, src+size)` must be readable host memory.
    pub unsafe fn submit(&self, dst: u64, src: usize, size: u64) -> Result<()> {
        if crate::tools::ompt::hooks() {
            // SAFETY: forwarded contract.
            return unsafe { self.copy_traced(true, dst, src, size) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.plugin.submit(self.plugin_device, dst, src, size) }
    }

    /// Device → host copy.
    ///
    /// # Safety
    /// `[dst, dst+size)` must be writable host memory.
    pub unsafe fn retrieve(&self, dst: usize, src: u64, size: u64) -> Result<()> {
        if crate::tools::ompt::hooks() {
            // SAFETY: forwarded contract.
            return unsafe { self.copy_traced(false, src, dst, size) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.plugin.retrieve(self.plugin_device, dst, src, size) }
    }

    /// Device → device copy from `src` on `from` to `dst` on this device:
    /// directly where both devices are the same plugin's, else staged
    /// through a host buffer (`OutOfDeviceMemory`-free: a failed staging
    /// allocation is an error, not an abort).
    pub fn exchange_from(&self, from: &Device, src: u64, dst: u64, size: u64) -> Result<()> {
        if std::ptr::addr_eq(self.plugin, from.plugin) {
            let tool = crate::tools::ompt::on();
            if tool {
                crate::tools::ompt::exchange(true, from.id, src, self.id, dst, size);
            }
            let r = self.plugin.exchange(from.plugin_device, src, self.plugin_device, dst, size);
            if tool {
                crate::tools::ompt::exchange(false, from.id, src, self.id, dst, size);
            }
            return r;
        }
        let len = usize::try_from(size).map_err(|_| OffloadError::OutOfDeviceMemory { bytes: size })?;
        let mut stage = Vec::new();
        stage.try_reserve_exact(len).map_err(|_| OffloadError::OutOfDeviceMemory { bytes: size })?;
        stage.resize(len, 0u8);
        // SAFETY: `stage` is a live buffer of `size` bytes.
        unsafe { from.retrieve(stage.as_mut_ptr() as usize, src, size)? };
        // SAFETY: as above.
        unsafe { self.submit(dst, stage.as_ptr() as usize, size) }
    }

    /// Fills `size` bytes at `ptr` with `pattern` repeated (`size` is a
    /// multiple of the pattern's length, which is not 0).
    pub fn fill(&self, ptr: u64, pattern: &[u8], size: u64) -> Result<()> {
        if pattern.is_empty() || !size.is_multiple_of(pattern.len() as u64) {
            return Err(OffloadError::InvalidArgument(format!(
                "fill of {size} bytes with a pattern of {} bytes: the size must be a non-zero multiple of the pattern",
                pattern.len()
            )));
        }
        if size == 0 {
            return Ok(());
        }
        if pattern.iter().all(|&b| b == pattern[0]) {
            return self.plugin.memset(self.plugin_device, ptr, pattern[0], size);
        }
        // A host buffer of whole patterns, copied in as many pieces as needed.
        let p = pattern.len() as u64;
        let chunk = size.min((1 << 20) / p * p).max(p);
        let buf: Vec<u8> = pattern.iter().copied().cycle().take(chunk as usize).collect();
        let mut done = 0;
        while done < size {
            let n = chunk.min(size - done);
            // SAFETY: `buf` holds `n` readable bytes.
            unsafe { self.submit(ptr + done, buf.as_ptr() as usize, n)? };
            done += n;
        }
        Ok(())
    }

    /// A copy with its OMPT callbacks and profile events (`to_device`:
    /// host `host` → device `tgt`, else device `tgt` → host `host`).
    ///
    /// # Safety
    /// As [`Device::submit`] / [`Device::retrieve`].
    #[cold]
    #[inline(never)]
    unsafe fn copy_traced(&self, to_device: bool, tgt: u64, host: usize, size: u64) -> Result<()> {
        if self.queued && crate::tools::profile::on() {
            // SAFETY: forwarded contract.
            return unsafe { self.copy_timed(to_device, tgt, host, size) };
        }
        let (r, ev) = self.traced_copy(to_device, tgt, host, size, |_| {
            if to_device {
                // SAFETY: forwarded contract.
                unsafe { self.plugin.submit(self.plugin_device, tgt, host, size) }
            } else {
                // SAFETY: forwarded contract.
                unsafe { self.plugin.retrieve(self.plugin_device, host, tgt, size) }
            }
        });
        if let Some(ev) = ev {
            ev.commit(None);
        }
        r
    }

    /// A synchronous copy while profiling on a plugin with queues: queued on
    /// a pooled queue between two timing marks and waited for (as the plain
    /// copy waits), so its profile event gets the device's times.
    ///
    /// # Safety
    /// As [`Device::submit`] / [`Device::retrieve`].
    #[cold]
    #[inline(never)]
    unsafe fn copy_timed(&self, to_device: bool, tgt: u64, host: usize, size: u64) -> Result<()> {
        let (plugin, pd) = (self.plugin, self.plugin_device);
        let mut token = None;
        let (r, ev) = self.traced_copy(to_device, tgt, host, size, |_| {
            let q = plugin.queue_acquire(pd)?;
            token = plugin.timing_start(pd, q);
            let r = if to_device {
                // SAFETY: forwarded contract; the queue is synchronised before returning.
                unsafe { plugin.submit_async(pd, tgt, host, size, q) }
            } else {
                // SAFETY: forwarded contract; the queue is synchronised before returning.
                unsafe { plugin.retrieve_async(pd, host, tgt, size, q) }
            };
            if let Some(t) = token {
                plugin.timing_stop(pd, q, t);
            }
            let s = plugin.queue_synchronize(pd, q);
            plugin.queue_release(pd, q);
            r.and(s)
        });
        if let Some(ev) = ev {
            ev.commit(token.and_then(|t| plugin.timing_read(pd, t)));
        }
        r
    }

    /// The OMPT callbacks and profile event around `copy`, a copy of `size`
    /// bytes as [`Device::copy_traced`]'s arguments describe it (for queued
    /// copies too: `copy` is told whether a tool is on). Returns the copy's
    /// result and, while profiling, its device-track event for the caller
    /// to commit (with device times where it timed the copy).
    #[inline]
    pub(super) fn traced_copy(
        &self,
        to_device: bool,
        tgt: u64,
        host: usize,
        size: u64,
        copy: impl FnOnce(bool) -> Result<()>,
    ) -> (Result<()>, Option<crate::tools::profile::DeviceEvent>) {
        let ts = crate::tools::profile::start();
        let tool = crate::tools::ompt::on();
        let callback = |begin: bool| {
            if to_device {
                crate::tools::ompt::to_device(begin, self.id, host, tgt, size)
            } else {
                crate::tools::ompt::from_device(begin, self.id, tgt, host, size)
            }
        };
        if tool {
            callback(true);
        }
        let r = copy(tool);
        if tool {
            callback(false);
        }
        let ev =
            if crate::tools::profile::on() { crate::tools::profile::copy(self.id, self.plugin.name(), to_device, size, ts) } else { None };
        (r, ev)
    }

    /// Writes a pointer-sized value to device memory.
    pub fn write_u64(&self, dst: u64, value: u64) -> Result<()> {
        let v = value;
        // SAFETY: `v` is a live local of 8 bytes.
        unsafe { self.submit(dst, &v as *const u64 as usize, 8) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let a = Allocation { base: 0x7f00_0000_1230, size: 4096, device: 3, kind: AllocKind::Shared, origin: Origin::Offload };
        let m = pack(a.size, a.device, a.kind, a.origin).unwrap();
        assert_eq!(unpack(a.base, m), a);
        assert!(pack(1 << 48, 0, AllocKind::Default, Origin::OpenMp).is_none());
    }

    #[test]
    fn a_block_is_taken_out_once() {
        let t: &'static Table = Box::leak(Box::new(Table::new()));
        let a = Allocation { base: 0x1000, size: 64, device: 0, kind: AllocKind::Default, origin: Origin::OpenMp };
        t.insert(a);
        // An OpenMP block is found by a pointer inside it once OpenMP started.
        openmp_started();
        assert_eq!(t.containing(0x1010), Some(a));
        assert_eq!(t.remove(0x1000), Some(a));
        assert_eq!(t.remove(0x1000), None);
        // Many blocks with one home slot spill into the overflow map and come back out.
        let slot_of = |b: u64| home(b) & (SLOTS - 1);
        let same_home: Vec<u64> = (1..1u64 << 28).map(|i| i * 16).filter(|&b| slot_of(b) == slot_of(0x2000)).take(PROBE + 4).collect();
        assert_eq!(same_home.len(), PROBE + 4);
        for &b in &same_home {
            t.insert(Allocation { base: b, ..a });
        }
        assert!(t.overflowed.load(Ordering::Relaxed) > 0);
        for &b in &same_home {
            assert_eq!(t.remove(b).map(|x| x.base), Some(b));
        }
        let o = Allocation { base: 0x9000, size: 100, origin: Origin::Offload, ..a };
        t.insert(o);
        assert_eq!(t.containing(0x9063), Some(o));
        assert_eq!(t.containing(0x9064), None);
    }

    #[test]
    fn threads_never_take_one_block_twice() {
        let t: &'static Table = Box::leak(Box::new(Table::new()));
        let a = Allocation { base: 0, size: 8, device: 0, kind: AllocKind::Default, origin: Origin::OpenMp };
        for round in 0..50u64 {
            let base = 0x10_0000 + round * 32;
            t.insert(Allocation { base, ..a });
            let takers: Vec<_> = (0..4).map(|_| std::thread::spawn(move || t.remove(base).is_some())).collect();
            let won = takers.into_iter().map(|h| h.join().unwrap()).filter(|&w| w).count();
            assert_eq!(won, 1);
        }
    }
}
