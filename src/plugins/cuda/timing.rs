//! Device timing for `LIBOMPTARGET_PROFILE`: CUDA events with
//! timing recorded on a queue's stream before and after an operation, read
//! with `cuEventElapsedTime` once the runtime saw the queue complete.
//!
//! The events' times are mapped onto the host's `CLOCK_MONOTONIC` through a
//! reference event per context ([`Base`]): the first one is recorded on the
//! context's NULL stream and waited for (`cuEventSynchronize`) at the first
//! timed operation of the context, the host clock read as it completes; this
//! is the one wait profiling adds, once per context (the plugin's streams are
//! non-blocking, so the NULL stream holds none of the program's work). An
//! operation's start is `base + elapsed(base, start)`, its end `start +
//! elapsed(start, end)`. Because `cuEventElapsedTime` gives single-precision
//! milliseconds, a timed operation read more than a second after its base
//! hands its end event over as the next base (it has completed, and every
//! operation timed from then on is recorded after it, so elapsed times stay
//! positive and sub-microsecond); operations timed earlier keep the base
//! they started with.
//!
//! Timing events are created with timing enabled (the pooled dependency
//! events have `CU_EVENT_DISABLE_TIMING`) and pooled per context.

use super::driver::CUresult;
use super::{CudaPlugin, DeviceCtx, Handle};
use crate::base::clock::monotonic_ns;
use crate::plugins::QueueHandle;

/// One timed span: events recorded before and after its operations.
pub(super) struct Timing {
    device: usize,
    start: Handle,
    end: Option<Handle>,
    /// The [`Base`] its times are measured from.
    base: u64,
}

/// A reference point: an event that completed at host time `ns`.
struct Base {
    id: u64,
    event: Handle,
    ns: u64,
    /// Timings measured from it that were not read yet.
    users: u32,
}

/// A context's timing events and reference points (made at first use).
#[derive(Default)]
pub(super) struct ProfileClock {
    idle: Vec<Handle>,
    /// The last one is current (new timings use it); older ones stay while used.
    bases: Vec<Base>,
    next_id: u64,
}

/// A base older than this (ms) is replaced by the next timing read.
const REBASE_MS: f32 = 1000.0;

fn ms_to_ns(ms: f32) -> u64 {
    (f64::from(ms.max(0.0)) * 1e6) as u64
}

impl CudaPlugin {
    /// An idle timing event of the context, created when none is left.
    fn timing_event(d: &super::CudaDriver, pc: &mut ProfileClock) -> Option<Handle> {
        if let Some(e) = pc.idle.pop() {
            return Some(e);
        }
        let create = d.cuEventCreate?;
        let mut e: super::CUevent = core::ptr::null_mut();
        // SAFETY: valid out-pointer; flags 0: an event with timing; the context is current.
        (unsafe { create(&mut e, 0) } == CUresult::SUCCESS).then_some(Handle(e))
    }

    /// The first reference point of the context: an event recorded on the
    /// NULL stream and waited for (the one wait profiling adds).
    fn first_base(d: &super::CudaDriver, pc: &mut ProfileClock) -> Option<()> {
        let (record, sync) = (d.cuEventRecord?, d.cuEventSynchronize?);
        let e = Self::timing_event(d, pc)?;
        // SAFETY: a live event of the current context, on its NULL stream; then waited for.
        let ok = unsafe { record(e.0, core::ptr::null_mut()) == CUresult::SUCCESS && sync(e.0) == CUresult::SUCCESS };
        if !ok {
            pc.idle.push(e);
            return None;
        }
        let ns = monotonic_ns();
        pc.next_id += 1;
        pc.bases.push(Base { id: pc.next_id, event: e, ns, users: 0 });
        Some(())
    }

    /// Records a timing event on the queue's stream.
    fn record_on_queue(&self, device: usize, queue: QueueHandle, ctx: &DeviceCtx, d: &super::CudaDriver) -> Option<Handle> {
        let record = d.cuEventRecord?;
        let q = self.queue(queue, device).ok()?;
        let e = Self::timing_event(d, ctx.profile.lock().get_or_insert_with(ProfileClock::default))?;
        let mut st = q.state.lock();
        // The event is work of the stream: a synchronize or query covers it.
        st.pending = true;
        // SAFETY: a live event and stream of the current context.
        if unsafe { record(e.0, st.stream.0) } != CUresult::SUCCESS {
            drop(st);
            ctx.profile.lock().get_or_insert_with(ProfileClock::default).idle.push(e);
            return None;
        }
        Some(e)
    }

