//! OpenMP's state of one device: its mapping table and the kernels of the
//! libraries loaded on it, beside the device layer's [`Device`] it
//! dereferences to.

use super::mapping::MappingTable;
use crate::base::error::OffloadError;
use crate::base::fork::ForkLocks;
use crate::base::hash::AddrHash;
use crate::device::Device;
use crate::plugins::KernelHandle;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

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

/// A device as OpenMP sees it.
pub struct OmpDevice {
    /// The device layer's device (the plugin, memory, copies).
    pub device: &'static Device,
    pub table: MappingTable,
    /// Region id → kernel, for every loaded library.
    pub(super) kernels: RwLock<HashMap<usize, Kernel, AddrHash>>,
    /// Bumped after every change of `kernels`; validates `kernel_cache`.
    pub(super) kernels_version: AtomicU64,
    /// Recently launched kernels (see [`OmpDevice::kernel`]).
    kernel_cache: [KernelSlot; KERNEL_CACHE_SLOTS],
    /// Libraries whose image is loaded here → the plugin's image handle.
    pub(super) loaded_libs: Mutex<HashMap<usize, crate::plugins::ImageHandle>>,
    /// Registry generation this device has caught up with (lazy loading).
    pub(super) loaded_generation: AtomicU64,
}

impl std::ops::Deref for OmpDevice {
    type Target = Device;
    #[inline(always)]
    fn deref(&self) -> &Device {
        self.device
    }
}

impl std::fmt::Debug for OmpDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.device.fmt(f)
    }
}

impl OmpDevice {
    pub fn new(device: &'static Device) -> Self {
        OmpDevice {
            device,
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

    /// Fork safety: the kernel map, the loaded-library map and the mapping table.
    pub(super) fn lock_for_fork(&'static self, held: &mut ForkLocks) -> bool {
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
pub fn missing_kernel(dev: &OmpDevice, name: &str) -> OffloadError {
    OffloadError::MissingKernel { device: dev.id, name: name.into() }
}

/// Error for a kernel launch whose region id no loaded library knows.
pub fn unknown_region(region_id: usize) -> OffloadError {
    OffloadError::UnknownRegion(region_id)
}
