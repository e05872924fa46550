//! OpenMP's semantics over the device layer: registered libraries and their
//! images ([`loading`]), OpenMP's per-device state ([`device`]), the
//! mapping tables ([`mapping`]), data motion ([`data`]), kernel launch
//! ([`launch`]), the `omp_*` device API ([`device_api`]), the offload policy
//! ([`outcome`]), interop and kernel record/replay. No `extern "C"` here:
//! the C face (`crate::c_api::openmp`) calls in with typed arguments.
//!
//! Lifetime: the [`Runtime`] is created on first use and lives until process
//! exit. `__tgt_rtl_init`/`deinit` only count references, so repeated
//! register/unregister cycles (older rustc does one per kernel) are cheap and
//! never tear down devices that other libraries still use.

pub mod args;
pub mod async_info;
pub mod constructs;
pub mod data;
pub mod device;
pub mod device_api;
pub mod entries;
pub mod interop;
pub mod launch;
pub mod lifecycle;
pub mod loading;
pub mod mapping;
pub mod outcome;
pub mod record_replay;
pub mod registry;

use crate::abi::ptr::Loc;
use crate::base::config::info;
use crate::base::diag::{self, Policy};
use crate::base::error::{OffloadError, Result};
use crate::base::libomp;
use device::OmpDevice;
use parking_lot::{Mutex, RwLock};
use registry::Registry;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Process-wide runtime state.
pub struct Runtime {
    refcount: AtomicUsize,
    /// The device layer's plugins and devices (shared with liboffload).
    hw: &'static crate::device::Registry,
    /// OpenMP's state of each device, by device number; filled when
    /// OpenMP first uses a device. Only ever grows; read without locks.
    pub(crate) devices: crate::device::DeviceList<OmpDevice>,
    registry: RwLock<Registry>,
    /// Bumped on every registration; devices compare it to load lazily.
    generation: AtomicU64,
    /// Requirement flags from `.requires` entries (0 = none seen).
    requirements: AtomicU64,
    /// Serialises image loading.
    load_lock: Mutex<()>,
    /// Why registered images got no device ("why no device"
    /// lines), printed once when a construct finds no device.
    no_device: Mutex<Vec<String>>,
}

static RUNTIME: LazyLock<Runtime> = LazyLock::new(Runtime::new);
/// Set once [`RUNTIME`] exists (the fork handlers touch nothing before).
static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The runtime if it was created already.
pub fn started() -> Option<&'static Runtime> {
    STARTED.load(Ordering::Acquire).then(get)
}

/// The runtime, created on first use.
pub fn get() -> &'static Runtime {
    &RUNTIME
}

pub use lifecycle::{at_library_fini, set_startup_objects, watch_exit};

impl crate::base::fork::Participant for Runtime {
    fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        crate::base::intern::lock_for_fork(held)
            && interop::lock_for_fork(held)
            && crate::tools::profile::lock_for_fork(held)
            && crate::tools::ompt::trace::lock_for_fork(held)
            && held.write(&self.registry)
            && held.mutex(&self.load_lock)
            && held.mutex(&self.no_device)
            && self.devices.lock_for_fork(held)
            && self.devices.all().into_iter().all(|d| d.lock_for_fork(held))
    }

    fn forked_child(&'static self) {
        // Copies back that parent threads had in hand never complete here.
        for dev in self.devices.all() {
            dev.table.forget_copies_in_flight();
        }
    }
}

impl Runtime {
    fn new() -> Self {
        STARTED.store(true, Ordering::Release);
        crate::device::memory::openmp_started();
        Runtime {
            refcount: AtomicUsize::new(0),
            hw: crate::device::registry(),
            devices: crate::device::DeviceList::default(),
            registry: RwLock::new(Registry::default()),
            generation: AtomicU64::new(0),
            requirements: AtomicU64::new(0),
            load_lock: Mutex::new(()),
            no_device: Mutex::new(Vec::new()),
        }
    }

    /// Joins the fork handlers (with the device layer), once.
    fn join_fork_handlers(&'static self) {
        static JOINED: std::sync::Once = std::sync::Once::new();
        JOINED.call_once(|| {
            self.hw.join_fork_handlers();
            crate::base::fork::register(self);
        });
    }

    /// `__tgt_rtl_init`: one more reference.
    pub fn init(&self) {
        let n = self.refcount.fetch_add(1, Ordering::AcqRel) + 1;
        crate::debug!("runtime reference count {n}");
    }

