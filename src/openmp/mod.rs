//! The runtime core: registered libraries, devices, the mapping tables, data
//! motion and kernel launch. No `extern "C"` here; the `api` shims call in
//! with typed arguments.
//!
//! Lifetime: the [`Runtime`] is created on first use and lives until process
//! exit. `__tgt_rtl_init`/`deinit` only count references, so repeated
//! register/unregister cycles (older rustc does one per kernel) are cheap and
//! never tear down devices that other libraries still use.

pub mod async_info;
pub mod data;
pub mod device;
pub mod device_api;
pub mod entries;
pub mod interop;
pub mod launch;
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
use entries::Entry;
use mapping::MapEntry;
use parking_lot::{Mutex, RwLock};
use registry::{DeviceImage, RegisteredLib, Registry};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Builds the indirect-call table of a freshly loaded image (abi-reference
/// §7.9) and publishes it in the image's `__omp_rtl_device_environment`
/// (offsets 24 and 32), as 22.1's libomptarget does after the plugin loaded
/// the image; images without that global (the host plugin's) are skipped.
/// Pairs `{host function address, device function address}` sorted by host
/// address: one per `declare target indirect` function (the device global
/// holds the device address), one per slot of an indirect vtable.
fn setup_indirect_call_table(dev: &OmpDevice, image: crate::plugins::ImageHandle, entries: &[Entry]) -> Result<()> {
    use crate::abi::{OMP_DECLARE_TARGET_INDIRECT, OMP_DECLARE_TARGET_INDIRECT_VTABLE};
    let indirect: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.is_openmp() && e.size != 0 && e.flags & (OMP_DECLARE_TARGET_INDIRECT | OMP_DECLARE_TARGET_INDIRECT_VTABLE) != 0)
        .collect();
    if indirect.is_empty() {
        return Ok(());
    }
    let Ok(env) = dev.plugin.get_global(dev.plugin_device, image, "__omp_rtl_device_environment", 48) else {
        return Ok(());
    };
    let mut pairs: Vec<[u64; 2]> = Vec::new();
    for e in indirect {
        // A vtable entry's size is the vtable's; its device global is one pointer.
        let size = if e.flags & OMP_DECLARE_TARGET_INDIRECT_VTABLE != 0 { 8 } else { e.size };
        let global = dev
            .plugin
            .get_global(dev.plugin_device, image, &e.name, size)
            .inspect_err(|_| diag::report(&format!("Failed to load symbol {}", e.name)))?;
        let mut value = 0u64;
        // SAFETY: `value` is a live local of 8 bytes.
        unsafe { dev.retrieve(&mut value as *mut u64 as usize, global, 8)? };
        if e.flags & OMP_DECLARE_TARGET_INDIRECT_VTABLE != 0 {
            for k in 0..e.size / 8 {
                pairs.push([e.addr as u64 + 8 * k, value + 8 * k]);
            }
        } else {
            pairs.push([e.addr as u64, value]);
        }
    }
    pairs.sort_unstable();
    let bytes = (pairs.len() * 16) as u64;
    let table = dev.alloc(bytes, crate::plugins::AllocKind::Device)?;
    // SAFETY: `pairs` is a live buffer of `bytes` bytes.
    unsafe { dev.submit(table, pairs.as_ptr() as usize, bytes)? };
    dev.write_u64(env + 24, table)?;
    dev.write_u64(env + 32, pairs.len() as u64)?;
    crate::debug!("device {}: indirect-call table of {} entries at {table:#x}", dev.id, pairs.len());
    Ok(())
}

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
    /// Why registered images got no device (issue 12's "why no device"
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

/// Address ranges of the objects loaded with the program (the executable
/// and its `DT_NEEDED` libraries), recorded by the library constructor.
/// They stay mapped until the process ends, so a descriptor inside one is
/// unregistered only by the program's exit handlers.
static STARTUP_OBJECTS: std::sync::OnceLock<Vec<(usize, usize)>> = std::sync::OnceLock::new();

/// Records the startup objects' loaded ranges (once, from the constructor).
pub fn set_startup_objects(ranges: Vec<(usize, usize)>) {
    let _ = STARTUP_OBJECTS.set(ranges);
}

/// Whether `addr` lies in an object loaded with the program.
fn in_startup_object(addr: usize) -> bool {
    STARTUP_OBJECTS.get().is_some_and(|r| r.iter().any(|&(lo, hi)| lo <= addr && addr < hi))
}

