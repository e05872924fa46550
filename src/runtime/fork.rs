//! Fork safety (issue 14): `fork` copies only the calling thread, so a lock
//! that another thread held at that moment stays locked forever in the child,
//! and the child's first construct that needs it hangs. The `pthread_atfork`
//! handlers (registered by the library constructor, `api::boundary`) take
//! every lock of the runtime before the fork and release them on both sides.
//!
//! Locks are taken with `try_lock` only, all or none: when one is busy,
//! everything taken so far is released and the whole set is tried again a
//! moment later. So the handler can never deadlock against a thread that
//! holds one runtime lock and waits for another, whatever order the runtime
//! takes its locks in. A set that stays busy for [`GIVE_UP`] (the forking
//! thread itself holds a lock, e.g. `fork` called from a host kernel) is let
//! go and the fork proceeds as it would without the handlers.

use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the prepare handler keeps trying before it lets the fork go on.
const GIVE_UP: Duration = Duration::from_secs(2);

/// Locks taken for a fork, released in reverse order.
#[derive(Default)]
pub struct ForkLocks {
    release: Vec<Box<dyn FnOnce()>>,
}

impl ForkLocks {
    /// Takes `m` if it is free now.
    #[must_use]
    pub fn mutex<T>(&mut self, m: &'static Mutex<T>) -> bool {
        let Some(guard) = m.try_lock() else { return false };
        std::mem::forget(guard);
        // SAFETY: the guard of this lock was forgotten just above (the marker is its stateless acquisition state), so the lock is held by this thread (or, in the child, by its copy of it) and nobody else can release it.
        self.release.push(Box::new(move || unsafe { m.force_unlock(Default::default()) }));
        true
    }

    /// Takes `l` exclusively if it is free now.
    #[must_use]
    pub fn write<T>(&mut self, l: &'static RwLock<T>) -> bool {
        let Some(guard) = l.try_write() else { return false };
        std::mem::forget(guard);
        // SAFETY: as in `mutex`: the write guard was forgotten, the lock is ours.
        self.release.push(Box::new(move || unsafe { l.force_unlock_write(Default::default()) }));
        true
    }

    /// Takes the mutex `field` of a shared object (a mapping entry) if it is
    /// free now; the object is kept alive until the lock is released.
    #[must_use]
    pub fn mutex_in<O: 'static, T: 'static>(&mut self, owner: &Arc<O>, field: fn(&O) -> &Mutex<T>) -> bool {
        let Some(guard) = field(owner).try_lock() else { return false };
        std::mem::forget(guard);
        let owner = Arc::clone(owner);
        // SAFETY: as in `mutex`: the guard was forgotten, the lock is ours; `owner` keeps it alive.
        self.release.push(Box::new(move || unsafe { field(&owner).force_unlock(Default::default()) }));
        true
    }

    fn release_all(&mut self) {
        while let Some(f) = self.release.pop() {
            f();
        }
    }
}

thread_local! {
    /// The locks the prepare handler of this thread took (the child is a copy of this thread).
    static HELD: RefCell<Option<ForkLocks>> = const { RefCell::new(None) };
}

/// Something that owns runtime locks a child process could need.
pub trait ForkSafe {
    /// Takes every lock with [`ForkLocks`]' `try` methods; false as soon as one is busy.
    fn lock_for_fork(&'static self, held: &mut ForkLocks) -> bool;
}

/// `pthread_atfork` prepare handler body.
pub fn prepare() {
    let Some(rt) = super::started() else { return };
    let start = Instant::now();
    let mut held = ForkLocks::default();
    let mut tries = 0u32;
    while !rt.lock_for_fork(&mut held) {
        held.release_all();
        tries += 1;
        if start.elapsed() > GIVE_UP {
            crate::debug!("fork: runtime locks still busy after {tries} tries, forking without them");
            return;
        }
        if tries < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    HELD.with(|h| *h.borrow_mut() = Some(held));
}

/// `pthread_atfork` child handler body: releases the locks, then lets the
/// plugins forget work that threads which do not exist in the child had
/// in hand.
pub fn child() {
    release();
    if let Some(rt) = super::started() {
        for p in &rt.plugins {
            p.forked_child();
        }
        // Copies back that parent threads had in hand never complete here.
        for dev in rt.devices.all() {
            dev.table.forget_copies_in_flight();
        }
    }
}

/// `pthread_atfork` parent handler body: releases what `prepare` took.
pub fn release() {
    if let Some(mut held) = HELD.with(|h| h.borrow_mut().take()) {
        held.release_all();
    }
}
