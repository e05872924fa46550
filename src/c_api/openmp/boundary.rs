//! The one place that catches panics and turns `Result`s into C return
//! values. Every export runs its body through one of these helpers.

use crate::base::error::Result;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the library destructor; calls after it do nothing harmful.
pub static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);

extern "C" fn mark_shutdown() {
    SHUTTING_DOWN.store(true, Ordering::Release);
}

// The library constructor does the minimum: it registers the exit hook that
// marks teardown. It runs before the program's own constructors, so the hook
// runs after the program's `atexit(__tgt_unregister_lib)` handlers.
#[ctor::ctor(unsafe)]
fn library_init() {
    // SAFETY: `mark_shutdown` is a plain extern "C" fn that only stores an atomic.
    unsafe { libc::atexit(mark_shutdown) };
    // Loaded by a `dlopen` (of a library that needs us) rather than with
    // the program: nothing loaded before could have a descriptor for us
    // (it would have loaded us), and the objects mapped now include the
    // library being opened, which `dlclose` may unload again.
    let by_dlopen = crate::base::stack::on_stack(&[b"dlopen", b"dlmopen"]);
    crate::openmp::set_startup_objects(if by_dlopen { Vec::new() } else { startup_objects() });
    // The main thread's exit is recognised from now on (openmp::ExitWatch).
    crate::openmp::watch_exit();
    // SAFETY: three plain extern "C" fns that catch panics; the registration is removed when the library is unloaded.
    unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child)) };
}

// Library destructor (in `.fini_array`, so it runs when ld.so finalises this
// object at exit, after the exit handlers): see `openmp::at_library_fini`.
extern "C" fn library_fini() {
    let _ = guard("library fini", || {
        crate::openmp::at_library_fini();
        Ok(())
    });
}

#[used]
#[unsafe(link_section = ".fini_array")]
static LIBRARY_FINI: extern "C" fn() = library_fini;

// Fork safety: every runtime lock is taken before `fork` and
// released in both processes, so the child never inherits a lock held by a
// thread it does not have (`openmp::fork`).
extern "C" fn fork_prepare() {
    let _ = guard("fork prepare", || {
        crate::base::fork::prepare();
        Ok(())
    });
}

extern "C" fn fork_parent() {
    let _ = guard("fork parent", || {
        crate::base::fork::release();
        Ok(())
    });
}

extern "C" fn fork_child() {
    let _ = guard("fork child", || {
        crate::base::fork::child();
        Ok(())
    });
}

/// The loaded segments of every object mapped now (the program and its
/// `DT_NEEDED` libraries: this constructor runs before the program's own).
fn startup_objects() -> Vec<(usize, usize)> {
    extern "C" fn one(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: dl_iterate_phdr passes a valid info struct, and `data` is the Vec given below, used only on this thread.
        let (info, out) = unsafe { (&*info, &mut *(data as *mut Vec<(usize, usize)>)) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: dlpi_phdr points to dlpi_phnum program headers of a loaded object.
        let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        for ph in phdrs.iter().filter(|ph| ph.p_type == libc::PT_LOAD) {
            let lo = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
            out.push((lo, lo.wrapping_add(ph.p_memsz as usize)));
        }
        0
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    // SAFETY: `one` only reads the headers and appends to `out`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(one), &mut out as *mut Vec<(usize, usize)> as *mut libc::c_void) };
    out
}

pub use crate::base::guard::{fast_path, guard, int_entry, value_entry, void_entry};

/// Entry points returning a pointer: NULL on error.
pub fn ptr_entry<T>(name: &'static str, body: impl FnOnce() -> Result<*mut T>) -> *mut T {
    value_entry(name, core::ptr::null_mut(), body)
}
