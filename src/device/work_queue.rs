//! Long-lived in-order queues with events and host functions (liboffload's
//! `ol_queue_handle_t`), on every kind of device.
//!
//! A queue is a list of operations that one host thread, its worker, runs
//! in order while the enqueuing call returns at once. Device work (copies,
//! fills, launches) goes through a device-layer [`Queue`] on the worker:
//! synchronous on devices without plugin queues (the host plugin's CPU
//! devices), queued on the plugin's stream or HSA queue otherwise, where
//! the worker lets the device run ahead and waits for it only before a host
//! function, a wait for another queue, or when it runs out of work. A host
//! function therefore runs after everything enqueued before it completed,
//! and nothing after it starts before it returned; it may enqueue more
//! work, also on its own queue (the worker picks it up: no recursion).
//!
//! Every operation has a sequence number. An [`Event`] is a point in a
//! queue (the number of the last operation enqueued before it) and is
//! complete once the queue completed that many. The worker starts with the
//! first operation and ends after a short idle time; a queue whose handle
//! is dropped keeps its pending work and its events valid until the work
//! is done.

use super::Device;
use super::queue::Queue;
use crate::base::error::{OffloadError, Result};
use crate::base::fork::ForkLocks;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Device work: may queue on the plugin queue it is given.
pub type DeviceTask = Box<dyn FnOnce(&mut Queue) -> Result<()> + Send>;
/// A host function.
pub type HostTask = Box<dyn FnOnce() + Send>;

enum Op {
    Device(DeviceTask),
    Host(HostTask),
    /// Wait until another queue completed its operation `seq`.
    After(Arc<Shared>, u64),
}

#[derive(Default)]
struct State {
    ops: VecDeque<(u64, Op)>,
    /// Operations ever enqueued (the last one's number).
    enqueued: u64,
    /// Operations completed, all of them up to this number.
    completed: u64,
    /// The number of the last device operation enqueued (copies, fills,
    /// launches: what may use memory or a program; 0: none).
    last_device: u64,
    /// The operation the worker has taken out and runs (0: none).
    running: u64,
    /// First failure of an operation since the last synchronisation.
    error: Option<OffloadError>,
    /// A worker thread exists.
    worker: bool,
    /// Events waiting for their completion time: (operation number, stamp).
    stamps: Vec<(u64, Arc<Stamp>)>,
}

/// When an event's point was reached (set once).
#[derive(Default)]
struct Stamp(std::sync::OnceLock<Instant>);

struct Shared {
    dev: &'static Device,
    state: Mutex<State>,
    /// The worker waits here for work.
    work: Condvar,
    /// Waiters for completion wait here.
    progress: Condvar,
}

/// How long an idle worker waits for more work before it ends.
const IDLE: Duration = Duration::from_millis(5);

/// Every queue that may have work (for `shutdown` and the fork handlers).
static LIVE: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());
/// Queues with work enqueued and not completed (a free path with none
/// needs to wait for nothing). Changed under its lock together with the
/// fast-path gate's `QUEUED_WORK` bit, so the two always agree.
static BUSY: Mutex<usize> = Mutex::new(0);

fn busy_changed(up: bool) {
    let mut n = BUSY.lock();
    *n = if up { *n + 1 } else { n.saturating_sub(1) };
    crate::base::fast_path::set(crate::base::fast_path::QUEUED_WORK, *n > 0);
}

thread_local! {
    /// The queue whose worker this thread is (its address; 0: none).
    static WORKER_OF: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// An in-order queue on one device.
pub struct WorkQueue {
    shared: Arc<Shared>,
}

/// A point in a queue.
#[derive(Clone)]
pub struct Event {
    queue: Arc<Shared>,
    seq: u64,
    /// When the queue reached this point (for elapsed times between events).
    stamp: Arc<Stamp>,
}

impl std::fmt::Debug for WorkQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WorkQueue({:?})", self.shared.dev)
    }
}