/// Destroyed with its thread's locals. glibc's `exit` runs the calling
/// thread's thread-local destructors before the exit handlers, so an
/// unregistration that finds this gone on its thread is the exit handlers'
/// (`main` returned or a thread called `exit`), not a `dlclose`.
struct ExitWatch;

impl Drop for ExitWatch {
    fn drop(&mut self) {}
}

thread_local! {
    static EXIT_WATCH: ExitWatch = const { ExitWatch };
    /// Set once [`EXIT_WATCH`] is armed on this thread (no destructor: it
    /// stays readable while the thread's other locals are destroyed).
    static WATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Arms [`EXIT_WATCH`] on this thread (its destructor is registered on first
/// use): the library constructor (the main thread) and every registration.
pub fn watch_exit() {
    if EXIT_WATCH.try_with(|_| ()).is_ok() {
        WATCHING.with(|w| w.set(true));
    }
}

/// Whether an unregistration on this thread comes from the exit handlers.
/// A thread that armed the watch knows (see [`ExitWatch`]). Any other
/// thread (one that calls `exit` without having registered a library, e.g.
/// from a parallel region) is taken to be exiting unless `dlclose` is
/// running the handlers, which its stack shows.
fn unregistering_at_exit() -> bool {
    if WATCHING.with(std::cell::Cell::get) {
        return EXIT_WATCH.try_with(|_| ()).is_err();
    }
    !in_dlclose()
}

/// Whether `dlclose` is on this thread's stack: the closing object's
/// `atexit` handlers run from `__cxa_finalize`, its `.fini_array` from
/// `dlclose` itself.
#[cold]
fn in_dlclose() -> bool {
    on_stack(&[b"__cxa_finalize", b"dlclose"])
}

/// Whether a function of one of these names (exported, so that `dladdr`
/// names it: libc's `dlopen`, `dlclose`, `__cxa_finalize`) is on this
/// thread's stack. For the rare decisions that depend on who called
/// (library constructor, unregistration); it walks the whole stack.
#[cold]
pub fn on_stack(names: &[&[u8]]) -> bool {
    use core::ffi::{CStr, c_int, c_void};
    const URC_NO_REASON: c_int = 0;
    const URC_END_OF_STACK: c_int = 5;
    unsafe extern "C" {
        fn _Unwind_Backtrace(trace: extern "C" fn(*mut c_void, *mut c_void) -> c_int, arg: *mut c_void) -> c_int;
        fn _Unwind_GetIP(context: *mut c_void) -> usize;
    }
    struct Search<'a> {
        names: &'a [&'a [u8]],
        found: bool,
    }
    extern "C" fn frame(context: *mut c_void, arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `Search` below, alive for the whole walk and used only here.
        let search = unsafe { &mut *arg.cast::<Search>() };
        // SAFETY: `context` is the unwinder's for this frame; `_Unwind_GetIP` only reads it.
        let ip = unsafe { _Unwind_GetIP(context) };
        // SAFETY: Dl_info is plain data; dladdr fills it (or returns 0) for any address.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `info` is a live local.
        if ip == 0 || unsafe { libc::dladdr(ip as *const c_void, &mut info) } == 0 || info.dli_sname.is_null() {
            return URC_NO_REASON;
        }
        // SAFETY: dladdr set `dli_sname` to a NUL-terminated symbol name of a loaded object.
        let name = unsafe { CStr::from_ptr(info.dli_sname) }.to_bytes();
        if search.names.contains(&name) {
            search.found = true;
            return URC_END_OF_STACK;
        }
        URC_NO_REASON
    }
    let mut search = Search { names, found: false };
    // SAFETY: `frame` matches the unwinder's callback type and only touches `search` through `arg`.
    unsafe { _Unwind_Backtrace(frame, (&raw mut search).cast()) };
    search.found
}

/// Library destructor (process exit): the images that libraries left loaded
/// are unloaded where the plugin wants it (device destructors of GPU images,
/// as 22.1 runs them at device deinit, from its own destructor).
pub fn at_library_fini() {
    let Some(rt) = started() else { return };
    for dev in rt.devices.all() {
        if !dev.plugin.unload_at_exit() {
            continue;
        }
        let images: Vec<(usize, crate::plugins::ImageHandle)> = dev.loaded_libs.lock().drain().collect();
        for (key, image) in images {
            if let Err(e) = dev.plugin.unload_binary(dev.plugin_device, image) {
                diag::report(&format!("device {}: unloading the image of library {key:#x} failed: {e}", dev.id));
            }
        }
    }
}

