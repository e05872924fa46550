//! The API-neutral device layer: both faces (OpenMP in `crate::openmp`,
//! liboffload in `crate::liboffload`) reach devices only through it, and
//! nothing below it knows it exists.
//!
//! - [`Device`] and the [`Registry`]: the plugins, the order in which their
//!   devices get numbers (the numbers both APIs use), device properties.
//! - [`memory`]: allocation, copies in every direction, fill, exchange, and
//!   the one table of allocations made through either API.
//! - [`queue`]: the in-order work of one user of a device on a plugin queue,
//!   with the clean-up that waits for it (OpenMP constructs).
//! - [`work_queue`]: long-lived in-order queues with events and host
//!   functions, run by a host thread (liboffload queues).
//! - [`program`]: images loaded on a device and their symbols.
//! - [`rpc`]: host-side RPC handlers an API registered for a plugin's RPC server.
//! - [`record_memory`]: the device memory kernel record/replay hands out.
//!
//! The one door to the tools (OMPT, the profile timeline) is here too: every
//! allocation, copy and launch that goes through [`Device`] or a [`queue::Queue`]
//! reports itself, so neither face calls a tool for device work.

pub mod memory;
pub mod program;
pub mod queue;
pub mod record_memory;
pub mod rpc;
pub mod work_queue;

use crate::base::fork::{ForkLocks, Participant};
use crate::plugins::amdgpu::AmdgpuPlugin;
use crate::plugins::cuda::CudaPlugin;
use crate::plugins::host::HostPlugin;
use crate::plugins::remote::RemotePlugin;
use crate::plugins::{DeviceProperties, Plugin};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

pub use crate::plugins::MAX_DEVICES;

/// One device of one plugin, with the number both APIs know it by.
pub struct Device {
    /// Device number, in the order devices were exposed (`0..omp_get_num_devices()`).
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
    properties: OnceLock<DeviceProperties>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({} = {}:{})", self.id, self.plugin.name(), self.plugin_device)
    }
}

impl Device {
    fn new(id: usize, plugin: &'static dyn Plugin, plugin_device: usize) -> Self {
        Device {
            id,
            plugin,
            plugin_device,
            queued: plugin.has_queues(),
            direct_copies: plugin.memory_is_host() && !plugin.has_queues(),
            plain_launch: plugin.launches_plain() && !plugin.has_queues(),
            properties: OnceLock::new(),
        }
    }

    /// The device's properties, asked from its plugin once.
    pub fn properties(&self) -> &DeviceProperties {
        self.properties.get_or_init(|| self.plugin.properties(self.plugin_device))
    }

    /// The plugin's unique id string of the device.
    pub fn uid(&self) -> String {
        self.plugin.uid(self.plugin_device)
    }

    /// Whether the device's memory is host memory that the runtime itself
    /// reads and writes (the host plugin): pointers into it must be checked
    /// before use, since nothing else would catch a bad one.
    pub fn memory_is_host(&self) -> bool {
        self.plugin.memory_is_host()
    }
}

/// An append-only list of per-device values indexed by device number:
/// look-ups take no lock (the hot path of every construct reads it: one
/// load and a null test).
pub struct DeviceList<T: 'static> {
    /// Null until filled; a filled slot never changes (its value is leaked
    /// for the rest of the process).
    slots: [AtomicPtr<T>; MAX_DEVICES],
    len: AtomicUsize,
    /// Serialises filling (look-ups never take it).
    filling: Mutex<()>,
}

impl<T: 'static> Default for DeviceList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: 'static> DeviceList<T> {
    pub const fn new() -> Self {
        DeviceList {
            slots: [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_DEVICES],
            len: AtomicUsize::new(0),
            filling: Mutex::new(()),
        }
    }

    /// One past the highest number filled.
    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of device `id`, if filled.
    #[inline(always)]
    pub fn get(&self, id: usize) -> Option<&'static T> {
        let p = self.slots.get(id)?.load(Ordering::Acquire);
        // SAFETY: a non-null slot holds a leaked `Box<T>` (see `get_or_init`), never freed or changed.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// The value of device `id`, made by `make` if it has none yet (values
    /// live until the process ends). `None` past [`MAX_DEVICES`].
    pub fn get_or_init(&self, id: usize, make: impl FnOnce() -> T) -> Option<&'static T> {
        let slot = self.slots.get(id)?;
        if let Some(v) = self.get(id) {
            return Some(v);
        }
        let _one_at_a_time = self.filling.lock();
        if let Some(v) = self.get(id) {
            return Some(v);
        }
        let v: &'static T = Box::leak(Box::new(make()));
        slot.store(v as *const T as *mut T, Ordering::Release);
        self.len.fetch_max(id + 1, Ordering::AcqRel);
        Some(v)
    }

    /// Every filled value in device order.
    pub fn all(&self) -> Vec<&'static T> {
        (0..self.len()).filter_map(|i| self.get(i)).collect()
    }

    /// Fork participation: the filling lock.
    pub fn lock_for_fork(&'static self, held: &mut ForkLocks) -> bool {
        held.mutex(&self.filling)
    }
}

/// The plugins and their devices. Devices get numbers in the order they
/// are exposed: OpenMP exposes a device when an image for it registers (or
/// at `__tgt_init_all_rtls`), liboffload exposes all at `olInit`; both see
/// one numbering.
pub struct Registry {
    plugins: Vec<&'static dyn Plugin>,
    /// Per plugin, once initialised: for each of its devices, its number
    /// once exposed.
    plugin_devices: Mutex<Vec<Option<Vec<Option<usize>>>>>,
    /// Held while exposing, so numbers are given out one at a time.
    expose_lock: Mutex<()>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(Registry::new);
/// The exposed devices, by number (outside the registry's lazy
/// initialisation: a look-up is one array index).
static DEVICES: DeviceList<Device> = DeviceList::new();

/// Device `id`, if exposed (without initialising anything).
#[inline(always)]
pub fn get(id: usize) -> Option<&'static Device> {
    DEVICES.get(id)
}

