//! The panic guard: the one place that catches panics, so that none crosses
//! the C boundary, and turns `Result`s into C return values.

use crate::base::error::{OffloadError, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `body`, converting a panic into `OffloadError::Internal` naming `what`.
pub fn catch<T>(what: &str, body: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => Err(OffloadError::Internal(format!("panic in {what}: {}", panic_message(&*panic)))),
    }
}

fn report(name: &str, e: &OffloadError) {
    match e {
        // Mapping errors were reported where they happened, in LLVM's words.
        OffloadError::Mapping(_) => crate::debug!("{name}: {e}"),
        _ => crate::base::diag::report(&format!("{name}: {e}")),
    }
}

/// Runs an entry point's `body`, converting a panic into `OffloadError::Internal`.
#[inline(always)]
pub fn guard<T>(name: &'static str, body: impl FnOnce() -> Result<T>) -> Result<T> {
    catch(name, body)
}

/// The text a panic carried (`&str` or `String` payloads).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Runs a fast path that answers whether it did the work: a panic (none is
/// expected) is reported and answers `false`, so the general path runs. No
/// `Result` travels through memory on the way out.
#[inline(always)]
pub fn fast_path(name: &'static str, body: impl FnOnce() -> bool) -> bool {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(done) => done,
        Err(panic) => fast_path_panicked(name, panic),
    }
}

#[cold]
#[inline(never)]
fn fast_path_panicked(name: &'static str, panic: Box<dyn std::any::Any + Send>) -> bool {
    let msg = panic_message(&*panic);
    // The report itself must not unwind out of the entry point.
    let _ = catch_unwind(|| report(name, &OffloadError::Internal(format!("panic in {name}'s fast path: {msg}"))));
    false
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
    // `OFFLOAD_FAIL` of the libomptarget ABI.
    value_entry(name, -1, body)
}
