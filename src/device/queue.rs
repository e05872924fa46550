//! The in-order work of one user of a device (22.1's `AsyncInfoTy`, minus
//! what is OpenMP's): the plugin queue that copies and launches go to, and
//! the clean-up that has to wait until they completed (private buffers,
//! values a queued copy reads, profile events waiting for device times).
//!
//! Devices whose plugin has no queues (the host plugin) never acquire one:
//! every operation completes before it returns and clean-up runs at once, so
//! a queue costs one branch per operation there. On GPU plugins the plugin
//! queue is taken on first use and synchronised (or queried) by the owner.
//! OpenMP constructs wrap one per construct (`crate::openmp::async_info`);
//! liboffload's queues run one on their host thread (`super::work_queue`).

use super::Device;
use crate::base::error::Result;
use crate::plugins::{AllocKind, EventHandle, KernelHandle, LaunchDims, QueueHandle};

/// Work to do once the queue has completed.
#[derive(Debug)]
enum Post {
    /// A device buffer the queued work used (private copies).
    Free(u64),
    /// A value whose address a queued copy reads.
    Keep(#[allow(dead_code)] Box<u64>),
    /// A profile event waiting for the device times of its timing token.
    Profile(Box<crate::tools::profile::DeviceEvent>, u64),
}

/// What the tools are told of a launch (OMPT's submit callback, the
/// profile's kernel event).
#[derive(Debug, Clone, Copy)]
pub struct LaunchReport<'a> {
    pub name: &'a str,
    pub num_teams: [u32; 3],
    pub thread_limit: [u32; 3],
    pub nargs: usize,
    pub tripcount: u64,
}

/// One user's in-order work on one device.
#[derive(Debug)]
pub struct Queue {
    pub dev: &'static Device,
    queue: Option<QueueHandle>,
    post: Vec<Post>,
}

impl Queue {
    /// A queue for work on `dev`; nothing is acquired yet.
    #[inline]
    pub fn new(dev: &'static Device) -> Self {
        Queue { dev, queue: None, post: Vec::new() }
    }

    /// Whether operations are queued (the plugin has queues).
    #[inline]
    pub fn queued(&self) -> bool {
        self.dev.queued
    }

    /// Whether nothing is queued or deferred: no plugin queue taken, no clean-up pending.
    #[inline(always)]
    pub fn is_idle(&self) -> bool {
        self.queue.is_none() && self.post.is_empty()
    }

    /// Whether a plugin queue is held (work may be in flight).
    #[inline(always)]
    pub fn holds_queue(&self) -> bool {
        self.queue.is_some()
    }

    /// Whether the queue owns nothing that needs dropping (the caller may forget it).
    #[inline(always)]
    pub fn owns_nothing(&self) -> bool {
        self.queue.is_none() && self.post.capacity() == 0
    }

    /// The plugin queue, taken on first use.
    fn queue(&mut self) -> Result<QueueHandle> {
        if let Some(q) = self.queue {
            return Ok(q);
        }
        let q = self.dev.plugin.queue_acquire(self.dev.plugin_device)?;
        self.queue = Some(q);
        Ok(q)
    }

    /// The plugin queue's handle for foreign code (interop `targetsync`).
    pub fn native(&mut self) -> Result<Option<usize>> {
        let q = self.queue()?;
        Ok(self.dev.plugin.queue_native(self.dev.plugin_device, q))
    }

    /// Host → device copy, queued where the plugin queues.
    ///
    /// # Safety
    /// `[src, src+size)` stays readable until the queue completes.
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
    /// `[dst, dst+size)` stays writable and unread until the queue completes.
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
    /// As [`Queue::submit`] / [`Queue::retrieve`].
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
    /// for [`Queue::timing_stop`] and [`Queue::profile_after`]); `None`
    /// where the plugin has no queue or no device timing.
    #[cold]
    fn timing_start(&mut self) -> Option<u64> {
        if !self.queued() {
            return None;
        }
        let q = self.queue().ok()?;
        self.dev.plugin.timing_start(self.dev.plugin_device, q)
    }

    /// Ends the span [`Queue::timing_start`] began (after the operation was queued).
    #[cold]
    fn timing_stop(&mut self, token: u64) {
        if let Some(q) = self.queue {
            self.dev.plugin.timing_stop(self.dev.plugin_device, q, token);
        }
    }

