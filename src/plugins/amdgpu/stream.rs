//! Asynchronous work on HSA queues: the plugin's streams and events
//! (abi-reference §10.4; LLVM's `AMDGPUStreamTy`, `AMDGPUEventTy`).
//!
//! A stream is an ordered chain of operations. Each operation has a
//! completion signal and starts only once the previous operation's signal
//! (and the signals of events the stream was told to wait for) reached 0:
//!
//! - copies are `hsa_amd_memory_async_copy` with those signals as
//!   dependencies;
//! - kernels are AQL dispatch packets on the stream's HSA queue, behind a
//!   barrier-AND packet on the pending signals (packets in one queue launch
//!   in order but may overlap, so the barrier is what orders them);
//! - host steps (the memcpy between user memory and a staging buffer) run
//!   in an `hsa_amd_signal_async_handler` callback on the pending signal and
//!   then decrement their own signal; with nothing pending they run at once.
//!
//! What the work needs (kernarg buffers, launch-environment allocations,
//! staging buffers, host ranges locked with `hsa_amd_memory_lock`) is freed
//! by the clean-up run once the last signal reached 0: by
//! `queue_synchronize`, or by the `queue_query` that finds it completed. A
//! queue error or GPU memory fault ends the wait with an error naming the
//! first operation that did not complete (`kernel 'saxpy'`); the stream then
//! keeps that error, and its buffers and pending signals are abandoned (the
//! device may still reference them).
//!
//! Signals are reference-counted ([`Sig`]): an event is the signal of the
//! last operation queued when it was recorded (or of a barrier joining that
//! operation and the events the stream waits for), so it stays valid, and
//! out of the idle pool, until both the event and every stream waiting for
//! it have let go of it.
//!
//! Handles are `u64`s: tag (bits 56-63, `0xA5` queues, `0xE5` events),
//! device (48-55), generation (32-47, bumped on every release, so a stale
//! handle is refused) and slot index (0-31). Streams are pooled per device
//! and spread over the device's HSA queues by slot index.

use super::hsa::{BarrierAndPacket, HsaSignalValue, SignalHandler};
use super::*;

/// A pooled signal shared by the operations, events and streams using it;
/// back to the idle pool when the last user lets go of it.
pub(super) struct SignalRef {
    signal: HsaSignal,
    pool: Arc<Mutex<Vec<HsaSignal>>>,
    /// Set for signals of failed work: the device may still hold them.
    leak: AtomicBool,
}

impl Drop for SignalRef {
    fn drop(&mut self) {
        if !self.leak.load(Ordering::Relaxed) {
            self.pool.lock().push(self.signal);
        }
    }
}

type Sig = Arc<SignalRef>;

fn pending(hsa: &HsaRuntime, s: &SignalRef) -> bool {
    // SAFETY: a live signal (its reference is held).
    unsafe { (hsa.hsa_signal_load_scacquire)(s.signal) != 0 }
}

/// What an operation is, for error messages.
enum OpKind {
    Kernel(&'static AmdKernel),
    ToDevice(u64),
    FromDevice(u64),
    HostCopy(u64),
    Join,
    /// The fence behind what foreign code queued on the stream's interop queue.
    Foreign,
}

impl OpKind {
    fn describe(&self) -> String {
        match self {
            OpKind::Kernel(k) => format!("kernel '{}'", k.name),
            OpKind::ToDevice(n) => format!("a copy of {n} bytes to the device"),
            OpKind::FromDevice(n) => format!("a copy of {n} bytes from the device"),
            OpKind::HostCopy(n) => format!("a host copy of {n} bytes"),
            OpKind::Join => "a barrier".into(),
            OpKind::Foreign => "work queued on the interop (targetsync) queue".into(),
        }
    }
}

/// What to free once the stream's work has completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cleanup {
    Kernarg(u64),
    Staging(u64),
    DeviceAlloc(u64),
    Unlock(usize),
}

#[derive(Default)]
struct StreamState {
    /// Operations since the last completion, in order.
    ops: Vec<(Sig, OpKind)>,
    /// Event signals the next operation waits for.
    waits: Vec<Sig>,
    /// Event signals earlier operations waited for (held until completion).
    keep: Vec<Sig>,
    cleanup: Vec<Cleanup>,
    /// The failure that ended the queued work.
    failed: Option<OffloadError>,
    /// The HSA queue of the stream's own handed to foreign code (an interop
    /// object's `targetsync`), created by the first `queue_native` and kept
    /// with the pooled stream.
    foreign: Option<&'static DeviceQueue>,
    /// Foreign code may have queued packets there since the last fence.
    foreign_dirty: bool,
    /// LIBOMPTARGET_PROFILE: timed spans of `ops` (read at completion).
    timed: Vec<Timed>,
}

