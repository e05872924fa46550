//! The one flag every data and launch hook tests before its (out-of-line)
//! slow path: set when an OMPT tool listens or a profile is recorded.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set when a tool listens or a profile is recorded: the one flag a data
/// or launch hook tests before its (out-of-line) slow path.
static HOOKS: AtomicBool = AtomicBool::new(false);

/// Whether any hook (OMPT or `LIBOMPTARGET_PROFILE`) is live.
#[inline(always)]
pub fn hooks() -> bool {
    if cfg!(feature = "bench-no-hooks") {
        return false;
    }
    HOOKS.load(Ordering::Relaxed)
}

/// Turns the hooks on (before any construct runs).
pub fn set_hooks() {
    HOOKS.store(true, Ordering::Release);
    crate::base::fast_path::set(crate::base::fast_path::HOOKS, true);
}
