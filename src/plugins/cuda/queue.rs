//! Asynchronous queues and events of the CUDA plugin (the "Asynchronous
//! work" methods of [`Plugin`](crate::plugins::Plugin)).
//!
//! A queue is a pooled `CUstream` of one device plus what its queued work
//! needs until it completes: the launch environments of launches (host copy,
//! device copy, reduction buffer), freed when a synchronize or a query sees
//! the stream complete. An event is a pooled `CUevent` created with
//! `CU_EVENT_DISABLE_TIMING`.
//!
//! Handles given to the runtime are [`Slab`] keys: the low 32 bits are the
//! slot index + 1 (so 0 is never a handle), the high 32 bits the slot's
//! generation, which changes when the slot is freed. A released or made-up
//! handle is refused with an error naming it, never dereferenced.
//!
//! Context: every method makes the device's context current on the calling
//! thread before touching the driver, so a queue filled on one host thread
//! can be queried, synchronised or released on another.
//!
//! Errors: a failure to enqueue is returned by the enqueuing call (nothing
//! was queued); a failure of queued work is returned by the synchronize or
//! query that observes it. A queue whose stream failed is destroyed, not
//! pooled, when released.

use super::driver::{self, CUresult, CudaDriver};
use super::{CudaPlugin, DeviceCtx, DriverAlloc, Handle, KernelLaunchEnvironment};
use crate::base::error::{OffloadError, Result};
use crate::plugins::{EventHandle, QueueHandle};
use parking_lot::Mutex;
use std::sync::Arc;

/// A table of values addressed by generation-checked `u64` keys.
pub(crate) struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { slots: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    fn encode(index: u32, generation: u32) -> u64 {
        (u64::from(generation) << 32) | (u64::from(index) + 1)
    }

    fn decode(key: u64) -> Option<(usize, u32)> {
        let low = (key & 0xffff_ffff) as u32;
        let index = low.checked_sub(1)?;
        Some((index as usize, (key >> 32) as u32))
    }

    /// Stores `value`; `None` when 2^32 - 1 slots are in use.
    pub fn insert(&mut self, value: T) -> Option<u64> {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(self.slots.len()).ok().filter(|&i| i < u32::MAX)?;
                self.slots.push(Slot { generation: 0, value: None });
                i
            }
        };
        let slot = &mut self.slots[index as usize];
        slot.value = Some(value);
        Some(Self::encode(index, slot.generation))
    }

    /// The value of a live key.
    pub fn get(&self, key: u64) -> Option<&T> {
        let (index, generation) = Self::decode(key)?;
        let slot = self.slots.get(index)?;
        if slot.generation != generation {
            return None;
        }
        slot.value.as_ref()
    }

    /// The value of a live key, to change it.
    pub fn get_mut(&mut self, key: u64) -> Option<&mut T> {
        let (index, generation) = Self::decode(key)?;
        let slot = self.slots.get_mut(index)?;
        if slot.generation != generation {
            return None;
        }
        slot.value.as_mut()
    }

    /// Takes the value out; the key (and every copy of it) becomes invalid.
    pub fn remove(&mut self, key: u64) -> Option<T> {
        let (index, generation) = Self::decode(key)?;
        let slot = self.slots.get_mut(index)?;
        if slot.generation != generation {
            return None;
        }
        let value = slot.value.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(index as u32);
        Some(value)
    }

    /// Number of live values.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// What queued work needs until its stream completes.