/// A span of a stream's operations timed for the profile: `ops[first..last]`.
struct Timed {
    token: u64,
    first: usize,
    /// `None` until the span's operations were queued.
    last: Option<usize>,
}

impl StreamState {
    fn push_op(&mut self, s: Sig, kind: OpKind) {
        self.ops.push((s, kind));
        // The new operation waited for them: later ones follow it.
        self.keep.append(&mut self.waits);
    }
}

pub(super) struct Stream {
    index: u32,
    generation: AtomicU32,
    in_use: AtomicBool,
    state: Mutex<StreamState>,
}

#[derive(Default)]
struct EventSlot {
    generation: u32,
    live: bool,
    /// `None`: everything recorded had completed already.
    signal: Option<Sig>,
}

#[derive(Default)]
struct Events {
    slots: Vec<EventSlot>,
    free: Vec<u32>,
}

/// The streams and events of one device.
#[derive(Default)]
pub(super) struct StreamPool {
    streams: RwLock<Vec<&'static Stream>>,
    free: Mutex<Vec<u32>>,
    events: Mutex<Events>,
}

const QUEUE_TAG: u64 = 0xA5;
const EVENT_TAG: u64 = 0xE5;

fn encode(tag: u64, device: usize, generation: u32, index: u32) -> u64 {
    (tag << 56) | ((device as u64 & 0xff) << 48) | ((u64::from(generation) & 0xffff) << 32) | u64::from(index)
}

/// (device byte, generation, index) of a handle with this tag.
fn decode(h: u64, tag: u64) -> Option<(usize, u32, u32)> {
    (h >> 56 == tag).then_some((((h >> 48) & 0xff) as usize, ((h >> 32) & 0xffff) as u32, h as u32))
}

fn bad_handle(what: &str, h: u64, device: usize) -> OffloadError {
    OffloadError::InvalidArgument(format!("amdgpu: {h:#x} is not a live {what} handle of device {device}"))
}

impl StreamPool {
    fn get(&self, device: usize, h: u64) -> Result<&'static Stream> {
        let (d, generation, index) = decode(h, QUEUE_TAG).ok_or_else(|| bad_handle("queue", h, device))?;
        let s = self.streams.read().get(index as usize).copied().ok_or_else(|| bad_handle("queue", h, device))?;
        if d != device & 0xff || !s.in_use.load(Ordering::Acquire) || s.generation.load(Ordering::Acquire) & 0xffff != generation {
            return Err(bad_handle("queue", h, device));
        }
        Ok(s)
    }
}

/// Runs in the HSA runtime's signal-handler thread: one host memcpy, then
/// its completion signal. Never unwinds into the runtime.
unsafe extern "C" fn host_step(_value: HsaSignalValue, arg: *mut c_void) -> bool {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `arg` is the Box<HostStep> leaked by `Ctx::host_step` for this one call.
        let step = unsafe { Box::from_raw(arg as *mut HostStep) };
        // Both ranges stay valid until the stream completes, which needs
        // `done` (decremented below) first; the stream's order makes this the
        // only access to them now.
        // SAFETY: as just said.
        unsafe { core::ptr::copy_nonoverlapping(step.src as *const u8, step.dst as *mut u8, step.size) };
        // SAFETY: a live signal held by the stream until it completes.
        unsafe { (step.hsa.hsa_signal_subtract_screlease)(step.done, 1) };
    });
    false
}

struct HostStep {
    hsa: &'static HsaRuntime,
    dst: usize,
    src: usize,
    size: usize,
    done: HsaSignal,
}
const _: SignalHandler = host_step;

/// One stream of one device, resolved from a handle.
struct Ctx<'a> {
    plugin: &'a AmdgpuPlugin,
    st: &'a State,
    dev: &'a DeviceInfo,
    device: usize,
    stream: &'static Stream,
}