    /// Writes a profile device event: at once with host times when it was
    /// not timed on the device, else once the queue completed (no wait is
    /// added: the owner's own synchronisation writes it).
    #[cold]
    fn profile_after(&mut self, ev: crate::tools::profile::DeviceEvent, token: Option<u64>) {
        match token {
            Some(t) if self.queue.is_some() => self.post.push(Post::Profile(Box::new(ev), t)),
            _ => ev.commit(None),
        }
    }

    /// Writes a pointer-sized value to device memory (the value is kept
    /// alive by the queue while the copy is in flight).
    pub fn write_u64(&mut self, dst: u64, value: u64) -> Result<()> {
        if !self.queued() {
            return self.dev.write_u64(dst, value);
        }
        let boxed = Box::new(value);
        let src = &*boxed as *const u64 as usize;
        self.post.push(Post::Keep(boxed));
        // SAFETY: the box lives in `post` until the queue completes.
        unsafe { self.submit(dst, src, 8) }
    }

    /// Launches a kernel after the work queued so far (no tool is told).
    #[inline]
    pub fn launch(&mut self, kernel: KernelHandle, name: &str, args: &[u64], dims: &LaunchDims) -> Result<()> {
        if !self.queued() {
            return self.dev.plugin.launch(self.dev.plugin_device, kernel, name, args, dims);
        }
        let q = self.queue()?;
        self.dev.plugin.launch_async(self.dev.plugin_device, kernel, name, args, dims, q)
    }

    /// A launch the tools are told of: OMPT's submit callbacks around it
    /// (after its completion when the tool wants device end times) and the
    /// profile's kernel event (timed on the device where the plugin can).
    #[cold]
    #[inline(never)]
    pub fn launch_reported(&mut self, kernel: KernelHandle, args: &[u64], dims: &LaunchDims, report: &LaunchReport<'_>) -> Result<()> {
        let dev = self.dev;
        let ts = crate::tools::profile::start();
        let tool = crate::tools::ompt::on();
        let prof = crate::tools::profile::on();
        if tool {
            crate::tools::ompt::submit(true, dev.id, report.num_teams[0]);
        }
        let token = if prof { self.timing_start() } else { None };
        let mut r = self.launch(kernel, report.name, args, dims);
        if let Some(t) = token {
            self.timing_stop(t);
        }
        if tool {
            if r.is_ok() && crate::tools::ompt::wait_queued(dev.id) {
                // A traced kernel's end time is its completion.
                r = self.drain();
            }
            crate::tools::ompt::submit(false, dev.id, report.num_teams[0]);
        }
        if prof {
            let l = crate::tools::profile::Launch {
                name: report.name,
                num_teams: report.num_teams,
                thread_limit: report.thread_limit,
                grid: dev.plugin.launched_grid(dev.plugin_device, kernel, dims),
                nargs: report.nargs,
                tripcount: report.tripcount,
            };
            if let Some(ev) = crate::tools::profile::kernel(dev.id, dev.plugin.name(), &l, ts) {
                self.profile_after(ev, token);
            }
        }
        r
    }

    /// Frees a device buffer when the queue completes (private copies a
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

    /// Records an event after the work queued so far (None without a queue).
    pub fn record_event(&mut self) -> Result<Option<EventHandle>> {
        match self.queue {
            Some(q) => self.dev.plugin.event_record(self.dev.plugin_device, q).map(Some),
            None => Ok(None),
        }
    }

    /// Makes this queue's later work wait for `event` (of another queue of
    /// the same device).
    pub fn wait_event(&mut self, event: EventHandle) -> Result<()> {
        if !self.queued() {
            return Ok(());
        }
        let q = self.queue()?;
        self.dev.plugin.event_wait(self.dev.plugin_device, event, q)
    }

    /// Waits for the work queued so far, keeping the plugin queue and
    /// leaving the clean-up for [`Queue::synchronize`].
    pub fn drain(&mut self) -> Result<()> {
        match self.queue {
            Some(q) => self.dev.plugin.queue_synchronize(self.dev.plugin_device, q),
            None => Ok(()),
        }
    }

    /// Waits for the queued work, gives the plugin queue back and runs the
    /// clean-up. Every clean-up step runs even after a failure; the first
    /// error is returned.
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
                Post::Free(ptr) => self.dev.free(ptr, AllocKind::Default),
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

impl Drop for Queue {
    /// A queue dropped unfinished (an error path) still waits for its work
    /// and frees its buffers, so no queued copy outlives the memory it names.
    #[inline]
    fn drop(&mut self) {
        if !self.is_idle() {
            let _ = self.synchronize();
        }
    }
}