impl WorkQueue {
    /// A queue on `dev` (no thread is started until work comes).
    pub fn new(dev: &'static Device) -> Self {
        let shared = Arc::new(Shared { dev, state: Mutex::new(State::default()), work: Condvar::new(), progress: Condvar::new() });
        let mut live = LIVE.lock();
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&shared));
        WorkQueue { shared }
    }

    /// The queue's device.
    pub fn device(&self) -> &'static Device {
        self.shared.dev
    }

    /// Enqueues device work after everything enqueued so far.
    pub fn enqueue(&self, task: DeviceTask) -> Result<()> {
        self.shared.push(Op::Device(task))
    }

    /// Enqueues a host function: it runs on the queue's thread once
    /// everything enqueued before it completed.
    pub fn enqueue_host(&self, f: HostTask) -> Result<()> {
        self.shared.push(Op::Host(f))
    }

    /// Makes everything enqueued from now on wait for `event`.
    pub fn wait_for(&self, event: &Event) -> Result<()> {
        if Arc::ptr_eq(&event.queue, &self.shared) {
            // The queue is in order: its own earlier points are passed already.
            return Ok(());
        }
        self.shared.push(Op::After(Arc::clone(&event.queue), event.seq))
    }

    /// An event at the current end of the queue.
    pub fn record(&self) -> Event {
        let mut st = self.shared.state.lock();
        let seq = st.enqueued;
        let stamp = Arc::new(Stamp::default());
        if st.completed >= seq {
            // Reached already: the point in time is now.
            let _ = stamp.0.set(Instant::now());
        } else {
            st.stamps.push((seq, Arc::clone(&stamp)));
        }
        drop(st);
        Event { queue: Arc::clone(&self.shared), seq, stamp }
    }

    /// Whether everything enqueued so far has completed.
    pub fn is_empty(&self) -> bool {
        let st = self.shared.state.lock();
        st.completed == st.enqueued
    }

    /// Waits until everything enqueued so far completed; returns (and
    /// forgets) the first failure since the last synchronisation.
    pub fn synchronize(&self) -> Result<()> {
        let target = self.shared.state.lock().enqueued;
        self.shared.wait_until(target)?;
        match self.shared.state.lock().error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether `other` is this queue.
    pub fn same_as(&self, other: &WorkQueue) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Event {
    /// Whether the queue reached this point.
    pub fn is_complete(&self) -> bool {
        self.queue.state.lock().completed >= self.seq
    }

    /// Waits until the queue reached this point.
    pub fn synchronize(&self) -> Result<()> {
        self.queue.wait_until(self.seq)
    }

    /// When the queue reached this point; `None` while it has not.
    pub fn completed_at(&self) -> Option<Instant> {
        self.stamp.0.get().copied()
    }

    /// The device of the event's queue.
    pub fn device(&self) -> &'static Device {
        self.queue.dev
    }

    /// Whether the event belongs to `queue`.
    pub fn is_of(&self, queue: &WorkQueue) -> bool {
        Arc::ptr_eq(&self.queue, &queue.shared)
    }
}

impl Shared {
    fn push(self: &Arc<Self>, op: Op) -> Result<()> {
        let mut st = self.state.lock();
        if !st.worker {
            self.start_worker(&mut st)?;
        }
        if st.completed == st.enqueued {
            busy_changed(true);
        }
        st.enqueued += 1;
        let seq = st.enqueued;
        if matches!(op, Op::Device(_)) {
            st.last_device = seq;
        }
        st.ops.push_back((seq, op));
        drop(st);
        self.work.notify_one();
        Ok(())
    }

    /// Starts the worker thread (the state lock is held).
    fn start_worker(self: &Arc<Self>, st: &mut State) -> Result<()> {
        let me = Arc::clone(self);
        std::thread::Builder::new().name("omptarget-rs queue".into()).spawn(move || me.run()).map_err(|e| OffloadError::Driver {
            plugin: "device",
            call: "spawning a queue's thread",
            message: e.to_string(),
        })?;
        st.worker = true;
        Ok(())
    }

    /// Waits until operation `seq` completed (an error when the caller is
    /// this queue's own worker and the point lies ahead: it would wait forever).
    fn wait_until(self: &Arc<Self>, seq: u64) -> Result<()> {
        let mut st = self.state.lock();
        if st.completed >= seq {
            return Ok(());
        }
        if WORKER_OF.with(std::cell::Cell::get) == Arc::as_ptr(self) as usize {
            return Err(OffloadError::InvalidArgument(
                "a host function waited for its own queue to reach a later point: it would wait forever".into(),
            ));
        }
        if !st.worker && !st.ops.is_empty() {
            // Work left by a worker that is gone (in a child after `fork`).
            self.start_worker(&mut st)?;
        }
        while st.completed < seq {
            self.progress.wait(&mut st);
        }
        Ok(())
    }

    fn complete(&self, st: &mut State, upto: u64, r: Result<()>) {
        if upto > st.completed {
            st.completed = upto;
            if st.completed == st.enqueued {
                busy_changed(false);
            }
            if !st.stamps.is_empty() {
                let now = Instant::now();
                st.stamps.retain(|(seq, stamp)| {
                    if *seq > upto {
                        return true;
                    }
                    let _ = stamp.0.set(now);
                    false
                });
            }
        }
        if let Err(e) = r
            && st.error.is_none()
        {
            st.error = Some(e);
        }
    }

    /// Waits, without the lock, for the device work handed to the plugin
    /// queue (operations up to `*in_flight`) and completes it.
    fn settle(&self, q: &mut Queue, st: &mut parking_lot::MutexGuard<'_, State>, in_flight: &mut u64) {
        let r = parking_lot::MutexGuard::unlocked(st, || q.synchronize());
        self.complete(st, *in_flight, r);
        *in_flight = 0;
    }

