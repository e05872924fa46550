//! The asynchronous context of one construct (22.1's `AsyncInfoTy`): the
//! device layer's [`Queue`] that the construct's copies and launch go to,
//! plus the OpenMP clean-up that has to wait until they completed (entry
//! removal after copy-back, shadow-pointer restores).
//!
//! On the host plugin nothing is ever queued and clean-up runs at once; on
//! GPU plugins the queue is synchronised once at the end of the construct,
//! or for `nowait` handed to the OpenMP task and completed by
//! `__tgt_target_nowait_query`.

use super::device::OmpDevice;
use crate::base::error::Result;
use crate::base::libomp;
use crate::device::queue::Queue;

/// OpenMP work to do once the queue has completed (`targetDataEnd`'s
/// shadow restores and removals, a host pointer restored after a copy
/// back): made by the data-motion code, run here in order.
type Post = Box<dyn FnOnce() -> Result<()>>;

/// One construct's asynchronous context on one device. Dereferences to its
/// device [`Queue`] for the copies and launches.
pub struct AsyncInfo {
    pub dev: &'static OmpDevice,
    queue: Queue,
    post: Vec<Post>,
}

impl std::fmt::Debug for AsyncInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AsyncInfo({:?}, {} deferred)", self.queue, self.post.len())
    }
}

impl std::ops::Deref for AsyncInfo {
    type Target = Queue;
    #[inline(always)]
    fn deref(&self) -> &Queue {
        &self.queue
    }
}

impl std::ops::DerefMut for AsyncInfo {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Queue {
        &mut self.queue
    }
}

impl AsyncInfo {
    /// A context for work on `dev`; nothing is acquired yet.
    #[inline]
    pub fn new(dev: &'static OmpDevice) -> Self {
        AsyncInfo { dev, queue: Queue::new(dev.device), post: Vec::new() }
    }

    /// Runs `work` once the work queued so far completed (at once when
    /// nothing is queued).
    #[inline]
    pub fn after(&mut self, work: impl FnOnce() -> Result<()> + 'static) -> Result<()> {
        if self.queue.holds_queue() {
            self.post.push(Box::new(work));
            Ok(())
        } else {
            work()
        }
    }

    /// Waits for the queued work and runs the clean-up. Every clean-up step
    /// runs even after a failure; the first error is returned.
    pub fn synchronize(&mut self) -> Result<()> {
        let r = self.queue.synchronize();
        self.run_post(r)
    }

    /// Non-blocking: `Ok(true)` once the queued work completed (clean-up done).
    pub fn query(&mut self) -> Result<bool> {
        match self.queue.query() {
            Ok(false) => Ok(false),
            r => self.run_post(r.map(|_| ())).map(|_| true),
        }
    }

    /// Ends a construct: waits for its work, or, for `nowait` with work in
    /// flight, hands the context to the running OpenMP task (libomp's target
    /// async handle), whose `__tgt_target_nowait_query` calls complete it.
    #[inline]
    pub fn finish(self, nowait: bool) -> Result<()> {
        // Nothing queued, nothing deferred: the common case on the host plugin.
        if self.queue.is_idle() && self.post.is_empty() {
            if self.queue.owns_nothing() && self.post.capacity() == 0 {
                // Nothing owned either: skip the drop glue (an out-of-line
                // call of ~20 instructions on every construct).
                std::mem::forget(self);
            }
            return Ok(());
        }
        self.finish_slow(nowait)
    }

    fn finish_slow(mut self, nowait: bool) -> Result<()> {
        if nowait
            && self.queue.holds_queue()
            && let Some(slot) = libomp::target_async_handle_slot()
        {
            let dev_id = self.dev.id;
            let pending = Box::into_raw(Box::new(Pending { tag: PENDING_TAG, info: self }));
            // SAFETY: libomp's slot of the running task; it is NULL (checked by `target_async_handle_slot`) and the task keeps it until it completes.
            unsafe { *slot = pending.cast() };
            crate::debug!("device {}: nowait work parked in the target task ({:p})", dev_id, pending);
            return Ok(());
        }
        // 22.1's scope for a construct's wait (only where there is one to wait for).
        let prof = crate::tools::profile::on();
        if prof {
            crate::tools::profile::begin("Runtime: synchronize", &|| String::new());
        }
        let r = self.synchronize();
        if prof {
            crate::tools::profile::end();
        }
        r
    }

    fn run_post(&mut self, queued: Result<()>) -> Result<()> {
        if self.post.is_empty() {
            return queued;
        }
        let mut result = queued;
        for p in std::mem::take(&mut self.post) {
            let r = p();
            if result.is_ok() {
                result = r;
            }
        }
        result
    }
}

impl Drop for AsyncInfo {
    /// A context dropped unfinished (an error path) still waits for its work
    /// and runs its clean-up, so no queued copy outlives the memory it names.
    #[inline]
    fn drop(&mut self) {
        if !self.queue.is_idle() || !self.post.is_empty() {
            let _ = self.synchronize();
        }
    }
}

const PENDING_TAG: u64 = 0x6f6d_7074_7461_736b;

/// A `nowait` construct's context parked in an OpenMP task's handle slot.
struct Pending {
    tag: u64,
    info: AsyncInfo,
}

/// Outcome of [`query_task_handle`].
#[derive(Debug, PartialEq, Eq)]
pub enum TaskQuery {
    /// Work still in flight; the handle stays.
    Pending,
    /// Completed (clean-up done); the handle was freed and cleared.
    Done,
    /// The handle is not one of ours.
    Invalid,
}

/// `__tgt_target_nowait_query` for a non-NULL handle: polls the parked
/// context; after many polls on one thread without progress it waits
/// instead (22.1 switches to blocking synchronisation the same way).
pub fn query_task_handle(slot: &mut *mut core::ffi::c_void) -> Result<TaskQuery> {
    thread_local! {
        static POLLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    const BLOCK_AFTER: u32 = 64;
    let p = *slot as *mut Pending;
    if !(p as usize).is_multiple_of(align_of::<Pending>()) {
        return Ok(TaskQuery::Invalid);
    }
    // SAFETY: a non-NULL, aligned handle stored by `AsyncInfo::finish`; the tag is checked before anything else is read.
    if unsafe { (*p).tag } != PENDING_TAG {
        return Ok(TaskQuery::Invalid);
    }
    // SAFETY: checked above; the task owns the handle and queries it from one thread at a time.
    let pending = unsafe { &mut *p };
    let polls = POLLS.with(|c| c.get());
    let done = if polls >= BLOCK_AFTER { pending.info.synchronize().map(|_| true) } else { pending.info.query() };
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // SAFETY: created by Box::into_raw in `finish`; freed once, here.
            drop(unsafe { Box::from_raw(p) });
            *slot = core::ptr::null_mut();
            return Err(e);
        }
    };
    if !done {
        POLLS.with(|c| c.set(polls + 1));
        return Ok(TaskQuery::Pending);
    }
    POLLS.with(|c| c.set(polls / 2));
    crate::debug!("device {}: parked nowait work completed", pending.info.dev.id);
    // SAFETY: created by Box::into_raw in `finish`; freed once, here.
    drop(unsafe { Box::from_raw(p) });
    *slot = core::ptr::null_mut();
    Ok(TaskQuery::Done)
}