    pub(super) fn timing_start_impl(&self, device: usize, queue: QueueHandle) -> Option<u64> {
        let (d, _, ctx) = self.active(device).ok()?;
        d.cuEventElapsedTime?;
        let base = {
            let mut g = ctx.profile.lock();
            let pc = g.get_or_insert_with(ProfileClock::default);
            if pc.bases.is_empty() {
                Self::first_base(d, pc)?;
            }
            let b = pc.bases.last_mut()?;
            b.users += 1;
            b.id
        };
        let Some(start) = self.record_on_queue(device, queue, ctx, d) else {
            Self::unuse_base(ctx, base);
            return None;
        };
        let token = self.timings.lock().insert(Timing { device, start, end: None, base });
        if token.is_none() {
            let mut g = ctx.profile.lock();
            g.get_or_insert_with(ProfileClock::default).idle.push(start);
            drop(g);
            Self::unuse_base(ctx, base);
        }
        token
    }

    pub(super) fn timing_stop_impl(&self, device: usize, queue: QueueHandle, token: u64) {
        let Ok((d, _, ctx)) = self.active(device) else { return };
        let Some(end) = self.record_on_queue(device, queue, ctx, d) else { return };
        match self.timings.lock().get_mut(token) {
            Some(t) if t.end.is_none() => t.end = Some(end),
            _ => ctx.profile.lock().get_or_insert_with(ProfileClock::default).idle.push(end),
        }
    }

    pub(super) fn timing_read_impl(&self, device: usize, token: u64) -> Option<(u64, u64)> {
        let t = self.timings.lock().remove(token)?;
        if t.device != device {
            crate::debug!("cuda: timing {token:#x} of device {} read as device {device}", t.device);
        }
        let (d, _, ctx) = self.active(t.device).ok()?;
        let elapsed = d.cuEventElapsedTime?;
        let mut g = ctx.profile.lock();
        let pc = g.get_or_insert_with(ProfileClock::default);
        let (base_event, base_ns) = pc.bases.iter().find(|b| b.id == t.base).map(|b| (b.event, b.ns))?;
        let mut rebase = false;
        let times = t.end.and_then(|end| {
            let (mut from_base, mut span) = (0f32, 0f32);
            // SAFETY: events of this context; both were recorded, and the queue completed (else NOT_READY is returned).
            let ok = unsafe {
                elapsed(&mut from_base, base_event.0, t.start.0) == CUresult::SUCCESS
                    && elapsed(&mut span, t.start.0, end.0) == CUresult::SUCCESS
            };
            if !ok {
                return None;
            }
            let start = base_ns + ms_to_ns(from_base);
            rebase = from_base > REBASE_MS && pc.bases.last().is_some_and(|b| b.id == t.base);
            Some((start, start + ms_to_ns(span)))
        });
        pc.idle.push(t.start);
        if let Some(end) = t.end {
            match times {
                // The completed end event becomes the current base.
                Some((_, end_ns)) if rebase => {
                    pc.next_id += 1;
                    let id = pc.next_id;
                    pc.bases.push(Base { id, event: end, ns: end_ns, users: 0 });
                }
                _ => pc.idle.push(end),
            }
        }
        drop(g);
        Self::unuse_base(ctx, t.base);
        times
    }

    /// One user of base `id` less; bases no longer used (but the current) go back to the idle events.
    fn unuse_base(ctx: &DeviceCtx, id: u64) {
        let mut g = ctx.profile.lock();
        let pc = g.get_or_insert_with(ProfileClock::default);
        if let Some(b) = pc.bases.iter_mut().find(|b| b.id == id) {
            b.users = b.users.saturating_sub(1);
        }
        let current = pc.bases.last().map(|b| b.id);
        let mut freed = Vec::new();
        pc.bases.retain(|b| {
            let keep = b.users > 0 || Some(b.id) == current;
            if !keep {
                freed.push(b.event);
            }
            keep
        });
        pc.idle.extend(freed);
    }
}
