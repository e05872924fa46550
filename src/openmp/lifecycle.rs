//! The process around the runtime: which objects came with the program,
//! whether an unregistration comes from the exit handlers or a `dlclose`,
//! and what the library destructor does.

use super::started;
use crate::base::diag;

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
pub(super) fn in_startup_object(addr: usize) -> bool {
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
pub(super) fn unregistering_at_exit() -> bool {
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
    crate::base::stack::on_stack(&[b"__cxa_finalize", b"dlclose"])
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
            if let Err(e) = dev.unload_image(image) {
                diag::report(&format!("device {}: unloading the image of library {key:#x} failed: {e}", dev.id));
            }
        }
    }
}
