//! One user-visible device: its plugin, its mapping table, the images loaded
//! on it and the kernels resolved from them.

pub mod image;
pub mod queue;

use crate::base::error::{OffloadError, Result};
use crate::openmp::mapping::MappingTable;
use crate::plugins::{AllocKind, KernelHandle, Plugin};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// Hashing for maps keyed by addresses (region ids): one multiply instead
/// of SipHash, which showed up in every launch's profile. Keys are program
/// addresses, not attacker-chosen input.
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
}

/// `BuildHasher` of [`AddrHasher`].
pub type AddrHash = std::hash::BuildHasherDefault<AddrHasher>;

/// A kernel resolved on this device.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    pub handle: KernelHandle,
    /// Leaked once per kernel and device: launches copy it without
    /// touching a shared reference count.
    pub name: &'static str,
}

const KERNEL_CACHE_SLOTS: usize = 16;

/// One entry of a device's kernel cache: a sequence lock over plain atomic
/// words (odd stamp: being written). A reader that sees the same even stamp
/// before and after reading the words has a consistent entry; it never
/// waits, a torn read is a miss.
#[derive(Default)]
struct KernelSlot {
    stamp: AtomicU64,
    region: AtomicUsize,
    version: AtomicU64,
    handle: AtomicU64,
    name_ptr: AtomicUsize,
    name_len: AtomicUsize,
}

impl KernelSlot {
    /// The slot's handle and name pointer for `region_id` at `version`, and
    /// what `more` reads of the slot, all under one stamp read twice
    /// (`None`: another entry, an empty slot, or a torn read).
    #[inline(always)]
    fn read<T>(&self, region_id: usize, version: u64, more: impl FnOnce(&Self) -> T) -> Option<(u64, usize, T)> {
        let s = self.stamp.load(Ordering::Acquire);
        let (r, v) = (self.region.load(Ordering::Relaxed), self.version.load(Ordering::Relaxed));
        let (handle, p) = (self.handle.load(Ordering::Relaxed), self.name_ptr.load(Ordering::Relaxed));
        let extra = more(self);
        fence(Ordering::Acquire);
        if s & 1 != 0 || p == 0 || r != region_id || v != version || self.stamp.load(Ordering::Relaxed) != s {
            return None;
        }
        Some((handle, p, extra))
    }

    #[inline]
    fn get(&self, region_id: usize, version: u64) -> Option<Kernel> {
        let (handle, p, len) = self.read(region_id, version, |s| s.name_len.load(Ordering::Relaxed))?;
        // SAFETY: `p`/`len` were stored together from one `&'static str` under the stamp read twice in `read`.
        let name = unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(p as *const u8, len)) };
        Some(Kernel { handle, name })
    }

    /// [`KernelSlot::get`] for the handle alone (a fast launch needs no name).
    #[inline(always)]
    fn get_handle(&self, region_id: usize, version: u64) -> Option<crate::plugins::KernelHandle> {
        self.read(region_id, version, |_| ()).map(|(handle, _, ())| handle)
    }

    /// Fills the slot unless another thread is writing it (then it stays as is).
    fn set(&self, region_id: usize, version: u64, k: Kernel) {
        let s = self.stamp.load(Ordering::Relaxed);
        if s & 1 != 0 || self.stamp.compare_exchange(s, s + 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return;
        }
        fence(Ordering::Release);
        self.region.store(region_id, Ordering::Relaxed);
        self.version.store(version, Ordering::Relaxed);
        self.handle.store(k.handle, Ordering::Relaxed);
        self.name_ptr.store(k.name.as_ptr() as usize, Ordering::Relaxed);
        self.name_len.store(k.name.len(), Ordering::Relaxed);
        self.stamp.store(s + 2, Ordering::Release);
    }
}

