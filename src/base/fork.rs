//! Fork safety: `fork` copies only the calling thread, so a lock
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
//!
//! parking_lot keeps the threads parked on a lock in a process-wide table
//! (keyed by the lock's address) whose buckets have locks of their own. A
//! child that inherits a parked parent thread there, or a bucket lock that a
//! parent thread held while parking, hangs the first time it unlocks that
//! lock the usual way (the unlock wakes the parked thread through the
//! table). So the set counts as taken only when, besides holding every lock,
//! no thread is parked or parking on any of them (their parked bits, which
//! a thread sets before it touches the table, are clear; no condition
//! variable has waiters); and the child does not unlock its copies through
//! parking_lot: it resets their state words to "unlocked, nobody parked".

use parking_lot::{Condvar, Mutex, RwLock};
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long the prepare handler keeps trying before it lets the fork go on.
const GIVE_UP: Duration = Duration::from_secs(2);

/// parking_lot's `RawMutex` state bit "a thread is parked on this lock".
const MUTEX_PARKED: u8 = 0b10;
/// parking_lot's `RawRwLock` state bits "readers / a writer are parked".
const RWLOCK_PARKED: usize = 0b11;

// The state words below are the raw locks' only fields (parking_lot 0.13:
// `RawMutex { state: AtomicU8 }`, `RawRwLock { state: AtomicUsize }`,
// `RawCondvar { state: AtomicPtr<RawMutex> }`); a struct whose size is
// that of its one field has it at offset 0. The tests below check the
// values the runtime relies on.
const _: () = assert!(size_of::<parking_lot::RawMutex>() == size_of::<AtomicU8>());
const _: () = assert!(size_of::<parking_lot::RawRwLock>() == size_of::<AtomicUsize>());
const _: () = assert!(size_of::<parking_lot::RawCondvar>() == size_of::<AtomicPtr<u8>>());

/// The state word of a parking_lot mutex.
fn mutex_word<T: ?Sized>(m: &Mutex<T>) -> &AtomicU8 {
    // SAFETY: `raw` only gives access to the raw lock, which is read and reset here only as its state word (see above).
    let raw = unsafe { m.raw() };
    // SAFETY: `RawMutex` is exactly one `AtomicU8` (asserted above), so the cast names that field.
    unsafe { &*(raw as *const parking_lot::RawMutex).cast::<AtomicU8>() }
}

/// The state word of a parking_lot reader-writer lock.
fn rwlock_word<T: ?Sized>(l: &RwLock<T>) -> &AtomicUsize {
    // SAFETY: as in `mutex_word`.
    let raw = unsafe { l.raw() };
    // SAFETY: `RawRwLock` is exactly one `AtomicUsize` (asserted above).
    unsafe { &*(raw as *const parking_lot::RawRwLock).cast::<AtomicUsize>() }
}

/// Whether threads may be waiting on a parking_lot condition variable
/// (its state names the mutex of the waiters; null when none).
fn condvar_has_waiters(c: &Condvar) -> bool {
    // SAFETY: `RawCondvar` is exactly one `AtomicPtr<RawMutex>` (asserted above); it is only read.
    let state = unsafe { &*(c.raw() as *const parking_lot::RawCondvar).cast::<AtomicPtr<u8>>() };
    !state.load(Ordering::Acquire).is_null()
}

/// A taken lock's state word.
enum Word {
    Mutex(*const AtomicU8),
    RwLock(*const AtomicUsize),
}

/// One lock taken for a fork.
struct Held {
    /// Valid until `unlock` runs or is dropped (it keeps the lock's owner alive).
    word: Word,
    /// Releases the lock the usual way (in the parent).
    unlock: Box<dyn FnOnce()>,
}

/// Locks taken for a fork, released in reverse order.
#[derive(Default)]
pub struct ForkLocks {
    held: Vec<Held>,
}

impl ForkLocks {
    /// Takes `m` if it is free now.
    #[must_use]
    pub fn mutex<T>(&mut self, m: &'static Mutex<T>) -> bool {
        let Some(guard) = m.try_lock() else { return false };
        std::mem::forget(guard);
        // SAFETY: the guard of this lock was forgotten just above (the marker is its stateless acquisition state), so the lock is held by this thread (or, in the child, by its copy of it) and nobody else can release it.
        let unlock = Box::new(move || unsafe { m.force_unlock(Default::default()) });
        self.held.push(Held { word: Word::Mutex(mutex_word(m)), unlock });
        true
    }

    /// Takes `l` exclusively if it is free now.
    #[must_use]
    pub fn write<T>(&mut self, l: &'static RwLock<T>) -> bool {
        let Some(guard) = l.try_write() else { return false };
        std::mem::forget(guard);
        // SAFETY: as in `mutex`: the write guard was forgotten, the lock is ours.
        let unlock = Box::new(move || unsafe { l.force_unlock_write(Default::default()) });
        self.held.push(Held { word: Word::RwLock(rwlock_word(l)), unlock });
        true
    }