pub(super) enum Deferred {
    /// A pool block (launch environment, reduction buffer).
    Device(u64),
    /// The host copy a queued launch-environment transfer reads.
    Host(#[expect(dead_code, reason = "held only to be dropped once the stream completed")] Box<KernelLaunchEnvironment>),
}

/// One queue: a stream of `device` and its deferred clean-up.
pub(super) struct QueueEntry {
    pub device: usize,
    pub state: Mutex<QueueState>,
}

/// The mutable part of a queue, locked while its stream is used.
pub(super) struct QueueState {
    pub stream: Handle,
    pub deferred: Vec<Deferred>,
    /// Work was queued since the stream was last seen complete.
    pub pending: bool,
    /// The stream reported a failure: destroy it at release.
    pub failed: bool,
}

pub(super) type Queue = Arc<QueueEntry>;

/// One recorded event.
#[derive(Debug, Clone, Copy)]
pub(super) struct EventState {
    pub device: usize,
    pub event: Handle,
}

/// Frees what completed work needed. Pool blocks go back to the pool (the
/// stream is complete, so the next user cannot race with it).
pub(super) fn release_deferred(d: &CudaDriver, ctx: &DeviceCtx, items: Vec<Deferred>) {
    let alloc = DriverAlloc(d);
    for item in items {
        if let Deferred::Device(p) = item
            && let Err(e) = ctx.pool.free(p, &alloc)
        {
            crate::debug!("cuda: freeing launch buffer {p:#x}: {e}");
        }
    }
}

impl CudaPlugin {
    /// A stream from the device's pool, created when the pool is empty.
    pub(super) fn take_stream(&self, d: &CudaDriver, ctx: &DeviceCtx) -> Result<Handle> {
        if let Some(s) = ctx.streams.lock().pop() {
            return Ok(s);
        }
        let mut s: driver::CUstream = core::ptr::null_mut();
        // SAFETY: valid out-pointer; the device context is current.
        d.check(unsafe { (d.cuStreamCreate)(&mut s, driver::CU_STREAM_NON_BLOCKING) }, "cuStreamCreate")?;
        Ok(Handle(s))
    }

    /// Returns an idle stream to the pool, or destroys one that failed.
    pub(super) fn return_stream(&self, d: &CudaDriver, ctx: &DeviceCtx, stream: Handle, failed: bool) {
        if !failed {
            ctx.streams.lock().push(stream);
        } else if let Some(destroy) = d.cuStreamDestroy_v2 {
            // SAFETY: the stream is ours, idle, and not used again.
            let _ = unsafe { destroy(stream.0) };
        }
    }

    /// The live queue behind `handle`, checked to belong to `device`.
    pub(super) fn queue(&self, handle: QueueHandle, device: usize) -> Result<Queue> {
        let q = self
            .queues
            .lock()
            .get(handle)
            .cloned()
            .ok_or_else(|| OffloadError::Internal(format!("cuda: unknown queue handle {handle:#x}")))?;
        if q.device != device {
            return Err(OffloadError::Internal(format!("cuda: queue {handle:#x} belongs to device {}, not {device}", q.device)));
        }
        Ok(q)
    }

    fn event(&self, handle: EventHandle) -> Result<EventState> {
        self.events.lock().get(handle).copied().ok_or_else(|| OffloadError::Internal(format!("cuda: unknown event handle {handle:#x}")))
    }

    /// The stream completed (or failed): release what its work needed.
    fn completed(d: &CudaDriver, ctx: &DeviceCtx, st: &mut QueueState) {
        st.pending = false;
        release_deferred(d, ctx, std::mem::take(&mut st.deferred));
    }

    pub(super) fn queue_acquire_impl(&self, device: usize) -> Result<QueueHandle> {
        let (d, _, ctx) = self.active(device)?;
        let stream = self.take_stream(d, ctx)?;
        let state = QueueState { stream, deferred: Vec::new(), pending: false, failed: false };
        match self.queues.lock().insert(Arc::new(QueueEntry { device, state: Mutex::new(state) })) {
            Some(h) => Ok(h),
            None => {
                self.return_stream(d, ctx, stream, false);
                Err(OffloadError::Internal("cuda: too many queues".into()))
            }
        }
    }

    pub(super) fn queue_synchronize_impl(&self, device: usize, queue: QueueHandle) -> Result<()> {
        let q = self.queue(queue, device)?;
        let mut st = q.state.lock();
        if !st.pending {
            return Ok(()); // Nothing queued since the stream was last seen complete.
        }
        let (d, _, ctx) = self.active(device)?;
        // SAFETY: the stream belongs to this device's context, which is current.
        let rc = unsafe { (d.cuStreamSynchronize)(st.stream.0) };
        Self::completed(d, ctx, &mut st);
        if rc != CUresult::SUCCESS {
            st.failed = true;
            return Err(d.error(rc, "cuStreamSynchronize"));
        }
        Ok(())
    }