    /// `__tgt_rtl_deinit`: one reference less (never below zero).
    pub fn deinit(&self) {
        let last = self.refcount.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1)) == Ok(1);
        if !last {
            return;
        }
        if crate::tools::ompt::on() {
            // Device traces end (their last buffers delivered) before the devices go.
            crate::tools::ompt::trace::shutdown();
            // 22.1 deinitialises its devices when the last library goes.
            for dev in self.devices.all() {
                crate::tools::ompt::device_finalize(dev.id);
            }
        }
        crate::tools::profile::write();
        if crate::base::config().info_on(info::DUMP_TABLE) {
            // LLVM prints the tables once more when the runtime goes down.
            self.dump_tables_reversed("libomptarget:0:0");
        }
        self.hw.release_cached();
    }

    /// Offloading disabled by `OMP_TARGET_OFFLOAD=disabled`: no plugin is used.
    fn offload_disabled(&self) -> bool {
        libomp::target_offload() == 0
    }

    /// OpenMP's state of device `id`, made the first time OpenMP uses it.
    #[cold]
    #[inline(never)]
    fn omp_device(&self, id: usize) -> Option<&'static OmpDevice> {
        if let Some(d) = self.devices.get(id) {
            return Some(d);
        }
        let device = self.hw.get(id)?;
        self.devices.get_or_init(id, || OmpDevice::new(device))
    }

    /// Number of devices (`omp_get_num_devices`): every device exposed so
    /// far, by either API.
    #[inline]
    pub fn num_devices(&self) -> usize {
        self.hw.len()
    }

    /// The device with user number `id`, its pending images loaded.
    /// Errors for numbers out of range (callers decide whether that is fatal).
    pub fn device(&self, id: i64) -> Result<&'static OmpDevice> {
        let dev = usize::try_from(id)
            .ok()
            .and_then(|i| self.omp_device(i))
            .ok_or_else(|| OffloadError::NoSuchDevice { device: id, available: self.num_devices() })?;
        if dev.generation() != self.generation.load(Ordering::Acquire) {
            self.load_pending(dev)?;
        }
        Ok(dev)
    }

    /// Like [`Runtime::device`] but aborts for a bad number, as `getDevice` callers in LLVM do.
    #[inline]
    pub fn device_or_fatal(&self, id: i64) -> &'static OmpDevice {
        if let Some(dev) = self.device_ready(id) {
            return dev;
        }
        self.device_or_fatal_slow(id)
    }

    /// Device `id` if it exists and has caught up with the registry (every
    /// registered image it takes is loaded): two loads and a compare, the
    /// test every construct makes. `None` for anything else, including the
    /// initial device's number.
    #[inline]
    pub fn device_ready(&self, id: i64) -> Option<&'static OmpDevice> {
        let dev = usize::try_from(id).ok().and_then(|i| self.devices.get(i))?;
        (dev.generation() == self.generation.load(Ordering::Acquire)).then_some(dev)
    }

    #[cold]
    #[inline(never)]
    fn device_or_fatal_slow(&self, id: i64) -> &'static OmpDevice {
        match self.device(id) {
            Ok(d) => d,
            Err(OffloadError::NoSuchDevice { device, available }) => diag::fatal_bad_device(device, available),
            Err(e) => {
                diag::report(&e.to_string());
                diag::fatal(1, &format!("failed to load images on device '{id}'"))
            }
        }
    }

    /// `checkDevice`: resolves `-1` to the default device and decides
    /// whether to offload at all. `None` = decline (the caller runs the host
    /// version, or a data call does nothing).
    #[inline]
    pub fn check_device(&self, device_id: i64, loc: &Loc) -> Option<i64> {
        if self.policy() == Policy::Disabled {
            return None;
        }
        // The default-device ICV is per task and `omp_set_default_device`
        // may change it at any time, so it is asked for on every call.
        let id = if device_id == -1 { libomp::default_device() as i64 } else { device_id };
        let n = self.num_devices();
        if n == 0 {
            self.handle_outcome(false, loc);
            return None;
        }
        if id == n as i64 {
            return None;
        }
        Some(id)
    }

    /// Kernel for a region id on a device.
    #[inline] // Every launch: the hit stays in the caller, the errors out of line.
    pub fn kernel(&self, dev: &OmpDevice, region_id: usize) -> Result<device::Kernel> {
        match dev.kernel(region_id) {
            Some(k) if k.handle != device::MISSING_KERNEL => Ok(k),
            other => Err(kernel_error(dev, region_id, other)),
        }
    }

    /// INFO helper usable by submodules.
    #[inline]
    pub(crate) fn info_on(bits: u32) -> bool {
        crate::base::config().info_on(bits)
    }
}

/// Why [`Runtime::kernel`] has no kernel to launch.
#[cold]
#[inline(never)]
fn kernel_error(dev: &OmpDevice, region_id: usize, found: Option<device::Kernel>) -> crate::base::error::OffloadError {
    match found {
        Some(k) => device::missing_kernel(dev, k.name),
        None => device::unknown_region(region_id),
    }
}

/// Whether INFO bit `KERNEL_ARGS` is on (used by the launch path).
#[inline]
pub(crate) fn info_kernel_args() -> bool {
    Runtime::info_on(info::KERNEL_ARGS)
}