    /// The worker thread.
    fn run(self: Arc<Self>) {
        WORKER_OF.with(|w| w.set(Arc::as_ptr(&self) as usize));
        let mut q = Queue::new(self.dev);
        // Device work handed to the plugin queue and not waited for yet: up to this number.
        let mut in_flight = 0u64;
        let mut st = self.state.lock();
        loop {
            let Some((seq, op)) = st.ops.pop_front() else {
                if in_flight > 0 {
                    self.settle(&mut q, &mut st, &mut in_flight);
                    self.progress.notify_all();
                    continue;
                }
                let idle_since = Instant::now();
                while st.ops.is_empty() && idle_since.elapsed() < IDLE {
                    self.work.wait_for(&mut st, IDLE);
                }
                if st.ops.is_empty() {
                    st.worker = false;
                    return;
                }
                continue;
            };
            st.running = seq;
            let waits = !matches!(op, Op::Device(_));
            if waits && in_flight > 0 {
                // A host function or a wait runs after the device work before
                // it completed, and that work counts as completed before it
                // runs: a host function may block until another thread's
                // `olMemFree` (which waits for device work) returns.
                self.settle(&mut q, &mut st, &mut in_flight);
                self.progress.notify_all();
            }
            drop(st);
            let r = match op {
                Op::Device(task) => run_caught(|| task(&mut q)),
                Op::Host(f) => run_caught(|| {
                    f();
                    Ok(())
                }),
                Op::After(other, upto) => other.wait_until(upto),
            };
            st = self.state.lock();
            st.running = 0;
            if q.holds_queue() && r.is_ok() {
                in_flight = seq;
            } else {
                if in_flight > 0 && r.is_err() {
                    // Keep the order of completion: what was in flight completes first.
                    self.settle(&mut q, &mut st, &mut in_flight);
                }
                if in_flight == 0 {
                    self.complete(&mut st, seq, r);
                } else if let Err(e) = r
                    && st.error.is_none()
                {
                    st.error = Some(e);
                }
            }
            self.progress.notify_all();
        }
    }
}

/// Runs an operation; a panic in it (a host function's, or ours) becomes
/// its failure instead of ending the worker.
fn run_caught(f: impl FnOnce() -> Result<()>) -> Result<()> {
    crate::base::guard::catch("a queued operation", f)
}

/// Whether some queue has work enqueued and not completed.
pub fn any_busy() -> bool {
    *BUSY.lock() != 0
}

/// Waits until every queue completed the device work (copies, fills,
/// launches) enqueued before this call: freeing memory or unloading a
/// program first lets work that may still use them finish (the implicit
/// synchronisation of `cuMemFree`; a queue of one device may copy to or
/// from another's memory, so all are waited for). Host functions enqueued
/// after a queue's last device work are not waited for: they are the
/// caller's code, and one may well wait for something this thread does
/// later (a host function blocked until the caller triggers it would
/// otherwise deadlock a free or a program's destruction). The calling
/// thread's own queue, when it is a queue's thread, is not waited for (its
/// earlier work is done, its later work comes after).
pub fn drain_all() {
    if !any_busy() {
        return;
    }
    let me = WORKER_OF.with(std::cell::Cell::get);
    let live: Vec<Arc<Shared>> = LIVE.lock().iter().filter_map(Weak::upgrade).collect();
    for s in live.iter().filter(|s| Arc::as_ptr(s) as usize != me) {
        let target = s.state.lock().last_device;
        let _ = s.wait_until(target);
    }
}

/// Waits (at most `limit` per queue) until every live queue completed its
/// work, then drops what did not start (liboffload's `olShutDown`).
pub fn shutdown(limit: Duration) {
    let live: Vec<Arc<Shared>> = LIVE.lock().iter().filter_map(Weak::upgrade).collect();
    for s in live {
        let deadline = Instant::now() + limit;
        let mut st = s.state.lock();
        while st.completed < st.enqueued && Instant::now() < deadline {
            s.progress.wait_for(&mut st, Duration::from_millis(10));
        }
        if st.completed < st.enqueued {
            let dropped = st.ops.len();
            st.ops.clear();
            let upto = st.enqueued;
            s.complete(&mut st, upto, Err(OffloadError::Internal(format!("{dropped} queued operations cancelled at shutdown"))));
            s.progress.notify_all();
        }
    }
}

/// Fork participation: the live list and every live queue's state, with
/// nobody waiting on its condition variables (an idle worker ends within
/// [`IDLE`], after which the handlers' next try succeeds).
pub(super) fn lock_for_fork(held: &mut ForkLocks) -> bool {
    if !(held.mutex(&LIVE) && held.mutex(&BUSY)) {
        return false;
    }
    // SAFETY: the live list's lock was just taken (its guard forgotten) by this thread.
    let live = unsafe { &*LIVE.data_ptr() };
    live.iter()
        .filter_map(Weak::upgrade)
        .all(|s| held.mutex_in(&s, |s| &s.state) && held.no_waiters(&s.work) && held.no_waiters(&s.progress))
}

/// In a child after `fork`: no worker exists; the operation a parent worker
/// was running never completes here and counts as failed; the rest runs
/// when the child synchronises or enqueues.
pub(super) fn forked_child() {
    for s in LIVE.lock().iter().filter_map(Weak::upgrade) {
        let mut st = s.state.lock();
        st.worker = false;
        if st.running != 0 {
            let seq = st.running;
            st.running = 0;
            s.complete(&mut st, seq, Err(OffloadError::Internal("the operation was running in another thread at fork".into())));
        }
    }
}