impl Ctx<'_> {
    fn new_sig(&self) -> Result<Sig> {
        let signal = AmdgpuPlugin::take_signal(self.st, self.dev)?;
        Ok(Arc::new(SignalRef { signal, pool: self.dev.signals.clone(), leak: AtomicBool::new(false) }))
    }

    /// The signals the next operation must wait for: the last operation's
    /// and the events', those not reached 0 yet.
    fn deps(&self, state: &StreamState) -> Vec<Sig> {
        let hsa = self.st.hsa;
        state.ops.last().map(|o| &o.0).into_iter().chain(&state.waits).filter(|s| pending(hsa, s)).cloned().collect()
    }

    /// One barrier-AND packet waiting for `deps` (at most 5) that completes
    /// `completion`.
    fn barrier(deps: &[Sig], completion: HsaSignal) -> [u8; 64] {
        let header = (consts::PACKET_TYPE_BARRIER_AND << consts::PACKET_HEADER_TYPE)
            | (consts::FENCE_SCOPE_SYSTEM << consts::PACKET_HEADER_ACQUIRE_FENCE_SCOPE)
            | (consts::FENCE_SCOPE_SYSTEM << consts::PACKET_HEADER_RELEASE_FENCE_SCOPE);
        let mut p = BarrierAndPacket { header, completion_signal: completion, ..Default::default() };
        for (slot, s) in p.dep_signal.iter_mut().zip(deps) {
            *slot = s.signal;
        }
        // SAFETY: a BarrierAndPacket is 64 plain bytes.
        unsafe { *(&p as *const BarrierAndPacket as *const [u8; 64]) }
    }

    /// Barrier-AND packets waiting for `deps` (5 per packet); the last one
    /// completes `completion`.
    fn barriers(deps: &[Sig], completion: HsaSignal) -> Vec<[u8; 64]> {
        let chunks: Vec<&[Sig]> = deps.chunks(5).collect();
        let n = chunks.len();
        chunks.into_iter().enumerate().map(|(i, c)| Self::barrier(c, if i + 1 == n { completion } else { HsaSignal::default() })).collect()
    }

    /// Orders what foreign code queued on the interop queue before the
    /// stream's next operation: a barrier-AND packet with the barrier bit
    /// (it starts only after every packet before it in that queue
    /// completed), also waiting for the stream's pending work, becomes the
    /// stream's last operation.
    fn fence_foreign(&self, state: &mut StreamState) -> Result<()> {
        let Some(q) = state.foreign.filter(|_| state.foreign_dirty) else { return Ok(()) };
        let deps = self.deps(state);
        let s = self.new_sig()?;
        let mut packets = Self::barriers(&deps, s.signal);
        if packets.is_empty() {
            // Nothing of the stream pending: one packet without dependencies.
            packets.push(Self::barrier(&[], s.signal));
        }
        for p in &mut packets {
            let header = u16::from_le_bytes([p[0], p[1]]) | (1 << consts::PACKET_HEADER_BARRIER);
            p[..2].copy_from_slice(&header.to_le_bytes());
        }
        AmdgpuPlugin::publish(self.st, q, &packets);
        state.foreign_dirty = false;
        state.push_op(s, OpKind::Foreign);
        Ok(())
    }

    fn queue(&self) -> Result<&DeviceQueue> {
        AmdgpuPlugin::queue_at(self.st, self.device, self.dev, self.stream.index as usize)
    }

    /// One signal that completes after everything the next operation must
    /// wait for (`None`: nothing pending). Joins several with a barrier.
    fn join(&self, state: &mut StreamState) -> Result<Option<Sig>> {
        let deps = self.deps(state);
        if deps.len() <= 1 {
            return Ok(deps.into_iter().next());
        }
        let s = self.new_sig()?;
        AmdgpuPlugin::publish(self.st, self.queue()?, &Self::barriers(&deps, s.signal));
        state.push_op(s.clone(), OpKind::Join);
        Ok(Some(s))
    }

    /// Queues one `hsa_amd_memory_async_copy` after the pending work.
    fn copy(&self, state: &mut StreamState, dst: u64, src: u64, size: u64, kind: OpKind) -> Result<()> {
        let deps: Vec<HsaSignal> = self.deps(state).iter().map(|s| s.signal).collect();
        let s = self.new_sig()?;
        let hsa = self.st.hsa;
        let agent = self.dev.agent;
        // SAFETY: ranges valid until the stream completes (caller); `deps` are signals the stream holds.
        let rc = unsafe {
            (hsa.hsa_amd_memory_async_copy)(
                dst as usize as *mut c_void,
                agent,
                src as usize as *const c_void,
                agent,
                size as usize,
                deps.len() as u32,
                if deps.is_empty() { core::ptr::null() } else { deps.as_ptr() },
                s.signal,
            )
        };
        hsa.check(rc, "hsa_amd_memory_async_copy")?;
        state.push_op(s, kind);
        Ok(())
    }

    /// Queues a host memcpy after the pending work (at once when nothing is
    /// pending or `now`).
    ///
    /// # Safety
    /// Both ranges must stay valid until the stream completes.
    unsafe fn host_step(&self, state: &mut StreamState, dst: usize, src: usize, size: usize, now: bool) -> Result<()> {
        let dep = if now { None } else { self.join(state)? };
        let Some(dep) = dep else {
            // SAFETY: valid ranges (caller's contract) that no queued work uses now.
            unsafe { core::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, size) };
            return Ok(());
        };
        let out = self.new_sig()?;
        let step = Box::into_raw(Box::new(HostStep { hsa: self.st.hsa, dst, src, size, done: out.signal }));
        // SAFETY: `dep` is a signal the stream holds; the handler owns `step` when it runs (once).
        let rc = unsafe { (self.st.hsa.hsa_amd_signal_async_handler)(dep.signal, consts::SIGNAL_CONDITION_EQ, 0, host_step, step.cast()) };
        if rc != HsaStatus::SUCCESS {
            // SAFETY: the handler was not registered, so `step` is still ours.
            drop(unsafe { Box::from_raw(step) });
            return Err(self.st.hsa.error(rc, "hsa_amd_signal_async_handler"));
        }
        state.push_op(out, OpKind::HostCopy(size as u64));
        Ok(())
    }

    /// Queues a transfer between user memory `host` and device memory.
    ///
    /// # Safety
    /// `[host, host+size)` must stay valid (and, for a retrieve, unread by
    /// the host) until the stream completes.
    unsafe fn transfer(&self, state: &mut StreamState, device_ptr: u64, host: usize, size: u64, to_device: bool) -> Result<()> {
        let st = self.st;
        let kind = |n| if to_device { OpKind::ToDevice(n) } else { OpKind::FromDevice(n) };
        let dst_src = |h: u64| if to_device { (device_ptr, h) } else { (h, device_ptr) };
        if AmdgpuPlugin::pinned_range(st, host as u64, size) {
            let (d, s) = dst_src(host as u64);
            return self.copy(state, d, s, size, kind(size));
        }
        if size >= config().max_async_copy_bytes
            // SAFETY: the range stays valid until the stream completes (caller's contract).
            && let Some((agent_ptr, key)) = unsafe { AmdgpuPlugin::lock_host(st, host, size as usize)? }
        {
            let (d, s) = dst_src(agent_ptr);
            if let Err(e) = self.copy(state, d, s, size, kind(size)) {
                let _ = AmdgpuPlugin::unlock_host(st, key);
                return Err(e);
            }
            state.cleanup.push(Cleanup::Unlock(key));
            return Ok(());
        }
        let hp = AmdgpuPlugin::host(st)?;
        let staging = st.staging_cache.alloc(size, &PoolAlloc { hsa: st.hsa, pool: hp.fine.0, agents: &hp.fine.1 })?;
        state.cleanup.push(Cleanup::Staging(staging));
        if to_device {
            // SAFETY: `host` (caller's contract) and `staging` (freed at completion) stay valid.
            unsafe { self.host_step(state, staging as usize, host, size as usize, false)? };
            self.copy(state, device_ptr, staging, size, kind(size))
        } else {
            self.copy(state, staging, device_ptr, size, kind(size))?;
            // SAFETY: as above.
            unsafe { self.host_step(state, host, staging as usize, size as usize, false) }
        }
    }

    /// The error that stops queued work, if the device reported one.
    fn device_error(&self, state: &StreamState) -> Option<OffloadError> {
        let st = self.st;
        let what = || state.ops.iter().find(|o| pending(st.hsa, &o.0)).map(|o| o.1.describe()).unwrap_or_else(|| "queued work".into());
        if st.faults.seen.load(Ordering::Acquire) != 0 {
            return Some(OffloadError::Driver {
                plugin: "amdgpu",
                call: "a GPU operation",
                message: format!(
                    "memory access fault by GPU (agent {:#x}) at virtual address {:#x} while running {}. Reasons: {}",
                    st.faults.agent.load(Ordering::Relaxed),
                    st.faults.address.load(Ordering::Relaxed),
                    what(),
                    fault_reasons(st.faults.reasons.load(Ordering::Relaxed))
                ),
            });
        }
        let mut status = AmdgpuPlugin::queue_error_status(self.dev);
        if status == 0
            && let Some(q) = state.foreign
        {
            status = q.errors.status.load(Ordering::Acquire);
        }
        (status != 0).then(|| OffloadError::Driver {
            plugin: "amdgpu",
            call: "the HSA queue",
            message: format!("received error while running {}: {}", what(), st.hsa.describe(HsaStatus(status))),
        })
    }

    /// Records the failure; the work's signals and buffers are abandoned.
    fn fail(&self, state: &mut StreamState, e: OffloadError) -> OffloadError {
        crate::debug!("amdgpu: device {}: stream {} failed: {e}", self.device, self.stream.index);
        for (s, _) in &state.ops {
            if pending(self.st.hsa, s) {
                s.leak.store(true, Ordering::Relaxed);
            }
        }
        state.cleanup.clear();
        state.timed.clear();
        state.failed = Some(e.clone());
        e
    }

    /// Whether everything queued (and every event waited for) completed.
    fn done(&self, state: &StreamState) -> bool {
        let hsa = self.st.hsa;
        state.ops.last().map(|o| &o.0).into_iter().chain(&state.waits).all(|s| !pending(hsa, s))
    }

    /// The clean-up after completion: frees what the work needed, returns its signals.
    fn complete(&self, state: &mut StreamState) -> Result<()> {
        let (st, p) = (self.st, self.plugin);
        let mut first = Ok(());
        for c in state.cleanup.drain(..) {
            let r = match c {
                Cleanup::Kernarg(b) => AmdgpuPlugin::free_kernarg(st, b),
                Cleanup::Staging(b) => AmdgpuPlugin::host(st)
                    .and_then(|hp| st.staging_cache.free(b, &PoolAlloc { hsa: st.hsa, pool: hp.fine.0, agents: &hp.fine.1 })),
                Cleanup::DeviceAlloc(b) => p.free(self.device, b, AllocKind::Default),
                Cleanup::Unlock(key) => AmdgpuPlugin::unlock_host(st, key),
            };
            if first.is_ok() {
                first = r;
            }
        }
        self.capture_timings(state);
        state.ops.clear();
        state.waits.clear();
        state.keep.clear();
        first
    }

    /// LIBOMPTARGET_PROFILE: the device times of the completed timed spans,
    /// read from their operations' completion signals before the signals go
    /// back to the pool, for `timing_read`.
    fn capture_timings(&self, state: &mut StreamState) {
        if state.timed.is_empty() {
            return;
        }
        for t in std::mem::take(&mut state.timed) {
            let Some(last) = t.last else { continue };
            let ops = state.ops.get(t.first..last.min(state.ops.len())).unwrap_or(&[]);
            if let Some(span) = self.plugin.op_span(self.st, self.dev, ops) {
                self.plugin.timings.lock().insert(t.token, span);
            }
        }
    }

    /// Waits for everything queued, then cleans up.
    fn synchronize(&self, state: &mut StreamState) -> Result<()> {
        if let Some(e) = &state.failed {
            return Err(e.clone());
        }
        self.fence_foreign(state)?;
        let targets: Vec<HsaSignal> = state.ops.last().map(|o| &o.0).into_iter().chain(&state.waits).map(|s| s.signal).collect();
        for signal in targets {
            loop {
                // SAFETY: a live signal held by the stream.
                let v = unsafe {
                    (self.st.hsa.hsa_signal_wait_scacquire)(
                        signal,
                        consts::SIGNAL_CONDITION_EQ,
                        0,
                        WAIT_SLICE_HINT,
                        consts::WAIT_STATE_BLOCKED,
                    )
                };
                if v == 0 {
                    break;
                }
                if let Some(e) = self.device_error(state) {
                    return Err(self.fail(state, e));
                }
                std::hint::spin_loop();
            }
        }
        self.complete(state)
    }
}

