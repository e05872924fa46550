//! The one place that catches panics and turns `Result`s into C return
//! values. Every export runs its body through one of these helpers.

use crate::error::{OffloadError, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};
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
    // SAFETY: three plain extern "C" fns that catch panics; the registration is removed when the library is unloaded.
    unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child)) };
}

// Fork safety (issue 14): every runtime lock is taken before `fork` and
// released in both processes, so the child never inherits a lock held by a
// thread it does not have (`runtime::fork`).
extern "C" fn fork_prepare() {
    let _ = guard("fork prepare", || {
        crate::runtime::fork::prepare();
        Ok(())
    });
}

extern "C" fn fork_parent() {
    let _ = guard("fork parent", || {
        crate::runtime::fork::release();
        Ok(())
    });
}

extern "C" fn fork_child() {
    let _ = guard("fork child", || {
        crate::runtime::fork::child();
        Ok(())
    });
}

fn report(name: &str, e: &OffloadError) {
    match e {
        // Mapping errors were reported where they happened, in LLVM's words.
        OffloadError::Mapping(_) => crate::debug!("{name}: {e}"),
        _ => crate::env::diag::report(&format!("{name}: {e}")),
    }
}

/// Runs `body`, converting a panic into `OffloadError::Internal`.
pub fn guard<T>(name: &'static str, body: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(OffloadError::Internal(format!("panic in {name}: {msg}")))
        }
    }
}

/// `void` entry points: errors are reported and otherwise ignored.
pub fn void_entry(name: &'static str, body: impl FnOnce() -> Result<()>) {
    if let Err(e) = guard(name, body) {
        report(name, &e);
    }
}

/// Entry points returning a value, with `fallback` on error.
pub fn value_entry<T>(name: &'static str, fallback: T, body: impl FnOnce() -> Result<T>) -> T {
    match guard(name, body) {
        Ok(v) => v,
        Err(e) => {
            report(name, &e);
            fallback
        }
    }
}

/// `int` entry points (`OFFLOAD_SUCCESS` / `OFFLOAD_FAIL`).
pub fn int_entry(name: &'static str, body: impl FnOnce() -> Result<i32>) -> i32 {
    value_entry(name, crate::abi::OFFLOAD_FAIL, body)
}

/// Entry points returning a pointer: NULL on error.
pub fn ptr_entry<T>(name: &'static str, body: impl FnOnce() -> Result<*mut T>) -> *mut T {
    value_entry(name, core::ptr::null_mut(), body)
}
