//! Deferred queues for the host plugin, a test mode
//! (`OMPTARGET_RS_HOST_QUEUES=N`): copies and launches are recorded and run
//! only when the queue is synchronised, when a query finds it ready (after
//! answering "not ready" N times), or when another queue waits for one of
//! its events. It drives the runtime's whole asynchronous path — `nowait`
//! regions parked in OpenMP tasks, `__tgt_target_nowait_query`, events on
//! mapping entries, clean-up after completion — with real clang-compiled
//! programs and no GPU: anything the runtime reads or frees too early shows
//! up as a wrong result against LLVM's runtime.

use super::call;
use crate::base::error::{OffloadError, Result};
use crate::plugins::{EventHandle, QueueHandle};
use parking_lot::Mutex;
use std::sync::Arc;

#[derive(Debug)]
enum Op {
    Copy {
        dst: usize,
        src: usize,
        size: usize,
    },
    Launch {
        kernel: usize,
        args: Vec<u64>,
    },
    /// Run `queue`'s work up to its operation number `upto` first.
    Wait {
        queue: usize,
        upto: u64,
    },
}

#[derive(Debug, Default)]
struct State {
    ops: std::collections::VecDeque<Op>,
    /// Operations ever enqueued / ever completed on this queue.
    enqueued: u64,
    completed: u64,
    /// An operation is running (taken out of `ops`, not completed yet).
    running: bool,
    /// "Not ready" answers left before a query runs the work.
    not_ready_left: u32,
    in_use: bool,
}

#[derive(Debug, Default)]
struct HostQueue {
    state: Mutex<State>,
    /// Signalled whenever an operation completes.
    done: parking_lot::Condvar,
}

/// All queues of the host plugin (any device: device memory is host memory).
#[derive(Debug, Default)]
pub struct Queues {
    queues: Mutex<Vec<Arc<HostQueue>>>,
    /// Event → (queue, operation count when recorded); `None` once released.
    events: Mutex<Vec<Option<(usize, u64)>>>,
}

fn bad(what: &str, h: u64) -> OffloadError {
    OffloadError::Internal(format!("host plugin: invalid {what} handle {h}"))
}