/// A device with a user device number.
pub struct Device {
    /// User device number (`0..omp_get_num_devices()`).
    pub id: usize,
    pub plugin: &'static dyn Plugin,
    /// The plugin's own number for this device.
    pub plugin_device: usize,
    /// Whether the plugin queues work (`Plugin::has_queues`), read once.
    pub queued: bool,
    /// Synchronous copies are plain `memcpy`s (`Plugin::memory_is_host`,
    /// no queues), read once.
    pub direct_copies: bool,
    /// Kernels run to completion through `Plugin::launch_plain`
    /// (`Plugin::launches_plain`, no queues), read once.
    pub plain_launch: bool,
    pub table: MappingTable,
    /// Region id → kernel, for every loaded library.
    pub(super) kernels: RwLock<HashMap<usize, Kernel, AddrHash>>,
    /// Bumped after every change of `kernels`; validates `kernel_cache`.
    pub(super) kernels_version: AtomicU64,
    /// Recently launched kernels (see [`Device::kernel`]).
    kernel_cache: [KernelSlot; KERNEL_CACHE_SLOTS],
    /// Libraries whose image is loaded here → the plugin's image handle.
    pub(super) loaded_libs: Mutex<HashMap<usize, crate::plugins::ImageHandle>>,
    /// Registry generation this device has caught up with (lazy loading).
    pub(super) loaded_generation: AtomicU64,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({} = {}:{})", self.id, self.plugin.name(), self.plugin_device)
    }
}

impl Device {
    pub fn new(id: usize, plugin: &'static dyn Plugin, plugin_device: usize) -> Self {
        Device {
            id,
            plugin,
            plugin_device,
            queued: plugin.has_queues(),
            direct_copies: plugin.memory_is_host() && !plugin.has_queues(),
            plain_launch: plugin.launches_plain() && !plugin.has_queues(),
            table: MappingTable::default(),
            kernels: RwLock::new(HashMap::default()),
            kernels_version: AtomicU64::new(0),
            kernel_cache: Default::default(),
            loaded_libs: Mutex::new(HashMap::new()),
            loaded_generation: AtomicU64::new(0),
        }
    }

    /// The kernel for a region id, if its library is loaded here.
    #[inline]
    pub fn kernel(&self, region_id: usize) -> Option<Kernel> {
        // Every launch looks its kernel up: a lock-free direct-mapped cache
        // in front of the map (readers write nothing, so concurrent launches
        // do not move a lock word's cache line between cores).
        let version = self.kernels_version.load(Ordering::Acquire);
        let slot = self.cache_slot(region_id);
        if let Some(k) = slot.get(region_id, version) {
            return Some(k);
        }
        self.kernel_miss(region_id, version, slot)
    }

    /// The handle of the kernel for a region id, for a fast launch: `None`
    /// when its library is not loaded here or the image lacks the kernel.
    #[inline(always)]
    pub fn launch_handle(&self, region_id: usize) -> Option<crate::plugins::KernelHandle> {
        let version = self.kernels_version.load(Ordering::Acquire);
        let slot = self.cache_slot(region_id);
        let handle = match slot.get_handle(region_id, version) {
            Some(h) => h,
            None => self.kernel_miss(region_id, version, slot)?.handle,
        };
        (handle != MISSING_KERNEL).then_some(handle)
    }

    /// The kernel-cache slot of a region id.
    #[inline(always)]
    fn cache_slot(&self, region_id: usize) -> &KernelSlot {
        &self.kernel_cache[(region_id ^ (region_id >> 7)) % KERNEL_CACHE_SLOTS]
    }

    /// [`Device::kernel`] past the cache: the map, then the slot is filled.
    #[cold]
    #[inline(never)]
    fn kernel_miss(&self, region_id: usize, version: u64, slot: &KernelSlot) -> Option<Kernel> {
        let k = self.kernels.read().get(&region_id).copied()?;
        slot.set(region_id, version, k);
        Some(k)
    }

    #[inline]
    pub fn alloc(&self, size: u64, kind: AllocKind) -> Result<u64> {
        self.alloc_for(size, kind, 0)
    }