/// Names of kernels and globals, kept for the whole process (per-thread
/// kernel caches and diagnostics hold them without a count) but once per
/// distinct name: a library loaded and unloaded 1,000 times adds nothing
/// after its first load (issue 14).
static NAMES: Mutex<Option<std::collections::HashSet<&'static str>>> = Mutex::new(None);

/// One NUL-terminated copy of each device UID string (`omp_get_uid_from_device`),
/// kept for the process; a parking_lot lock so that fork handlers take it.
static UIDS: Mutex<Option<std::collections::HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);

/// The process-lifetime C string of a device UID.
pub fn intern_uid(s: String) -> &'static std::ffi::CStr {
    let mut m = UIDS.lock();
    m.get_or_insert_with(Default::default)
        .entry(s.clone())
        .or_insert_with(|| Box::leak(std::ffi::CString::new(s).unwrap_or_default().into_boxed_c_str()))
}

fn intern(name: &str) -> &'static str {
    let mut names = NAMES.lock();
    let set = names.get_or_insert_with(Default::default);
    if let Some(&s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.into());
    set.insert(s);
    s
}

impl crate::base::fork::Participant for Runtime {
    fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        held.mutex(&NAMES)
            && held.mutex(&UIDS)
            && interop::lock_for_fork(held)
            && crate::tools::profile::lock_for_fork(held)
            && crate::tools::ompt::trace::lock_for_fork(held)
            && held.write(&self.registry)
            && held.mutex(&self.load_lock)
            && held.mutex(&self.no_device)
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

    /// Exposes a plugin's device (see `device::Registry::expose`) and
    /// returns its number, with OpenMP's state made for it.
    fn expose_device(&self, plugin_index: usize, device: usize) -> Option<usize> {
        let id = self.hw.expose(plugin_index, device)?;
        self.omp_device(id)?;
        Some(id)
    }

    /// Initialises a plugin and exposes all its devices (`__tgt_init_all_rtls`).
    fn plugin_device_ids(&self, plugin_index: usize) -> Vec<usize> {
        let n = self.hw.plugin_device_count(plugin_index);
        (0..n).filter_map(|d| self.expose_device(plugin_index, d)).collect()
    }