impl Queues {
    /// Fork safety: the queue list, the events and every queue's state, with
    /// no thread waiting for a queue's completion (see `runtime::fork`).
    pub fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        if !(held.mutex(&self.queues) && held.mutex(&self.events)) {
            return false;
        }
        // SAFETY: the queue-list lock was just taken (and its guard forgotten) by this thread.
        let queues = unsafe { &*self.queues.data_ptr() };
        queues.iter().all(|q| held.mutex_in(q, |q| &q.state) && held.no_waiters(&q.done))
    }

    /// In a child after `fork`: an operation that a parent thread had taken
    /// out of its queue and was running counts as completed, since no thread
    /// of the child will ever finish it (the copy or kernel ran in the parent).
    pub fn forked_child(&self) {
        for q in self.queues.lock().iter() {
            let mut st = q.state.lock();
            if st.running {
                st.running = false;
                st.completed += 1;
            }
        }
    }

    fn get(&self, q: QueueHandle) -> Result<Arc<HostQueue>> {
        self.queues.lock().get(q as usize).cloned().ok_or_else(|| bad("queue", q))
    }

    pub fn acquire(&self, not_ready: u32) -> QueueHandle {
        let mut all = self.queues.lock();
        let i = match all.iter().position(|q| !q.state.lock().in_use) {
            Some(i) => i,
            None => {
                all.push(Arc::default());
                all.len() - 1
            }
        };
        let mut st = all[i].state.lock();
        st.in_use = true;
        st.not_ready_left = not_ready;
        i as QueueHandle
    }

    pub fn release(&self, q: QueueHandle) {
        if let Ok(queue) = self.get(q) {
            // Work left behind (an error path) still runs: it names live memory.
            let _ = self.run_upto(&queue, u64::MAX);
            queue.state.lock().in_use = false;
        }
    }

    fn push(&self, q: QueueHandle, op: Op) -> Result<()> {
        let queue = self.get(q)?;
        let mut st = queue.state.lock();
        st.ops.push_back(op);
        st.enqueued += 1;
        Ok(())
    }

    pub fn copy(&self, q: QueueHandle, dst: usize, src: usize, size: u64) -> Result<()> {
        self.push(q, Op::Copy { dst, src, size: size as usize })
    }

    pub fn launch(&self, q: QueueHandle, kernel: u64, args: &[u64]) -> Result<()> {
        self.push(q, Op::Launch { kernel: kernel as usize, args: args.to_vec() })
    }

    pub fn synchronize(&self, q: QueueHandle) -> Result<()> {
        let queue = self.get(q)?;
        self.run_upto(&queue, u64::MAX)
    }

    pub fn query(&self, q: QueueHandle) -> Result<bool> {
        let queue = self.get(q)?;
        {
            let mut st = queue.state.lock();
            if st.not_ready_left > 0 && st.completed < st.enqueued {
                st.not_ready_left -= 1;
                return Ok(false);
            }
        }
        self.run_upto(&queue, u64::MAX).map(|_| true)
    }

    pub fn record(&self, q: QueueHandle) -> Result<EventHandle> {
        let upto = self.get(q)?.state.lock().enqueued;
        let mut events = self.events.lock();
        let slot = (q as usize, upto);
        // Event 0 means "none" to the runtime: handles start at 1.
        match events.iter().position(Option::is_none) {
            Some(i) => {
                events[i] = Some(slot);
                Ok(i as u64 + 1)
            }
            None => {
                events.push(Some(slot));
                Ok(events.len() as u64)
            }
        }
    }

    pub fn wait(&self, event: EventHandle, q: QueueHandle) -> Result<()> {
        let (queue, upto) =
            event.checked_sub(1).and_then(|i| self.events.lock().get(i as usize).copied().flatten()).ok_or_else(|| bad("event", event))?;
        if queue == q as usize {
            return Ok(()); // Same queue: already ordered.
        }
        self.push(q, Op::Wait { queue, upto })
    }

    pub fn release_event(&self, event: EventHandle) {
        if let Some(slot) = event.checked_sub(1).and_then(|i| self.events.lock().get_mut(i as usize).map(Option::take)) {
            crate::debug!("host plugin: released event {event} {slot:?}");
        }
    }

    /// Runs the queue's operations numbered below `upto` (all for MAX), one
    /// at a time in order; operations another thread is running are waited
    /// for. Waiting only ever targets work enqueued before the waiting
    /// operation, so two queues cannot wait for each other.
    fn run_upto(&self, queue: &HostQueue, upto: u64) -> Result<()> {
        let mut st = queue.state.lock();
        loop {
            if st.completed >= upto.min(st.enqueued) {
                return Ok(());
            }
            if st.running {
                queue.done.wait(&mut st);
                continue;
            }
            let Some(op) = st.ops.pop_front() else { return Ok(()) };
            st.running = true;
            drop(st);
            let r = self.run(op);
            st = queue.state.lock();
            st.running = false;
            st.completed += 1;
            queue.done.notify_all();
            r?;
        }
    }

    fn run(&self, op: Op) -> Result<()> {
        match op {
            // SAFETY: the runtime keeps both ranges valid until the queue is synchronised (submit_async/retrieve_async contracts).
            Op::Copy { dst, src, size } => unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) },
            // SAFETY: as for the synchronous launch: a kernel symbol of a loaded image with pointer-sized parameters.
            Op::Launch { kernel, args } => unsafe { call::call_kernel(kernel, &args) },
            Op::Wait { queue, upto } => {
                let other = self.get(queue as u64)?;
                self.run_upto(&other, upto)?;
            }
        }
        Ok(())
    }
}