    /// Takes the mutex at `m` if it is free now.
    ///
    /// # Safety
    /// `m` points to a live mutex that stays alive until these locks are
    /// released (the caller holds, in this set, the lock that keeps its
    /// owner from being freed).
    #[must_use]
    pub unsafe fn mutex_at<T: 'static>(&mut self, m: *const Mutex<T>) -> bool {
        // SAFETY: the caller's contract: `m` is live now.
        let m = unsafe { &*m };
        let Some(guard) = m.try_lock() else { return false };
        std::mem::forget(guard);
        let word = Word::Mutex(mutex_word(m));
        let m = m as *const Mutex<T> as usize;
        // SAFETY: as in `mutex`: the guard was forgotten, the lock is ours; the caller's contract keeps the mutex alive until this runs (locks are released in reverse order).
        let unlock = Box::new(move || unsafe { (*(m as *const Mutex<T>)).force_unlock(Default::default()) });
        self.held.push(Held { word, unlock });
        true
    }

    /// Takes the mutex `field` of a shared object (a mapping entry) if it is
    /// free now; the object is kept alive until the lock is released.
    #[must_use]
    pub fn mutex_in<O: 'static, T: 'static>(&mut self, owner: &Arc<O>, field: fn(&O) -> &Mutex<T>) -> bool {
        let Some(guard) = field(owner).try_lock() else { return false };
        std::mem::forget(guard);
        let word = Word::Mutex(mutex_word(field(owner)));
        let owner = Arc::clone(owner);
        // SAFETY: as in `mutex`: the guard was forgotten, the lock is ours; `owner` keeps it alive.
        let unlock = Box::new(move || unsafe { field(&owner).force_unlock(Default::default()) });
        self.held.push(Held { word, unlock });
        true
    }

    /// True when no thread waits on `c` (call with its mutex taken, so that
    /// no new waiter can come): a waiter parked there would stay in
    /// parking_lot's table in the child (see the module comment).
    #[must_use]
    pub fn no_waiters(&mut self, c: &Condvar) -> bool {
        !condvar_has_waiters(c)
    }

    /// Whether a thread is parked, or about to park, on a lock of the set.
    fn any_parked(&self) -> bool {
        self.held.iter().any(|h| match h.word {
            // SAFETY: `word` is valid while its lock is held in this set (`Held`).
            Word::Mutex(w) => unsafe { &*w }.load(Ordering::Acquire) & MUTEX_PARKED != 0,
            // SAFETY: as above.
            Word::RwLock(w) => unsafe { &*w }.load(Ordering::Acquire) & RWLOCK_PARKED != 0,
        })
    }

    /// Releases every lock the usual way, last taken first (the parent).
    fn release_all(&mut self) {
        while let Some(h) = self.held.pop() {
            (h.unlock)();
        }
    }

    /// In the child: every lock's state back to "unlocked, nobody parked",
    /// without going through parking_lot's table (see the module comment).
    fn reset_all(&mut self) {
        while let Some(h) = self.held.pop() {
            match h.word {
                // SAFETY: valid until `h.unlock` is dropped below.
                Word::Mutex(w) => unsafe { &*w }.store(0, Ordering::Release),
                // SAFETY: as above.
                Word::RwLock(w) => unsafe { &*w }.store(0, Ordering::Release),
            }
            drop(h.unlock);
        }
    }
}

thread_local! {
    /// The locks the prepare handler of this thread took (the child is a copy of this thread).
    static HELD: RefCell<Option<ForkLocks>> = const { RefCell::new(None) };
}

