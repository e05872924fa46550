//! The asynchronous context of one construct (22.1's `AsyncInfoTy`): the
//! device queue that the construct's copies and launch go to, and the
//! clean-up that has to wait until they completed (entry removal after
//! copy-back, private buffers, shadow-pointer restores).
//!
//! Devices whose plugin has no queues (the host plugin) never acquire one:
//! every operation completes before it returns and clean-up runs at once, so
//! the context costs one branch per operation there. On GPU plugins the
//! queue is taken on first use and synchronised once at the end of the
//! construct, or for `nowait` handed to the OpenMP task and completed by
//! `__tgt_target_nowait_query`.

use crate::base::error::Result;
use crate::base::libomp;
use crate::device::Device;
use crate::openmp::data::{self, EndQueue};
use crate::plugins::{AllocKind, EventHandle, LaunchDims, QueueHandle};

/// Work to do once the queue has completed.
#[derive(Debug)]
enum Post {
    /// `targetDataEnd` post-processing: shadow restores and removals.
    FinishEnd(EndQueue),
    /// A device buffer the queued work used (private copies).
    Free(u64),
    /// A host pointer to restore after a copy back (`target update from`).
    WriteHost(usize, u64),
    /// A value whose address a queued copy reads.
    Keep(#[allow(dead_code)] Box<u64>),
    /// A profile event waiting for the device times of its timing token.
    Profile(Box<crate::tools::profile::DeviceEvent>, u64),
}

/// One construct's asynchronous context on one device.
#[derive(Debug)]
pub struct AsyncInfo {
    pub dev: &'static Device,
    queue: Option<QueueHandle>,
    post: Vec<Post>,
}

impl AsyncInfo {
    /// A context for work on `dev`; nothing is acquired yet.
    #[inline]
    pub fn new(dev: &'static Device) -> Self {
        AsyncInfo { dev, queue: None, post: Vec::new() }
    }

    /// Whether operations of this context are queued (the plugin has queues).
    #[inline]
    pub fn queued(&self) -> bool {
        self.dev.queued
    }

    /// The queue, taken from the plugin on first use.
    fn queue(&mut self) -> Result<QueueHandle> {
        if let Some(q) = self.queue {
            return Ok(q);
        }
        let q = self.dev.plugin.queue_acquire(self.dev.plugin_device)?;
        self.queue = Some(q);
        Ok(q)
    }