    /// Allocation for the host range at `host` (reported to OMPT tools).
    #[inline]
    pub fn alloc_for(&self, size: u64, kind: AllocKind, host: usize) -> Result<u64> {
        // One test for record/replay and tools (`env::slow`).
        if !crate::base::fast_path::none() {
            return self.alloc_hooked(size, kind, host);
        }
        self.plugin.alloc(self.plugin_device, size, kind)
    }

    /// [`Device::alloc_for`] when some hook may be on.
    #[inline(never)]
    fn alloc_hooked(&self, size: u64, kind: AllocKind, host: usize) -> Result<u64> {
        // Kernel record/replay: device memory comes from one recorded block.
        if let Some(p) = crate::openmp::record_replay::alloc(self, size, kind) {
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

    #[inline]
    pub fn free(&self, ptr: u64, kind: AllocKind) -> Result<()> {
        if !crate::base::fast_path::none() {
            return self.free_hooked(ptr, kind);
        }
        self.plugin.free(self.plugin_device, ptr, kind)
    }

    /// [`Device::free`] when some hook may be on.
    #[inline(never)]
    fn free_hooked(&self, ptr: u64, kind: AllocKind) -> Result<()> {
        if crate::openmp::record_replay::owns(self.id, ptr) {
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

    /// Fork safety: the kernel map, the loaded-library map and the mapping table.
    fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        held.write(&self.kernels) && held.mutex(&self.loaded_libs) && self.table.lock_for_fork(held)
    }

    pub(super) fn generation(&self) -> u64 {
        self.loaded_generation.load(Ordering::Acquire)
    }
}

/// Kernel handle recorded for an offload entry whose kernel the device image
/// lacks (the host plugin's handles are addresses, the GPU plugins' are
/// indices from 0: none is all ones).
pub(crate) const MISSING_KERNEL: crate::plugins::KernelHandle = u64::MAX;

/// Error for a launch of a kernel that was missing when its image was loaded.
/// (22.1 launches the host's region id as if it were a kernel and crashes.)
#[cold]
pub fn missing_kernel(dev: &Device, name: &str) -> OffloadError {
    OffloadError::MissingKernel { device: dev.id, name: name.into() }
}

/// Error for a kernel launch whose region id no loaded library knows.
pub fn unknown_region(region_id: usize) -> OffloadError {
    OffloadError::UnknownRegion(region_id)
}

/// Most devices one process can have (all plugins together).
pub const MAX_DEVICES: usize = 256;

/// The user-visible devices: append-only, so lookups need no lock
/// (the hot path of every launch and data call reads it).
pub struct DeviceList {
    slots: Box<[std::sync::OnceLock<Arc<Device>>]>,
    len: std::sync::atomic::AtomicUsize,
    push: Mutex<()>,
}

impl Default for DeviceList {
    fn default() -> Self {
        DeviceList {
            slots: (0..MAX_DEVICES).map(|_| std::sync::OnceLock::new()).collect(),
            len: std::sync::atomic::AtomicUsize::new(0),
            push: Mutex::new(()),
        }
    }
}

impl DeviceList {
    /// Number of devices.
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Device with user number `id`.
    #[inline]
    pub fn get(&self, id: usize) -> Option<&Arc<Device>> {
        if id < self.len() { self.slots[id].get() } else { None }
    }
    /// Appends a device built from its user number; `None` when full.
    pub fn push_with(&self, make: impl FnOnce(usize) -> Device) -> Option<usize> {
        let _guard = self.push.lock();
        let id = self.len();
        let slot = self.slots.get(id)?;
        let _ = slot.set(Arc::new(make(id)));
        self.len.store(id + 1, Ordering::Release);
        Some(id)
    }
    /// Fork safety: the list's lock and every device's locks (see [`super::fork`]).
    pub fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        held.mutex(&self.push) && (0..self.len()).filter_map(|i| self.slots[i].get()).all(|d| d.lock_for_fork(held))
    }
    /// All devices in user-number order.
    pub fn all(&self) -> Vec<Arc<Device>> {
        (0..self.len()).filter_map(|i| self.slots[i].get().cloned()).collect()
    }
}