impl AmdgpuPlugin {
    fn ctx(&self, device: usize, queue: QueueHandle) -> Result<Ctx<'_>> {
        let (st, dev) = self.device(device)?;
        let stream = dev.streams.get(device, queue)?;
        Ok(Ctx { plugin: self, st, dev, device, stream })
    }

    pub(super) fn stream_acquire(&self, device: usize) -> Result<QueueHandle> {
        let (_, dev) = self.device(device)?;
        let pool = &dev.streams;
        let reused = pool.free.lock().pop();
        let stream = match reused {
            Some(i) => pool.streams.read()[i as usize],
            None => {
                let mut v = pool.streams.write();
                let index = u32::try_from(v.len()).map_err(|_| OffloadError::Internal("amdgpu: too many streams".into()))?;
                let s: &'static Stream = Box::leak(Box::new(Stream {
                    index,
                    generation: AtomicU32::new(0),
                    in_use: AtomicBool::new(false),
                    state: Mutex::new(StreamState::default()),
                }));
                v.push(s);
                crate::debug!("amdgpu: device {device}: stream {index} created (HSA queue {})", index as usize % dev.queues.len());
                s
            }
        };
        stream.in_use.store(true, Ordering::Release);
        Ok(encode(QUEUE_TAG, device, stream.generation.load(Ordering::Acquire), stream.index))
    }

    /// The stream's interop queue (`hsa_queue_t *`), created on first use;
    /// from now on the stream's next synchronisation or query fences what
    /// foreign code queued there.
    pub(super) fn stream_native(&self, device: usize, queue: QueueHandle) -> Result<usize> {
        let c = self.ctx(device, queue)?;
        let mut state = c.stream.state.lock();
        let q = match state.foreign {
            Some(q) => q,
            None => {
                let what = format!("interop queue of stream {}", c.stream.index);
                let q: &'static DeviceQueue = Box::leak(Box::new(AmdgpuPlugin::create_queue(c.st, device, c.dev, &what)?));
                state.foreign = Some(q);
                q
            }
        };
        state.foreign_dirty = true;
        Ok(q.queue as usize)
    }

    pub(super) fn stream_synchronize(&self, device: usize, queue: QueueHandle) -> Result<()> {
        let c = self.ctx(device, queue)?;
        let mut state = c.stream.state.lock();
        c.synchronize(&mut state)
    }

    pub(super) fn stream_query(&self, device: usize, queue: QueueHandle) -> Result<bool> {
        let c = self.ctx(device, queue)?;
        let mut state = c.stream.state.lock();
        if let Some(e) = &state.failed {
            return Err(e.clone());
        }
        c.fence_foreign(&mut state)?;
        if c.done(&state) {
            return c.complete(&mut state).map(|_| true);
        }
        match c.device_error(&state) {
            Some(e) => Err(c.fail(&mut state, e)),
            None => Ok(false),
        }
    }

    pub(super) fn stream_release(&self, device: usize, queue: QueueHandle) {
        let c = match self.ctx(device, queue) {
            Ok(c) => c,
            Err(e) => {
                crate::debug!("amdgpu: queue_release: {e}");
                return;
            }
        };
        {
            let mut state = c.stream.state.lock();
            if state.failed.is_none() && (!state.ops.is_empty() || state.foreign_dirty) {
                // Released with work in flight: finish it so the pooled stream starts empty.
                if let Err(e) = c.synchronize(&mut state) {
                    crate::debug!("amdgpu: queue_release: {e}");
                }
            }
            // After a failure the pending signals are marked leaked (see `fail`).
            // The interop queue stays with the pooled stream.
            let foreign = state.foreign;
            *state = StreamState { foreign, ..StreamState::default() };
        }
        c.stream.in_use.store(false, Ordering::Release);
        c.stream.generation.fetch_add(1, Ordering::AcqRel);
        c.dev.streams.free.lock().push(c.stream.index);
    }

    /// # Safety
    /// As [`Plugin::submit_async`] / [`Plugin::retrieve_async`].
    pub(super) unsafe fn stream_transfer(
        &self,
        device: usize,
        queue: QueueHandle,
        device_ptr: u64,
        host: usize,
        size: u64,
        to_device: bool,
    ) -> Result<()> {
        let c = self.ctx(device, queue)?;
        if size == 0 {
            return Ok(());
        }
        let mut state = c.stream.state.lock();
        if let Some(e) = &state.failed {
            return Err(e.clone());
        }
        // SAFETY: forwarded contract.
        unsafe { c.transfer(&mut state, device_ptr, host, size, to_device) }
    }

    pub(super) fn stream_launch(
        &self,
        device: usize,
        kernel: KernelHandle,
        name: &str,
        args: &[u64],
        dims: &LaunchDims,
        queue: QueueHandle,
    ) -> Result<()> {
        let p = self.prepare_launch(device, kernel, name, args, dims)?;
        let c = self.ctx(device, queue)?;
        let st = c.st;
        let mut state = c.stream.state.lock();
        if let Some(e) = &state.failed {
            return Err(e.clone());
        }
        let owned;
        let mut args = args;
        if let Some(env) = Self::launch_environment(p.k, args) {
            let buffer = self.alloc(device, env.reduction_buffer_bytes().max(1), AllocKind::Default)?;
            state.cleanup.push(Cleanup::DeviceAlloc(buffer));
            let kle_ptr = self.alloc(device, size_of::<KernelLaunchEnvironment>() as u64, AllocKind::Default)?;
            state.cleanup.push(Cleanup::DeviceAlloc(kle_ptr));
            let kle = KernelLaunchEnvironment { reduction_buffer: buffer, ..Default::default() };
            Self::kle_info(device, &kle, kle_ptr);
            let hp = Self::host(st)?;
            let staging = st.staging_cache.alloc(16, &PoolAlloc { hsa: st.hsa, pool: hp.fine.0, agents: &hp.fine.1 })?;
            state.cleanup.push(Cleanup::Staging(staging));
            // SAFETY: `kle` is copied into staging now (`now`); staging lives until completion.
            unsafe { c.host_step(&mut state, staging as usize, (&kle as *const KernelLaunchEnvironment) as usize, 16, true)? };
            c.copy(&mut state, kle_ptr, staging, 16, OpKind::ToDevice(16))?;
            let mut v = args.to_vec();
            v[0] = kle_ptr;
            owned = v;
            args = &owned;
        }
        let kernarg = Self::kernarg_buffer(st, &p, name, args)?;
        state.cleanup.push(Cleanup::Kernarg(kernarg));
        let q = c.queue()?;
        let deps = c.deps(&state);
        let s = c.new_sig()?;
        let mut packets = Ctx::barriers(&deps, HsaSignal::default());
        let dispatch = Self::dispatch_packet(&p, kernarg, s.signal);
        // SAFETY: a KernelDispatchPacket is 64 plain bytes.
        packets.push(unsafe { *(&dispatch as *const KernelDispatchPacket as *const [u8; 64]) });
        st.faults.record_launch(device, &p.k.name);
        q.errors.last_kernel.store((p.k as *const AmdKernel).cast_mut(), Ordering::Release);
        Self::publish(st, q, &packets);
        state.push_op(s, OpKind::Kernel(p.k));
        Ok(())
    }

    pub(super) fn stream_event_record(&self, device: usize, queue: QueueHandle) -> Result<EventHandle> {
        let c = self.ctx(device, queue)?;
        let signal = {
            let mut state = c.stream.state.lock();
            if let Some(e) = &state.failed {
                return Err(e.clone());
            }
            c.join(&mut state)?
        };
        let mut ev = c.dev.streams.events.lock();
        let index = match ev.free.pop() {
            Some(i) => i,
            None => {
                ev.slots.push(EventSlot::default());
                u32::try_from(ev.slots.len() - 1).map_err(|_| OffloadError::Internal("amdgpu: too many events".into()))?
            }
        };
        let slot = &mut ev.slots[index as usize];
        slot.live = true;
        slot.signal = signal;
        Ok(encode(EVENT_TAG, device, slot.generation, index))
    }

    /// The signal of a live event (`Ok(None)`: it had nothing to wait for).
    fn event_signal(&self, event: EventHandle) -> Result<Option<Sig>> {
        let (d, generation, index) = decode(event, EVENT_TAG).ok_or_else(|| bad_handle("event", event, 0))?;
        let (_, dev) = self.device(d)?;
        let ev = dev.streams.events.lock();
        match ev.slots.get(index as usize) {
            Some(s) if s.live && s.generation & 0xffff == generation => Ok(s.signal.clone()),
            _ => Err(bad_handle("event", event, d)),
        }
    }

    pub(super) fn stream_event_wait(&self, device: usize, event: EventHandle, queue: QueueHandle) -> Result<()> {
        // Events of another device are accepted: HSA signals are system-wide.
        let signal = self.event_signal(event)?;
        let c = self.ctx(device, queue)?;
        let mut state = c.stream.state.lock();
        if let Some(s) = signal.filter(|s| pending(c.st.hsa, s)) {
            state.waits.push(s);
        }
        Ok(())
    }

    pub(super) fn stream_event_release(&self, _device: usize, event: EventHandle) {
        let Some((d, generation, index)) = decode(event, EVENT_TAG) else { return };
        let Ok((_, dev)) = self.device(d) else { return };
        let mut ev = dev.streams.events.lock();
        let released = match ev.slots.get_mut(index as usize) {
            Some(s) if s.live && s.generation & 0xffff == generation => {
                s.live = false;
                s.signal = None;
                s.generation = s.generation.wrapping_add(1);
                true
            }
            _ => false,
        };
        if released {
            ev.free.push(index);
        } else {
            crate::debug!("amdgpu: event_release: {event:#x} is not a live event");
        }
    }

    /// LIBOMPTARGET_PROFILE: starts a timed span on the stream (its
    /// operations' completion signals carry HSA's profiling timestamps:
    /// dispatch times on the stream's HSA queue, async-copy times, both
    /// turned on here at the first use).
    pub(super) fn stream_timing_start(&self, device: usize, queue: QueueHandle) -> Option<u64> {
        let c = self.ctx(device, queue).ok()?;
        let hsa = c.st.hsa;
        hsa.hsa_amd_profiling_get_dispatch_time?;
        hsa.hsa_amd_profiling_get_async_copy_time?;
        self.clock_map(hsa)?;
        self.copy_timing.get_or_init(|| {
            // SAFETY: a process-wide switch of the runtime.
            hsa.hsa_amd_profiling_async_copy_enable.is_some_and(|f| unsafe { f(true) } == HsaStatus::SUCCESS)
        });
        if let (Ok(q), Some(enable)) = (c.queue(), hsa.hsa_amd_profiling_set_profiler_enabled)
            && !q.profiled.swap(true, Ordering::AcqRel)
        {
            // SAFETY: a live queue of this device.
            let rc = unsafe { enable(q.queue, 1) };
            if rc != HsaStatus::SUCCESS {
                crate::debug!("amdgpu: device {device}: hsa_amd_profiling_set_profiler_enabled: {}", hsa.describe(rc));
            }
        }
        let mut state = c.stream.state.lock();
        if state.failed.is_some() {
            return None;
        }
        let token = self.next_timing.fetch_add(1, Ordering::Relaxed) + 1;
        let first = state.ops.len();
        state.timed.push(Timed { token, first, last: None });
        Some(token)
    }

    /// Ends the timed span `token` after its operations were queued.
    pub(super) fn stream_timing_stop(&self, device: usize, queue: QueueHandle, token: u64) {
        let Ok(c) = self.ctx(device, queue) else { return };
        let mut state = c.stream.state.lock();
        let last = state.ops.len();
        if let Some(t) = state.timed.iter_mut().find(|t| t.token == token) {
            t.last = Some(last);
        }
    }

    /// The device span (start of the first, end of the last) of timed
    /// operations, on the host's `CLOCK_MONOTONIC` (ns): the kernels' dispatch
    /// times when the span has kernels (a launch environment's copy is left
    /// out), else the DMA copies' times (a staged copy's host memcpy is not
    /// device time). `None` when the runtime gave no timestamps.
    fn op_span(&self, st: &State, dev: &DeviceInfo, ops: &[(Sig, OpKind)]) -> Option<(u64, u64)> {
        let hsa = st.hsa;
        let (get_dispatch, get_copy) = (hsa.hsa_amd_profiling_get_dispatch_time?, hsa.hsa_amd_profiling_get_async_copy_time?);
        let kernels = ops.iter().any(|o| matches!(o.1, OpKind::Kernel(_)));
        let mut span: Option<(u64, u64)> = None;
        for (s, kind) in ops {
            let mut t = hsa::ProfilingTime::default();
            let rc = match kind {
                // SAFETY: a completed dispatch's signal, still held (not back in the pool); `t` is a live out-parameter.
                OpKind::Kernel(_) => unsafe { get_dispatch(dev.agent, s.signal, &mut t) },
                // SAFETY: a completed copy's signal, still held; `t` is a live out-parameter.
                OpKind::ToDevice(_) | OpKind::FromDevice(_) if !kernels => unsafe { get_copy(s.signal, &mut t) },
                _ => continue,
            };
            if rc != HsaStatus::SUCCESS || t.start == 0 || t.end < t.start {
                continue;
            }
            span = Some(span.map_or((t.start, t.end), |(a, b)| (a.min(t.start), b.max(t.end))));
        }
        let (offset, freq) = self.clock_map(hsa)?;
        let host = |ticks: u64| (i128::try_from(u128::from(ticks) * 1_000_000_000 / u128::from(freq)).ok()? + offset).try_into().ok();
        span.and_then(|(a, b)| Some((host(a)?, host(b)?)))
    }

    /// The HSA system clock against the host's `CLOCK_MONOTONIC`, read once
    /// (the host clock read on both sides of the HSA one).
    fn clock_map(&self, hsa: &HsaRuntime) -> Option<(i128, u64)> {
        *self.clock_map.get_or_init(|| {
            let f = hsa.hsa_system_get_info?;
            let (mut ticks, mut freq) = (0u64, 0u64);
            // SAFETY: the attribute fills a u64.
            let rc = unsafe { f(hi::SYSTEM_TIMESTAMP_FREQUENCY, (&mut freq as *mut u64).cast()) };
            if rc != HsaStatus::SUCCESS || freq == 0 {
                return None;
            }
            let before = crate::base::clock::monotonic_ns();
            // SAFETY: as above.
            let rc = unsafe { f(hi::SYSTEM_TIMESTAMP, (&mut ticks as *mut u64).cast()) };
            let after = crate::base::clock::monotonic_ns();
            if rc != HsaStatus::SUCCESS {
                return None;
            }
            let hsa_ns = i128::try_from(u128::from(ticks) * 1_000_000_000 / u128::from(freq)).ok()?;
            Some((i128::from(before / 2 + after / 2) - hsa_ns, freq))
        })
    }

    /// Test hook: the clean-up actions (kernarg, staging and launch buffers,
    /// locked ranges) a queue holds until its work completes.
    pub fn queue_pending_cleanups(&self, device: usize, queue: QueueHandle) -> Result<usize> {
        let c = self.ctx(device, queue)?;
        Ok(c.stream.state.lock().cleanup.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_are_checked() {
        let h = encode(QUEUE_TAG, 3, 0x1_0007, 42);
        assert_eq!(decode(h, QUEUE_TAG), Some((3, 7, 42)));
        assert_eq!(decode(h, EVENT_TAG), None, "a queue handle is not an event");
        assert_eq!(decode(0, QUEUE_TAG), None);
        let pool = StreamPool::default();
        assert!(pool.get(3, h).is_err(), "no such stream");
    }
}