    /// `__tgt_register_lib`.
    pub fn register_lib(&'static self, key: usize, entries: Vec<Entry>, images: Vec<DeviceImage>) -> Result<()> {
        watch_exit();
        self.join_fork_handlers();
        crate::tools::ompt::connect();
        crate::tools::profile::init();
        self.init();
        for e in entries.iter().filter(|e| e.is_openmp() && e.is_requires()) {
            self.add_requirements(e.data);
        }
        let mut device_images = std::collections::BTreeMap::new();
        if !self.offload_disabled() {
            for (index, img) in images.iter().enumerate() {
                let bytes = img.bytes();
                for (pi, plugin) in self.hw.plugins().iter().enumerate() {
                    if !plugin.is_compatible(bytes) {
                        continue;
                    }
                    // Reference (PluginManager::registerLib): a device becomes a
                    // user device when an image is compatible with it.
                    for d in 0..self.hw.plugin_device_count(pi) {
                        if self.hw.exposed(pi, d).is_some_and(|id| device_images.contains_key(&id)) {
                            continue;
                        }
                        if !plugin.is_device_compatible(d, bytes) {
                            continue;
                        }
                        if let Some(id) = self.expose_device(pi, d) {
                            device_images.entry(id).or_insert(index);
                        }
                    }
                }
            }
        }
        if !self.offload_disabled() {
            self.note_images_without_device(&images, &device_images);
        }
        crate::debug!(
            "registered library {key:#x}: {} entries, {} images, devices {:?}",
            entries.len(),
            images.len(),
            device_images.keys().collect::<Vec<_>>()
        );
        let mut reg = self.registry.write();
        reg.remove(key);
        reg.libs.push(RegisteredLib { key, entries, images, device_images });
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    fn add_requirements(&self, flags: u64) {
        // Reference (RequirementCollection): later libraries must agree on the
        // reverse-offload, unified-address and unified-shared-memory bits.
        const MUST_AGREE: [(u64, &str); 3] = [(0x2, "reverse_offload"), (0x4, "unified_address"), (0x8, "unified_shared_memory")];
        let old = self.requirements.load(Ordering::Acquire);
        if old != 0 {
            for (bit, clause) in MUST_AGREE {
                if old & bit != flags & bit {
                    diag::fatal(2, &format!("'#pragma omp requires {clause}' not used consistently!"));
                }
            }
        }
        self.requirements.fetch_or(flags, Ordering::AcqRel);
    }

    /// True under `requires unified_shared_memory`.
    pub fn unified_shared_memory(&self) -> bool {
        self.requirements.load(Ordering::Acquire) & crate::abi::OMP_REQ_UNIFIED_SHARED_MEMORY != 0
    }

    /// Records, for every image that no device took, one line saying why.
    fn note_images_without_device(&self, images: &[DeviceImage], device_images: &std::collections::BTreeMap<usize, usize>) {
        for (index, img) in images.iter().enumerate() {
            if device_images.values().any(|&i| i == index) {
                continue;
            }
            let bytes = img.bytes();
            let reasons: Vec<String> = self
                .hw
                .plugins()
                .iter()
                .filter(|p| p.is_compatible(bytes))
                .map(|p| {
                    p.why_no_device(bytes)
                        .unwrap_or_else(|| format!("{} image ({}): its devices are taken by other images", p.name(), img.arch()))
                })
                .collect();
            let line = if reasons.is_empty() {
                format!("image {index} ({}): no plugin of this build runs it", img.arch())
            } else {
                format!("image {index}: {}", reasons.join("; "))
            };
            self.no_device.lock().push(line);
        }
    }

    /// Prints the "why no device" lines once (a construct found no device).
    #[cold]
    #[inline(never)]
    fn explain_no_device(&self) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            for line in self.no_device.lock().iter() {
                diag::report(&format!("no device for {line}"));
            }
        });
    }

    /// `__tgt_unregister_lib`: forget the library's kernels and globals.
    pub fn unregister_lib(&self, key: usize) {
        // Drop the reference first: the last one prints the final table dump,
        // which still shows this library's globals, as LLVM's does.
        self.deinit();
        if in_startup_object(key) || unregistering_at_exit() {
            // Only the program's exit handlers unregister a descriptor of an
            // object loaded with the program, and a `dlopen`ed library still
            // open at exit is unregistered by them too, on the thread that
            // called `exit` (see `unregistering_at_exit`): the process is
            // exiting (issue 14). Constructs the
            // program queued (target nowait tasks that libomp's exit still
            // runs on its hidden-helper threads, other threads of an exit()
            // from a parallel region) may still launch this library's kernels
            // and use its globals, so everything stays until the process is
            // gone; device destructors run from the library destructor.
            crate::debug!("library {key:#x} unregistered during exit: its kernels and globals stay usable");
            return;
        }
        let removed = self.registry.write().remove(key);
        if let Some(lib) = removed {
            for dev in self.devices.all() {
                let Some(image) = dev.loaded_libs.lock().remove(&key) else {
                    continue;
                };
                let mut kernels = dev.kernels.write();
                for e in lib.entries.iter().filter(|e| e.is_openmp()) {
                    if e.is_kernel() {
                        kernels.remove(&e.addr);
                    } else if e.is_global()
                        && let Some(m) = dev.table.lookup(e.addr, e.size).entry()
                        && m.dyn_count() == mapping::INF
                    {
                        dev.table.remove(m);
                    }
                }
                drop(kernels);
                dev.kernels_version.fetch_add(1, Ordering::AcqRel);
                // The library's device code goes with it: its device
                // destructors run now (22.1 runs them at device deinit).
                if let Err(e) = dev.plugin.unload_binary(dev.plugin_device, image) {
                    diag::report(&format!("device {}: unloading the image of library {key:#x} failed: {e}", dev.id));
                }
            }
            crate::debug!("unregistered library {key:#x}");
        }
    }

    /// `__tgt_init_all_rtls`: initialise every plugin's devices now, except
    /// plugins that would load a driver for no registered image (they were
    /// initialised at registration if one of their images was registered).
    pub fn init_all(&'static self) {
        self.join_fork_handlers();
        crate::tools::ompt::connect();
        crate::tools::profile::init();
        if self.offload_disabled() {
            return;
        }
        for pi in 0..self.hw.plugins().len() {
            if self.hw.plugins()[pi].eager_init() {
                self.plugin_device_ids(pi);
            }
        }
    }

    /// Number of devices (`omp_get_num_devices`): every device exposed so
    /// far, by either API.
    #[inline]
    pub fn num_devices(&self) -> usize {
        self.hw.len()
    }

    /// The offload policy, computed once.
    #[inline]
    pub fn policy(&self) -> Policy {
        diag::policy(libomp::target_offload, || {
            // Computed once, at the first construct: with no device, say why
            // (offloading disabled by the environment records no lines).
            let n = self.num_devices();
            if n == 0 {
                self.explain_no_device();
            }
            n
        })
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

    /// Loads every registered image meant for `dev` that is not loaded yet
    /// (`loadImagesOntoDevice`): kernels resolved, globals mapped with INF counts.
    fn load_pending(&self, dev: &OmpDevice) -> Result<()> {
        let _guard = self.load_lock.lock();
        let generation = self.generation.load(Ordering::Acquire);
        if dev.generation() == generation {
            return Ok(());
        }
        let usm = self.unified_shared_memory();
        let reg = self.registry.read();
        for lib in &reg.libs {
            let Some(&index) = lib.device_images.get(&dev.id) else { continue };
            if dev.loaded_libs.lock().contains_key(&lib.key) {
                continue;
            }
            let image = &lib.images[index];
            let handle = dev.plugin.load_binary(dev.plugin_device, image.bytes())?;
            // 22.1 reports no load for a library without offload entries
            // (a program with data constructs only).
            if crate::tools::ompt::on() && lib.entries.iter().any(|e| e.is_openmp() && !e.is_requires()) {
                crate::tools::ompt::device_load(dev.id, image.bytes());
            }
            setup_indirect_call_table(dev, handle, &lib.entries)?;
            let mut kernels = Vec::new();
            for e in lib.entries.iter().filter(|e| e.is_openmp() && !e.is_requires()) {
                if e.is_global() && e.flags & crate::abi::OMP_DECLARE_TARGET_INDIRECT_VTABLE != 0 {
                    // Only the indirect-call table uses vtable entries (as in 22.1).
                    continue;
                } else if e.is_global() {
                    let tgt = dev
                        .plugin
                        .get_global(dev.plugin_device, handle, &e.name, e.size)
                        .inspect_err(|_| diag::report(&format!("Failed to load symbol {}", e.name)))?;
                    if usm {
                        // The device reaches the host variable through its
                        // reference pointer: give it the host's value.
                        // Straight to the plugin: part of loading, no data operation
                        // for OMPT tools or the profile (22.1 reports none).
                        // SAFETY: `e.addr` is the host global the entry names, `e.size` bytes.
                        unsafe { dev.plugin.submit(dev.plugin_device, tgt, e.addr, e.size)? };
                        continue;
                    }
                    let tgt = if e.flags & crate::abi::OMP_DECLARE_TARGET_INDIRECT != 0 {
                        let mut v = 0u64;
                        // 22.1 reads the device function address through its
                        // data path, so LIBOMPTARGET_INFO reports the copy.
                        diag::info(info::DATA_TRANSFER, dev.id, || {
                            format!(
                                "Copying data from device to host, TgtPtr={}, HstPtr={}, Size=8, Name=unknown",
                                diag::ptr(tgt),
                                diag::ptr(&mut v as *mut u64 as u64)
                            )
                        });
                        // SAFETY: `v` is a live local of 8 bytes.
                        unsafe { dev.retrieve(&mut v as *mut u64 as usize, tgt, 8)? };
                        v
                    } else {
                        tgt
                    };
                    if matches!(dev.table.lookup(e.addr, e.size), mapping::Lookup::NotFound) {
                        let name = intern(&format!(";{};unknown;0;0;;\0", e.name));
                        dev.table.insert(MapEntry::new_permanent(e.addr, e.size, tgt, name.as_ptr() as usize));
                    }
                } else if e.addr != 0 {
                    // As in 22.1, a kernel the image lacks (clang leaves some
                    // metadirective variants out) is reported and the rest of
                    // the image is loaded; only a launch of it fails.
                    let k = dev.plugin.get_function(dev.plugin_device, handle, &e.name).unwrap_or_else(|err| {
                        diag::plugin_error(&format!("Failure to init kernel: {err}"));
                        diag::report(&format!("Failed to load kernel {}", e.name));
                        device::MISSING_KERNEL
                    });
                    kernels.push((e.addr, device::Kernel { handle: k, name: intern(&e.name) }));
                }
            }
            crate::debug!("device {}: loaded image {index} of library {:#x}, {} kernels", dev.id, lib.key, kernels.len());
            if crate::base::config().dump_offload_entries == dev.id as i64 {
                for e in &lib.entries {
                    diag::c_line(
                        diag::CStream::Stdout,
                        format_args!(
                            "Device {} offloading entry: {} (addr {:#x}, size {}, flags {:#x})",
                            dev.id, e.name, e.addr, e.size, e.flags
                        ),
                    );
                }
            }
            dev.kernels.write().extend(kernels);
            dev.kernels_version.fetch_add(1, Ordering::AcqRel);
            dev.loaded_libs.lock().insert(lib.key, handle);
        }
        dev.loaded_generation.store(generation, Ordering::Release);
        Ok(())
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

    /// `handleTargetOutcome`.
    #[inline]
    pub fn handle_outcome(&self, success: bool, loc: &Loc) {
        // A successful offload without INFO table dumps has nothing to do.
        if success && diag::policy_if_known() == Some(Policy::Mandatory) && !Self::info_on(info::DUMP_TABLE) {
            return;
        }
        self.handle_outcome_slow(success, loc);
    }

    #[cold]
    #[inline(never)]
    fn handle_outcome_slow(&self, success: bool, loc: &Loc) {
        if !success && self.num_devices() == 0 {
            self.explain_no_device();
        }
        let policy = self.policy();
        if !success && policy == Policy::Mandatory && self.num_devices() == 0 {
            let reg = self.registry.read();
            let archs: Vec<String> = reg.libs.iter().flat_map(|l| l.images.iter().map(|i| i.arch())).collect();
            diag::report("Consult https://openmp.llvm.org/design/Runtimes.html for debugging options.");
            diag::report(&format!(
                "No images found compatible with the installed hardware. Found {} image(s): ({})",
                archs.len(),
                archs.join(",")
            ));
            outcome::fatal_at(&loc.source(), 1, "failure of target construct while offloading is mandatory");
        }
        outcome::target_outcome(success, policy, loc, |loc| {
            self.dump_tables(&loc.to_string(), false);
            true
        });
    }

    /// Prints every device's mapping table (INFO 0x4 / `ompx_dump_mapping_tables`).
    pub fn dump_tables(&self, location: &str, to_stdout: bool) {
        self.dump_device_tables(&self.devices.all(), location, to_stdout);
    }

    fn dump_tables_reversed(&self, location: &str) {
        let mut devices = self.devices.all();
        devices.reverse();
        self.dump_device_tables(&devices, location, false);
    }

    fn dump_device_tables(&self, devices: &[&'static OmpDevice], location: &str, to_stdout: bool) {
        let mut out = String::new();
        for dev in devices {
            let prefix = format!("omptarget device {} info: ", dev.id);
            let entries = dev.table.snapshot();
            if entries.is_empty() {
                out += &format!("{prefix}OpenMP Host-Device pointer mappings table empty\n");
                continue;
            }
            out += &format!("{prefix}OpenMP Host-Device pointer mappings after block at {location}:\n");
            out += &format!(
                "{prefix}{:<18} {:<18} {} {} {} {}\n",
                "Host Ptr", "Target Ptr", "Size (B)", "DynRefCount", "HoldRefCount", "Declaration"
            );
            for e in entries {
                let count = |c: u64| if c == mapping::INF { "INF".to_string() } else { c.to_string() };
                // SAFETY: entry names are compiler-emitted static strings or our leaked ones.
                let (name, decl) = unsafe { crate::abi::ptr::var_info(e.name) };
                out += &format!(
                    "{prefix}{} {} {:<8} {:<11} {:<12} {} at {}\n",
                    diag::ptr(e.host_begin as u64),
                    diag::ptr(e.tgt_begin),
                    e.size(),
                    count(e.dyn_count()),
                    count(e.hold_count()),
                    name,
                    decl
                );
            }
        }
        diag::c_write(if to_stdout { diag::CStream::Stdout } else { diag::CStream::Stderr }, &out);
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