    /// Host → device copy, queued where the plugin queues.
    ///
    /// # Safety
    /// `[src, src+size)` stays readable until the context completes.
    #[inline(always)]
    pub unsafe fn submit(&mut self, dst: u64, src: usize, size: u64) -> Result<()> {
        if !self.queued() {
            // SAFETY: forwarded contract.
            return unsafe { self.dev.submit(dst, src, size) };
        }
        let q = self.queue()?;
        if crate::tools::ompt::hooks() {
            // SAFETY: forwarded contract.
            return unsafe { self.copy_traced(true, dst, src, size, q) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.dev.plugin.submit_async(self.dev.plugin_device, dst, src, size, q) }
    }

    /// Device → host copy, queued where the plugin queues.
    ///
    /// # Safety
    /// `[dst, dst+size)` stays writable and unread until the context completes.
    #[inline(always)]
    pub unsafe fn retrieve(&mut self, dst: usize, src: u64, size: u64) -> Result<()> {
        if !self.queued() {
            // SAFETY: forwarded contract.
            return unsafe { self.dev.retrieve(dst, src, size) };
        }
        let q = self.queue()?;
        if crate::tools::ompt::hooks() {
            // SAFETY: forwarded contract.
            return unsafe { self.copy_traced(false, src, dst, size, q) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.dev.plugin.retrieve_async(self.dev.plugin_device, dst, src, size, q) }
    }

    /// A queued copy with its OMPT callbacks and profile event (`to_device`:
    /// host `host` → device `tgt`, else device `tgt` → host `host`). While
    /// profiling, the copy is timed on the device where the plugin can.
    ///
    /// # Safety
    /// As [`AsyncInfo::submit`] / [`AsyncInfo::retrieve`].
    #[cold]
    #[inline(never)]
    unsafe fn copy_traced(&mut self, to_device: bool, tgt: u64, host: usize, size: u64, q: QueueHandle) -> Result<()> {
        let dev = self.dev;
        let mut token = None;
        let (r, ev) = dev.traced_copy(to_device, tgt, host, size, |tool| {
            token = if crate::tools::profile::on() { dev.plugin.timing_start(dev.plugin_device, q) } else { None };
            let r = if to_device {
                // SAFETY: forwarded contract.
                unsafe { dev.plugin.submit_async(dev.plugin_device, tgt, host, size, q) }
            } else {
                // SAFETY: forwarded contract.
                unsafe { dev.plugin.retrieve_async(dev.plugin_device, host, tgt, size, q) }
            };
            if let Some(t) = token {
                dev.plugin.timing_stop(dev.plugin_device, q, t);
            }
            match r {
                // A traced copy's end time is its completion.
                Ok(()) if tool && crate::tools::ompt::wait_queued(dev.id) => dev.plugin.queue_synchronize(dev.plugin_device, q),
                r => r,
            }
        });
        if let Some(ev) = ev {
            self.profile_after(ev, token);
        }
        r
    }

    /// Profiling: starts timing the next operation on the device (a token
    /// for [`AsyncInfo::timing_stop`] and [`AsyncInfo::profile_after`]);
    /// `None` where the plugin has no queue or no device timing.
    #[cold]
    pub fn timing_start(&mut self) -> Option<u64> {
        if !self.queued() {
            return None;
        }
        let q = self.queue().ok()?;
        self.dev.plugin.timing_start(self.dev.plugin_device, q)
    }

    /// Ends the span [`AsyncInfo::timing_start`] began (after the operation was queued).
    #[cold]
    pub fn timing_stop(&mut self, token: u64) {
        if let Some(q) = self.queue {
            self.dev.plugin.timing_stop(self.dev.plugin_device, q, token);
        }
    }

    /// Writes a profile device event: at once with host times when it was
    /// not timed on the device, else once the queue completed (no wait is
    /// added: the construct's own synchronisation, or the query of a
    /// `nowait` task that finds it complete, writes it).
    #[cold]
    pub fn profile_after(&mut self, ev: crate::tools::profile::DeviceEvent, token: Option<u64>) {
        match token {
            Some(t) if self.queue.is_some() => self.post.push(Post::Profile(Box::new(ev), t)),
            _ => ev.commit(None),
        }
    }

    /// Writes a pointer-sized value to device memory (the value is kept
    /// alive by the context while the copy is queued).
    pub fn write_u64(&mut self, dst: u64, value: u64) -> Result<()> {
        if !self.queued() {
            return self.dev.write_u64(dst, value);
        }
        let boxed = Box::new(value);
        let src = &*boxed as *const u64 as usize;
        self.post.push(Post::Keep(boxed));
        // SAFETY: the box lives in `post` until the context completes.
        unsafe { self.submit(dst, src, 8) }
    }

    /// Launches a kernel after the work queued so far.
    pub fn launch(&mut self, kernel: crate::plugins::KernelHandle, name: &str, args: &[u64], dims: &LaunchDims) -> Result<()> {
        if !self.queued() {
            return self.dev.plugin.launch(self.dev.plugin_device, kernel, name, args, dims);
        }
        let q = self.queue()?;
        self.dev.plugin.launch_async(self.dev.plugin_device, kernel, name, args, dims, q)
    }

    /// Frees a device buffer when the context completes (private copies a
    /// launch reads).
    pub fn free_after_launch(&mut self, ptr: u64) {
        self.post.push(Post::Free(ptr));
    }

    /// Frees a device buffer once the work queued so far no longer needs it
    /// (at once when nothing is in flight).
    pub fn free_after(&mut self, ptr: u64) {
        if self.queue.is_some() {
            self.post.push(Post::Free(ptr));
        } else {
            let _ = self.dev.free(ptr, AllocKind::Default);
        }
    }

    /// Runs `targetDataEnd`'s post-processing once the copies back landed.
    /// The caller's queue is taken only when it has to wait: the common case
    /// does not copy it (~140 bytes inline).
    #[inline]
    pub fn finish_end_queue(&mut self, post: &mut EndQueue) -> Result<()> {
        if self.queue.is_some() {
            self.post.push(Post::FinishEnd(std::mem::take(post)));
            Ok(())
        } else {
            data::finish_end_items(self.dev, post)
        }
    }

    /// Restores a host pointer once the copy back that overwrote it landed.
    pub fn write_host_after(&mut self, addr: usize, value: u64) {
        if self.queue.is_some() {
            self.post.push(Post::WriteHost(addr, value));
        } else {
            data::write_host_ptr(addr, value);
        }
    }

    /// Records an event after the work queued so far (None without a queue).
    pub fn record_event(&mut self) -> Result<Option<EventHandle>> {
        match self.queue {
            Some(q) => self.dev.plugin.event_record(self.dev.plugin_device, q).map(Some),
            None => Ok(None),
        }
    }

    /// Makes this context's later work wait for `event` (another context's
    /// copy into a mapping this one now uses).
    pub fn wait_event(&mut self, event: EventHandle) -> Result<()> {
        if !self.queued() {
            return Ok(());
        }
        let q = self.queue()?;
        self.dev.plugin.event_wait(self.dev.plugin_device, event, q)
    }

    /// Waits for the work queued so far, keeping the queue and leaving the
    /// clean-up for [`AsyncInfo::synchronize`] (kernel record/replay takes
    /// its memory snapshots between the copies and the launch).
    pub fn drain(&mut self) -> Result<()> {
        match self.queue {
            Some(q) => self.dev.plugin.queue_synchronize(self.dev.plugin_device, q),
            None => Ok(()),
        }
    }

    /// Waits for the queued work and runs the clean-up. Every clean-up step
    /// runs even after a failure; the first error is returned.
    pub fn synchronize(&mut self) -> Result<()> {
        let r = match self.queue {
            Some(q) => {
                let r = self.dev.plugin.queue_synchronize(self.dev.plugin_device, q);
                self.release_queue(q);
                r
            }
            None => Ok(()),
        };
        self.run_post(r)
    }

    /// Non-blocking: `Ok(true)` once the queued work completed (clean-up done).
    pub fn query(&mut self) -> Result<bool> {
        let r = match self.queue {
            Some(q) => match self.dev.plugin.queue_query(self.dev.plugin_device, q) {
                Ok(false) => return Ok(false),
                r => {
                    self.release_queue(q);
                    r.map(|_| ())
                }
            },
            None => Ok(()),
        };
        self.run_post(r).map(|_| true)
    }

    /// Ends a construct: waits for its work, or, for `nowait` with work in
    /// flight, hands the context to the running OpenMP task (libomp's target
    /// async handle), whose `__tgt_target_nowait_query` calls complete it.
    #[inline]
    pub fn finish(self, nowait: bool) -> Result<()> {
        // Nothing queued, nothing deferred: the common case on the host plugin.
        if self.queue.is_none() && self.post.is_empty() {
            if self.post.capacity() == 0 {
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
            && self.queue.is_some()
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

    fn release_queue(&mut self, q: QueueHandle) {
        self.queue = None;
        self.dev.plugin.queue_release(self.dev.plugin_device, q);
    }

    fn run_post(&mut self, queued: Result<()>) -> Result<()> {
        if self.post.is_empty() {
            return queued;
        }
        let mut result = queued;
        for p in std::mem::take(&mut self.post) {
            let r = match p {
                Post::FinishEnd(end) => data::finish_end(self.dev, end),
                Post::Free(ptr) => self.dev.free(ptr, AllocKind::Default),
                Post::WriteHost(addr, value) => {
                    data::write_host_ptr(addr, value);
                    Ok(())
                }
                Post::Keep(_) => Ok(()),
                Post::Profile(ev, token) => {
                    ev.commit(self.dev.plugin.timing_read(self.dev.plugin_device, token));
                    Ok(())
                }
            };
            if result.is_ok() {
                result = r;
            }
        }
        result
    }
}

impl Drop for AsyncInfo {
    /// A context dropped unfinished (an error path) still waits for its work
    /// and frees its buffers, so no queued copy outlives the memory it names.
    #[inline]
    fn drop(&mut self) {
        if self.queue.is_some() || !self.post.is_empty() {
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
