//! liboffload: LLVM 22.1's language-neutral `ol*` C API (`OffloadAPI.h`,
//! `libLLVMOffload.so.22.1`) over the device layer the OpenMP side uses too
//! (one set of devices, one allocation table). The library exports both APIs; a program linked
//! against LLVM's liboffload loads it through the `libLLVMOffload.so.22.1`
//! name build.rs links next to it (docs/liboffload.md).
//!
//! - [`imp`]: the inner code of every entry point (safe Rust over checked pointers).
//! - [`handles`], [`devices`], [`info`], [`error`], [`types`]: objects
//!   behind the handles, discovery and info queries, `ol_result_t`, C types.

pub mod devices;
pub mod error;
pub mod handles;
pub mod imp;
pub mod info;
pub mod types;

use error::{ERRC_NAMES, ErrorStruct, OlError, OlResult, errc, intern};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `ol_result_t`.
pub type OlResultPtr = *const ErrorStruct;

/// `olInit` minus `olShutDown` calls.
static INIT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// `OFFLOAD_TRACE`: any value but empty or 0 prints every call to stderr.
static TRACE: LazyLock<bool> = LazyLock::new(|| std::env::var("OFFLOAD_TRACE").is_ok_and(|v| !v.is_empty() && v != "0"));

/// Whether `OFFLOAD_TRACE` is on.
pub(crate) fn tracing() -> bool {
    *TRACE
}

pub(crate) fn initialized() -> bool {
    INIT_COUNT.load(Ordering::Acquire) > 0
}

pub(crate) fn init_count() -> &'static AtomicUsize {
    &INIT_COUNT
}

/// The `ol*` layer's part in the fork handlers (`base::fork`): every lock
/// of the handle tables, the registration table and the interned error
/// records, and the lock held while the device list is created.
struct ForkPart;

impl crate::base::fork::Participant for ForkPart {
    fn before_fork(&'static self) {
        // `OFFLOAD_TRACE` is read now if it was not, so that no child
        // inherits its one-time initialisation half done.
        tracing();
    }

    fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        handles::lock_for_fork(held) && devices::lock_for_fork(held) && imp::lock_for_fork(held) && error::lock_for_fork(held)
    }
}

/// Joins the fork handlers (with the device layer), once.
pub(crate) fn join_fork_handlers() {
    static JOINED: std::sync::Once = std::sync::Once::new();
    JOINED.call_once(|| {
        crate::device::registry().join_fork_handlers();
        crate::base::fork::register(&ForkPart);
    });
}

/// The boundary of every `ol*` export: the `OL_ERRC_UNINITIALIZED` check,
/// panics caught, the trace line, and the error interned as `ol_result_t`.
#[inline]
pub fn entry(name: &'static str, args: impl FnOnce(&mut String, bool), body: impl FnOnce() -> OlResult<()>) -> OlResultPtr {
    let is_init = name.len() == 6 && name == "olInit";
    if !is_init && !initialized() {
        // 22.1 prints no trace for these.
        return intern(&OlError {
            code: errc::UNINITIALIZED,
            details: "liboffload has not been initialized - please call olInit before using this API".into(),
        });
    }
    let tracing = *TRACE;
    if tracing {
        // 22.1 prints the name first: calls made from a callback (olIterateDevices) nest inside the line.
        trace_start(name);
    }
    let result = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = crate::base::guard::panic_message(&*panic);
            Err(OlError { code: errc::UNKNOWN, details: format!("internal error in {name}: {msg}") })
        }
    };
    if tracing {
        trace_end(args, &result);
    }
    match result {
        Ok(()) => std::ptr::null(),
        Err(e) => intern(&e),
    }
}

#[cold]
fn trace_start(name: &str) {
    types::OUT_NOTE.with(|n| n.borrow_mut().take());
    crate::base::diag::c_write(crate::base::diag::CStream::Stderr, &format!("---> {name}"));
}

#[cold]
fn trace_end(args: impl FnOnce(&mut String, bool), result: &OlResult<()>) {
    let mut line = String::from("(");
    // A panic while formatting must not escape either.
    let _ = catch_unwind(AssertUnwindSafe(|| args(&mut line, result.is_ok())));
    line.push_str(")-> ");
    match result {
        Ok(()) => line.push_str("OL_SUCCESS\n"),
        Err(e) => {
            line.push_str(ERRC_NAMES.get(e.code as usize).copied().unwrap_or("OL_ERRC_UNKNOWN"));
            line.push_str(&format!("\n     *Error Details* {} \n", e.details));
        }
    }
    crate::base::diag::c_write(crate::base::diag::CStream::Stderr, &line);
}
