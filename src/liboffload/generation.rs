//! The generations of liboffload's API served on the one device layer:
//! LLVM 21's (`olGetKernel`, `olWaitQueue`, `EventOut` parameters), 22.1's
//! (the library's own face) and 23's (`olInit` arguments, `olQueryQueue`,
//! elapsed times, RPC callbacks, the host plugin as a platform).
//!
//! Every export of every generation goes through [`super::entry`], which
//! makes its generation the calling thread's [`current`] one for the call:
//! the parts that differ (the device model, device-info numbering, the trace
//! switch, the `olInit` count) read it there instead of each inner function
//! taking it as an argument. Each generation has its own `olInit` count, as
//! each of LLVM's libraries has its own context; queues, events, programs,
//! symbols and memory are the device layer's and common to all.

use std::cell::Cell;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A generation of the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gen {
    /// LLVM 21's API (`libLLVMOffload.so.21.1`).
    V21 = 0,
    /// LLVM 22.1's API (`libLLVMOffload.so.22.1`), the library's own exports.
    V22 = 1,
    /// LLVM 23's API (main's `libLLVMOffload.so.23.0git`, released as `libLLVMOffload.so.23.1`).
    V23 = 2,
}

impl Gen {
    /// Whether the host plugin is a platform of backend HOST whose devices
    /// are host devices (23), rather than CPU devices next to a virtual host
    /// device (21, 22.1).
    pub fn host_plugin_is_host(self) -> bool {
        self == Gen::V23
    }
}

thread_local! {
    static CURRENT: Cell<Gen> = const { Cell::new(Gen::V22) };
}

/// The generation of the export this thread is in (22.1 outside any).
#[inline]
pub fn current() -> Gen {
    CURRENT.with(Cell::get)
}

/// Makes `g` current until the returned guard is dropped.
#[inline]
pub(crate) fn enter(g: Gen) -> Restore {
    Restore(CURRENT.with(|c| c.replace(g)))
}

/// Restores the previous generation (a callback may call another face).
pub(crate) struct Restore(Gen);

impl Drop for Restore {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// `olInit` minus `olShutDown` calls, per generation.
static INIT: [AtomicUsize; 3] = [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];

/// The `olInit` count of `g`.
#[inline]
pub(crate) fn init_count(g: Gen) -> &'static AtomicUsize {
    &INIT[g as usize]
}

/// Whether no generation is initialised.
pub(crate) fn none_initialized() -> bool {
    INIT.iter().all(|c| c.load(Ordering::Acquire) == 0)
}

/// 22.1 traces when `OFFLOAD_TRACE` is set to anything but empty or 0.
static TRACE_22: LazyLock<bool> = LazyLock::new(|| std::env::var("OFFLOAD_TRACE").is_ok_and(|v| !v.is_empty() && v != "0"));
/// 21 and 23 trace when `OFFLOAD_TRACE` is set at all (`getenv` is not NULL).
static TRACE_ANY: LazyLock<bool> = LazyLock::new(|| std::env::var_os("OFFLOAD_TRACE").is_some());

/// Whether `g` traces its calls.
#[inline]
pub(crate) fn tracing(g: Gen) -> bool {
    match g {
        Gen::V22 => *TRACE_22,
        Gen::V21 | Gen::V23 => *TRACE_ANY,
    }
}