    pub(super) fn queue_query_impl(&self, device: usize, queue: QueueHandle) -> Result<bool> {
        let q = self.queue(queue, device)?;
        let mut st = q.state.lock();
        if !st.pending {
            return Ok(true);
        }
        let (d, _, ctx) = self.active(device)?;
        let Some(query) = d.cuStreamQuery else {
            drop(st);
            return self.queue_synchronize_impl(device, queue).map(|()| true);
        };
        // SAFETY: the stream belongs to this device's context, which is current.
        let rc = unsafe { query(st.stream.0) };
        match rc {
            CUresult::ERROR_NOT_READY => Ok(false),
            CUresult::SUCCESS => {
                Self::completed(d, ctx, &mut st);
                Ok(true)
            }
            _ => {
                Self::completed(d, ctx, &mut st);
                st.failed = true;
                Err(d.error(rc, "cuStreamQuery"))
            }
        }
    }

    pub(super) fn queue_release_impl(&self, device: usize, queue: QueueHandle) {
        let Some(q) = self.queues.lock().remove(queue) else {
            crate::debug!("cuda: releasing unknown queue handle {queue:#x}: ignored");
            return;
        };
        if q.device != device {
            crate::debug!("cuda: queue {queue:#x} of device {} released as device {device}", q.device);
        }
        let Ok((d, _, ctx)) = self.active(q.device) else { return };
        let mut st = q.state.lock();
        if st.pending {
            // The contract says its work completed; make sure before reusing
            // the stream or freeing buffers that work may still read.
            crate::debug!("cuda: queue {queue:#x} released with queued work: waiting for it");
            // SAFETY: the stream belongs to this device's context, which is current.
            if unsafe { (d.cuStreamSynchronize)(st.stream.0) } != CUresult::SUCCESS {
                st.failed = true;
            }
        }
        Self::completed(d, ctx, &mut st);
        self.return_stream(d, ctx, st.stream, st.failed);
    }

    /// Queues a host → device copy on `queue`.
    ///
    /// # Safety
    /// `[src, src+size)` stays readable until the queue is synchronised.
    pub(super) unsafe fn submit_async_impl(&self, device: usize, dst: u64, src: usize, size: u64, queue: QueueHandle) -> Result<()> {
        let q = self.queue(queue, device)?;
        if size == 0 {
            return Ok(());
        }
        let (d, _, _) = self.active(device)?;
        let mut st = q.state.lock();
        st.pending = true;
        // SAFETY: `src` stays readable until the queue completes (caller's contract); `dst` is device memory of this device.
        let rc = unsafe { (d.cuMemcpyHtoDAsync_v2)(dst, src as *const core::ffi::c_void, size as usize, st.stream.0) };
        d.check(rc, "cuMemcpyHtoDAsync")
    }

    /// Queues a device → host copy on `queue`.
    ///
    /// # Safety
    /// `[dst, dst+size)` stays writable (and unread) until the queue is synchronised.
    pub(super) unsafe fn retrieve_async_impl(&self, device: usize, dst: usize, src: u64, size: u64, queue: QueueHandle) -> Result<()> {
        let q = self.queue(queue, device)?;
        if size == 0 {
            return Ok(());
        }
        let (d, _, _) = self.active(device)?;
        let mut st = q.state.lock();
        st.pending = true;
        // SAFETY: `dst` stays writable until the queue completes (caller's contract).
        let rc = unsafe { (d.cuMemcpyDtoHAsync_v2)(dst as *mut core::ffi::c_void, src, size as usize, st.stream.0) };
        d.check(rc, "cuMemcpyDtoHAsync")
    }