/// A part of the runtime that owns locks a child process could need. Each
/// part registers itself once, when it is first used ([`register`]); the
/// handlers then ask every registered part, so this file names none of them.
pub trait Participant: Sync {
    /// Before any lock is tried: finish one-time initialisations (settings
    /// read lazily, `OnceLock`s) so that no child inherits one half done.
    fn before_fork(&'static self) {}
    /// Takes every lock with [`ForkLocks`]' `try` methods; false as soon as one is busy.
    fn lock_for_fork(&'static self, held: &mut ForkLocks) -> bool;
    /// In the child, after the locks are reset: forget work that threads
    /// which do not exist in the child had in hand.
    fn forked_child(&'static self) {}
}

/// Most parts that can register.
const MAX_PARTICIPANTS: usize = 32;

/// Registered parts, append-only (read by the handlers without a lock).
static PARTICIPANTS: [std::sync::OnceLock<&'static dyn Participant>; MAX_PARTICIPANTS] =
    [const { std::sync::OnceLock::new() }; MAX_PARTICIPANTS];
static REGISTERED: AtomicUsize = AtomicUsize::new(0);
/// Serialises registrations (never held across a fork: registration does
/// nothing else while holding it, and the prepare handler takes it too).
static REGISTERING: Mutex<()> = Mutex::new(());

/// Adds a part to the set the fork handlers lock (once per part: call it
/// from the part's one-time initialisation).
pub fn register(part: &'static dyn Participant) {
    let _one_at_a_time = REGISTERING.lock();
    let n = REGISTERED.load(Ordering::Acquire);
    if n == MAX_PARTICIPANTS || PARTICIPANTS[..n].iter().any(|p| p.get().is_some_and(|q| std::ptr::addr_eq(*q, part))) {
        return;
    }
    let _ = PARTICIPANTS[n].set(part);
    REGISTERED.store(n + 1, Ordering::Release);
}

fn participants() -> impl Iterator<Item = &'static dyn Participant> {
    PARTICIPANTS[..REGISTERED.load(Ordering::Acquire)].iter().filter_map(|p| p.get().copied())
}

/// `pthread_atfork` prepare handler body.
pub fn prepare() {
    crate::base::config();
    participants().for_each(|p| p.before_fork());
    let start = Instant::now();
    let mut held = ForkLocks::default();
    let mut tries = 0u32;
    while !(held.mutex(&REGISTERING) && participants().all(|p| p.lock_for_fork(&mut held)) && !held.any_parked()) {
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
    crate::debug!("fork: {} runtime locks taken after {tries} retries", held.held.len());
    HELD.with(|h| *h.borrow_mut() = Some(held));
}

/// `pthread_atfork` child handler body: resets the locks, then lets every
/// part forget work that threads which do not exist in the child had in hand.
pub fn child() {
    let Some(mut held) = HELD.with(|h| h.borrow_mut().take()) else {
        // `prepare` gave up: threads that do not exist here may have held
        // any runtime lock, so nothing may take one (the parts' clean-up
        // included). The child is told so by `unusable_in_child`.
        if REGISTERED.load(Ordering::Acquire) > 0 {
            FORKED_WITHOUT_LOCKS.store(true, Ordering::Release);
        }
        return;
    };
    held.reset_all();
    participants().for_each(|p| p.forked_child());
}

/// Set in a child forked while other threads held the runtime's locks for
/// longer than [`GIVE_UP`] (see [`prepare`]).
static FORKED_WITHOUT_LOCKS: AtomicBool = AtomicBool::new(false);

/// Whether this process is a child forked while other threads kept the
/// runtime's locks busy: its locks may be held by threads that do not exist
/// here, so an API face refuses its calls with an error instead of waiting
/// for them forever.
#[inline]
pub fn unusable_in_child() -> bool {
    FORKED_WITHOUT_LOCKS.load(Ordering::Relaxed)
}

/// `pthread_atfork` parent handler body: releases what `prepare` took.
pub fn release() {
    if let Some(mut held) = HELD.with(|h| h.borrow_mut().take()) {
        held.release_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The state words read through `mutex_word` and friends are the ones
    // parking_lot uses (a parking_lot upgrade that changes them fails here).
    #[test]
    fn state_words() {
        let m = Mutex::new(0u32);
        assert_eq!(mutex_word(&m).load(Ordering::Relaxed), 0);
        let g = m.lock();
        assert_eq!(mutex_word(&m).load(Ordering::Relaxed), 1);
        drop(g);
        assert_eq!(mutex_word(&m).load(Ordering::Relaxed), 0);
        let l = RwLock::new(0u32);
        let w = l.write();
        assert_eq!(rwlock_word(&l).load(Ordering::Relaxed), 0b1000);
        drop(w);
        let r = l.read();
        assert_eq!(rwlock_word(&l).load(Ordering::Relaxed), 0b10000);
        drop(r);
        assert_eq!(rwlock_word(&l).load(Ordering::Relaxed), 0);
        let c = Condvar::new();
        assert!(!condvar_has_waiters(&c));
    }

    // A thread parked on a held lock shows as parked; a child-style reset
    // leaves the lock usable without parking_lot's table.
    #[test]
    fn parked_and_reset() {
        static M: Mutex<u32> = Mutex::new(0);
        let mut held = ForkLocks::default();
        assert!(held.mutex(&M));
        assert!(!held.any_parked());
        let waiter = std::thread::spawn(|| *M.lock() += 1);
        let start = Instant::now();
        while !held.any_parked() {
            assert!(start.elapsed() < Duration::from_secs(10), "the waiter never parked");
            std::thread::yield_now();
        }
        held.release_all();
        waiter.join().unwrap();
        assert_eq!(*M.lock(), 1);
        assert!(held.mutex(&M));
        held.reset_all();
        assert!(M.try_lock().is_some());
        // A condition variable with a waiter reports it.
        static PAIR: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
        let w = std::thread::spawn(|| {
            let mut ready = PAIR.0.lock();
            while !*ready {
                PAIR.1.wait(&mut ready);
            }
        });
        let start = Instant::now();
        while !condvar_has_waiters(&PAIR.1) {
            assert!(start.elapsed() < Duration::from_secs(10), "the waiter never waited");
            std::thread::yield_now();
        }
        *PAIR.0.lock() = true;
        PAIR.1.notify_all();
        w.join().unwrap();
        assert!(!condvar_has_waiters(&PAIR.1));
    }
}
