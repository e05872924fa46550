//! One word that says whether a construct may take a fast path: zero when
//! nothing but the work itself is to be done (no INFO or debug output, no
//! tool or profile, no kernel recording, and the offload policy already
//! settled as mandatory, so a successful construct has no outcome handling
//! left). Each owner of one of these conditions sets or clears its own bit;
//! a fast path tests the word once (`allowed()`) and otherwise takes the
//! general path, which does everything.

use std::sync::atomic::{AtomicU32, Ordering};

/// The offload policy is not known yet, or is not "mandatory".
pub const POLICY: u32 = 1 << 0;
/// `LIBOMPTARGET_INFO` (or `__tgt_set_info_flag`) has a bit set.
pub const INFO: u32 = 1 << 1;
/// `LIBOMPTARGET_DEBUG` is on.
pub const DEBUG: u32 = 1 << 2;
/// An OMPT tool or a `LIBOMPTARGET_PROFILE` timeline listens.
pub const HOOKS: u32 = 1 << 3;
/// Kernel record/replay is active.
pub const RECORD: u32 = 1 << 4;
/// A long-lived work queue (liboffload's) has work in flight: a block freed
/// now may still be in use by it, so frees take the general path, which waits.
pub const QUEUED_WORK: u32 = 1 << 5;

static NEEDS_GENERAL_PATH: AtomicU32 = AtomicU32::new(POLICY);

/// Whether a fast path is allowed: no condition needs the general path.
#[inline(always)]
pub fn allowed() -> bool {
    NEEDS_GENERAL_PATH.load(Ordering::Relaxed) == 0
}

/// Sets (`on`) or clears one condition's bit.
pub fn set(bit: u32, on: bool) {
    if on {
        NEEDS_GENERAL_PATH.fetch_or(bit, Ordering::AcqRel);
    } else {
        NEEDS_GENERAL_PATH.fetch_and(!bit, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bits_are_independent() {
        // The word starts with POLICY set; other tests may have changed it,
        // so only the relative behaviour is checked.
        super::set(super::RECORD, true);
        assert!(!super::allowed());
        super::set(super::RECORD, false);
    }
}