    pub(super) fn event_record_impl(&self, device: usize, queue: QueueHandle) -> Result<EventHandle> {
        let q = self.queue(queue, device)?;
        let (d, _, ctx) = self.active(device)?;
        let (Some(create), Some(record)) = (d.cuEventCreate, d.cuEventRecord) else {
            return Err(OffloadError::PluginUnavailable { plugin: "cuda", reason: "the driver has no cuEventCreate/cuEventRecord".into() });
        };
        let pooled = ctx.events.lock().pop();
        let event = match pooled {
            Some(e) => e,
            None => {
                let mut e: driver::CUevent = core::ptr::null_mut();
                // SAFETY: valid out-pointer and flags; the context is current.
                d.check(unsafe { create(&mut e, driver::CU_EVENT_DISABLE_TIMING) }, "cuEventCreate")?;
                Handle(e)
            }
        };
        let rc = {
            let st = q.state.lock();
            // SAFETY: a live event and stream of the current context.
            unsafe { record(event.0, st.stream.0) }
        };
        if rc != CUresult::SUCCESS {
            ctx.events.lock().push(event);
            return Err(d.error(rc, "cuEventRecord"));
        }
        match self.events.lock().insert(EventState { device, event }) {
            Some(h) => Ok(h),
            None => {
                ctx.events.lock().push(event);
                Err(OffloadError::Internal("cuda: too many events".into()))
            }
        }
    }

    pub(super) fn event_wait_impl(&self, device: usize, event: EventHandle, queue: QueueHandle) -> Result<()> {
        let ev = self.event(event)?;
        let q = self.queue(queue, device)?;
        let (d, _, _) = self.active(device)?;
        let wait = d
            .cuStreamWaitEvent
            .ok_or_else(|| OffloadError::PluginUnavailable { plugin: "cuda", reason: "the driver has no cuStreamWaitEvent".into() })?;
        let mut st = q.state.lock();
        st.pending = true;
        // SAFETY: a live stream of the current context and a live event (events of other devices' contexts are accepted by the driver).
        d.check(unsafe { wait(st.stream.0, ev.event.0, 0) }, "cuStreamWaitEvent")
    }

    pub(super) fn event_release_impl(&self, device: usize, event: EventHandle) {
        let Some(ev) = self.events.lock().remove(event) else {
            crate::debug!("cuda: releasing unknown event handle {event:#x}: ignored");
            return;
        };
        if ev.device != device {
            crate::debug!("cuda: event {event:#x} of device {} released as device {device}", ev.device);
        }
        // Waits already queued keep the state they captured; the event can
        // be recorded again by its next user.
        match self.device(ev.device).ok().and_then(|(_, dev)| dev.ctx.get()).and_then(|c| c.as_ref().ok()) {
            Some(ctx) => ctx.events.lock().push(ev.event),
            None => crate::debug!("cuda: event {event:#x}: device {} has no context", ev.device),
        }
    }

    /// Test hook: live queues and events (handles not yet released).
    pub fn live_async_handles(&self) -> (usize, usize) {
        (self.queues.lock().len(), self.events.lock().len())
    }
}

#[cfg(test)]
mod tests {
    use super::Slab;

    #[test]
    fn keys_are_checked() {
        let mut s: Slab<&str> = Slab::default();
        let a = s.insert("a").unwrap();
        let b = s.insert("b").unwrap();
        assert_ne!(a, 0);
        assert_eq!((s.get(a), s.get(b)), (Some(&"a"), Some(&"b")));
        assert_eq!(s.get(0), None, "0 is never a key");
        assert_eq!(s.get(a ^ (1 << 40)), None, "a key with another generation");
        assert_eq!(s.get(1000), None);
        assert_eq!(s.remove(a), Some("a"));
        assert_eq!(s.get(a), None, "a removed key");
        assert_eq!(s.remove(a), None, "removed twice");
        let c = s.insert("c").unwrap();
        assert_ne!(c, a, "the slot is reused with a new generation");
        assert_eq!(c & 0xffff_ffff, a & 0xffff_ffff);
        assert_eq!(s.get(a), None);
        assert_eq!(s.get(c), Some(&"c"));
        assert_eq!(s.len(), 2);
    }
}