/// The plugins and devices of the process, created on first use (creating a
/// plugin touches no driver).
#[inline]
pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Participant for Registry {
    fn before_fork(&'static self) {
        record_memory::before_fork();
    }

    fn lock_for_fork(&'static self, held: &mut ForkLocks) -> bool {
        held.mutex(&self.expose_lock)
            && held.mutex(&self.plugin_devices)
            && DEVICES.lock_for_fork(held)
            && memory::lock_for_fork(held)
            && record_memory::lock_for_fork(held)
            && program::lock_for_fork(held)
            && work_queue::lock_for_fork(held)
            && rpc::lock_for_fork(held)
            && self.plugins.iter().all(|p| p.lock_for_fork(held))
    }

    fn forked_child(&'static self) {
        for p in &self.plugins {
            p.forked_child();
        }
        work_queue::forked_child();
        rpc::forked_child();
    }
}

impl Registry {
    fn new() -> Self {
        // LLVM's plugin order in this build: host, CUDA, AMDGPU; then the
        // devices of MPI server ranks, which only exist on rank 0
        // of an MPI job with servers.
        let host: &'static dyn Plugin = Box::leak(Box::new(HostPlugin::default()));
        let cuda: &'static dyn Plugin = Box::leak(Box::new(CudaPlugin::default()));
        let amdgpu: &'static dyn Plugin = Box::leak(Box::new(AmdgpuPlugin::default()));
        let remote: &'static dyn Plugin = Box::leak(Box::new(RemotePlugin::default()));
        let plugins = vec![host, cuda, amdgpu, remote];
        Registry { plugin_devices: Mutex::new(vec![None; plugins.len()]), plugins, expose_lock: Mutex::new(()) }
    }

    /// Joins the fork handlers' set (called by each face when it starts).
    pub fn join_fork_handlers(&'static self) {
        crate::base::fork::register(self);
    }

    /// The plugins, in LLVM's order.
    pub fn plugins(&self) -> &[&'static dyn Plugin] {
        &self.plugins
    }

    /// Number of devices exposed so far.
    #[inline]
    pub fn len(&self) -> usize {
        DEVICES.len()
    }

    pub fn is_empty(&self) -> bool {
        DEVICES.is_empty()
    }

    /// Device `id`, if exposed.
    #[inline]
    pub fn get(&self, id: usize) -> Option<&'static Device> {
        DEVICES.get(id)
    }

    /// Every exposed device in number order.
    pub fn all(&self) -> Vec<&'static Device> {
        DEVICES.all()
    }

    /// Initialises a plugin (once) and returns its number of devices.
    pub fn plugin_device_count(&self, plugin_index: usize) -> usize {
        let mut pd = self.plugin_devices.lock();
        self.plugin_slots(&mut pd, plugin_index).len()
    }

    fn plugin_slots<'a>(&self, pd: &'a mut [Option<Vec<Option<usize>>>], plugin_index: usize) -> &'a mut Vec<Option<usize>> {
        pd[plugin_index].get_or_insert_with(|| {
            let plugin = self.plugins[plugin_index];
            let n = plugin.number_of_devices();
            crate::debug!("plugin {} initialised with {n} devices", plugin.name());
            vec![None; n]
        })
    }

    /// The number of a plugin's device, if it is exposed already.
    pub fn exposed(&self, plugin_index: usize, device: usize) -> Option<usize> {
        self.plugin_devices.lock()[plugin_index].as_ref().and_then(|s| s.get(device).copied().flatten())
    }

    /// Exposes a plugin's device as the next device (once) and returns its number.
    pub fn expose(&self, plugin_index: usize, device: usize) -> Option<usize> {
        let _one_at_a_time = self.expose_lock.lock();
        let mut pd = self.plugin_devices.lock();
        let slots = self.plugin_slots(&mut pd, plugin_index);
        let slot = slots.get_mut(device)?;
        if let Some(id) = *slot {
            return Some(id);
        }
        let plugin = self.plugins[plugin_index];
        let id = DEVICES.len();
        let dev = DEVICES.get_or_init(id, || Device::new(id, plugin, device))?;
        *slot = Some(id);
        drop(pd);
        plugin.device_exposed(device, id);
        crate::tools::ompt::device_initialize(id, dev as *const Device as usize, plugin, device);
        crate::debug!("plugin {} device {device} is device {id}", plugin.name());
        Some(id)
    }

    /// Initialises a plugin and exposes all its devices.
    pub fn expose_all(&self, plugin_index: usize) -> Vec<usize> {
        let n = self.plugin_device_count(plugin_index);
        (0..n).filter_map(|d| self.expose(plugin_index, d)).collect()
    }

    /// Every plugin initialised (drivers included) and every device
    /// exposed, in plugin order: each plugin's devices (empty when it has
    /// none).
    pub fn expose_every_device(&self) -> Vec<Vec<&'static Device>> {
        (0..self.plugins.len()).map(|pi| self.expose_all(pi).into_iter().filter_map(|id| self.get(id)).collect()).collect()
    }

    /// Frees memory the plugins keep for reuse (the OpenMP runtime's last deinit).
    pub fn release_cached(&self) {
        self.plugins.iter().for_each(|p| p.release_cached());
    }
}
