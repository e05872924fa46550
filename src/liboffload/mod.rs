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
pub mod generation;
pub mod handles;
pub mod imp;
pub mod info;
pub mod types;
pub mod v21;
pub mod v23;

use error::{ERRC_NAMES, ErrorStruct, OlError, OlResult, errc, intern};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `ol_result_t`.
pub type OlResultPtr = *const ErrorStruct;

/// Whether `OFFLOAD_TRACE` is on for the current generation.
pub(crate) fn tracing() -> bool {
    generation::tracing(generation::current())
}

pub(crate) fn init_count() -> &'static AtomicUsize {
    generation::init_count(generation::current())
}

/// The `ol*` layer's part in the fork handlers (`base::fork`): every lock
/// of the handle tables, the registration table and the interned error
/// records, and the lock held while the device list is created.
struct ForkPart;

impl crate::base::fork::Participant for ForkPart {
    fn before_fork(&'static self) {
        // `OFFLOAD_TRACE` is read now if it was not, so that no child
        // inherits its one-time initialisation half done.
        generation::tracing(generation::Gen::V22);
        generation::tracing(generation::Gen::V21);
    }

    fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        handles::lock_for_fork(held)
            && v23::lock_for_fork(held)
            && devices::lock_for_fork(held)
            && imp::lock_for_fork(held)
            && error::lock_for_fork(held)
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
    entry_of(generation::Gen::V22, name, args, body)
}

/// [`entry`] for an export of generation `g`: `g` is the current
/// generation for the call (its device model, numbering and `olInit` count).
#[inline]
pub fn entry_of(
    g: generation::Gen,
    name: &'static str,
    args: impl FnOnce(&mut String, bool),
    body: impl FnOnce() -> OlResult<()>,
) -> OlResultPtr {
    if crate::base::fork::unusable_in_child() {
        // No lock may be taken here, interning included: a static record.
        static FORKED: error::ErrorStruct = error::ErrorStruct {
            code: errc::UNKNOWN,
            details: c"this process was forked while other threads kept the offload runtime busy; it cannot be used in the child".as_ptr(),
        };
        return &FORKED;
    }
    let _gen = generation::enter(g);
    let is_init = name.len() == 6 && name == "olInit";
    if !is_init && generation::init_count(g).load(Ordering::Acquire) == 0 {
        // 22.1 prints no trace for these.
        return intern(&OlError {
            code: errc::UNINITIALIZED,
            details: "liboffload has not been initialized - please call olInit before using this API".into(),
        });
    }
    let tracing = generation::tracing(g);
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
