//! Registration of the program's libraries (`__tgt_register_lib` and its
//! counterparts) and the lazy loading of their images onto devices:
//! kernels resolved, globals mapped with infinite counts, the
//! indirect-call table written.

use super::Runtime;
use super::device::{self, OmpDevice};
use super::entries::Entry;
use super::lifecycle::{in_startup_object, unregistering_at_exit, watch_exit};
use super::mapping::{self, MapEntry};
use super::registry::{DeviceImage, RegisteredLib};
use crate::base::config::info;
use crate::base::diag;
use crate::base::error::Result;
use crate::base::intern::intern;
use crate::plugins::ProgramNeeds;
use std::sync::atomic::Ordering;

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

impl Runtime {
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
        let needs = ProgramNeeds {
            unified_shared_memory: self.unified_shared_memory(),
            indirect_calls: entries
                .iter()
                .any(|e| e.is_openmp() && e.is_global() && e.flags & crate::abi::OMP_DECLARE_TARGET_INDIRECT != 0),
        };
        if !self.offload_disabled() {
            for (index, img) in images.iter().enumerate() {
                let bytes = img.bytes();
                for (pi, plugin) in self.hw.plugins().iter().enumerate() {
                    if !plugin.is_compatible(bytes) {
                        continue;
                    }
                    if let Err(why) = plugin.supports(bytes, needs) {
                        // Said once: devices the user started (remote servers)
                        // that the program will not use are no silent matter.
                        static SAID: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());
                        let mut said = SAID.lock();
                        if !said.contains(&why) {
                            diag::message(&format!("{why}; the program runs without them"));
                            said.push(why.clone());
                        }
                        drop(said);
                        self.no_device.lock().push(format!("image {index} on {} devices: {why}", plugin.name()));
                        // Initialised all the same, as for an image it runs
                        // (the remote plugin greets its servers, which wait
                        // for that, and shuts them down at exit).
                        let _ = plugin.number_of_devices();
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
    pub(super) fn explain_no_device(&self) {
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
            // exiting. Constructs the
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
                if let Err(e) = dev.unload_image(image) {
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

    /// Loads every registered image meant for `dev` that is not loaded yet
    /// (`loadImagesOntoDevice`): kernels resolved, globals mapped with INF counts.
    pub(super) fn load_pending(&self, dev: &OmpDevice) -> Result<()> {
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
            // A library without offload entries (a program with data
            // constructs and device memory routines only) has nothing to
            // load: no kernel or global could be looked up. 22.1 skips it too
            // (so neither runs its device constructors); loading it cost the
            // first allocation ~200 µs.
            if !lib.entries.iter().any(|e| e.is_openmp() && !e.is_requires()) {
                continue;
            }
            let image = &lib.images[index];
            let handle = dev.load_image(image.bytes())?;
            if crate::tools::ompt::on() {
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
}
