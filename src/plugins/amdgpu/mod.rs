//! The AMDGPU plugin (abi-reference §10.4): AMD GPUs through the HSA runtime
//! `libhsa-runtime64.so.1`, opened at run time (no build-time ROCm
//! dependency).
//!
//! Cost model: nothing here touches the HSA runtime until the runtime asks
//! for the number of devices, which it only does once a registered image
//! passed [`image::identify`] (pure byte inspection). `__tgt_init_all_rtls`
//! skips this plugin ([`Plugin::eager_init`] is false). A missing library, a
//! missing required symbol or a failing `hsa_init` (no `/dev/kfd`) gives zero
//! devices and one debug line.
//!
//! Per device (a GPU agent with kernel dispatch, in enumeration order): its
//! ISA target ids, the coarse-grained global memory pool behind a caching
//! allocator, up to `LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES` AQL queues created
//! on first use, a pool of signals, and the streams and events of the
//! asynchronous methods (`stream.rs`). Host-side memory (pinned `HOST`/`SHARED`
//! allocations, staging buffers and kernarg buffers) comes from the CPU
//! agents' fine-grained pools. The synchronous trait methods wait for each
//! copy's or dispatch's completion signal before returning; the
//! asynchronous ones (`*_async`, `queue_*`, `event_*`) chain their
//! operations on a stream's signals and return at once. A GPU memory fault
//! or queue error prints 22.1's report (the device's last kernel launches,
//! or the trapping kernel) and aborts, as 22.1 does; with
//! `OMPTARGET_RS_AMDGPU_ABORT_ON_GPU_ERROR=0` it instead ends the wait with an
//! error naming the kernel.
//!
//! Handles given to the runtime are indices: [`ImageHandle`] into the loaded
//! executables, [`KernelHandle`] into the resolved kernels; queue and event
//! handles are tagged and generation-checked (`stream.rs`). Images run
//! `amdgcn.device.init` after loading and `amdgcn.device.fini` in
//! [`Plugin::unload_binary`], which then destroys the executable.

pub mod hsa;
pub mod image;
pub mod kernargs;
pub mod msgpack;
mod stream;

use super::gpu::grid::{self, GridLimits, KernelGrid};
use super::gpu::kernel_env::KernelEnvironment;
use super::gpu::memory::{MemoryPool, RawAllocator};
use super::gpu::{DEVICE_ENVIRONMENT_SYMBOL, DeviceEnvironment};
use super::{AllocKind, EventHandle, ImageHandle, KernelHandle, LaunchDims, Plugin, QueueHandle};
use crate::base::config::{info, parse_bool, parse_int};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use core::ffi::c_void;
use hsa::{
    HsaAgent, HsaCodeObjectReader, HsaDim3, HsaExecutable, HsaExecutableSymbol, HsaIsa, HsaLoadedCodeObject, HsaMemoryPool, HsaQueue,
    HsaRuntime, HsaSignal, HsaStatus, KernelDispatchPacket, consts, info as hi,
};
use image::{CodeObjectMetadata, ImageSymbols, KernelMeta, TargetId};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

/// Settings read once from the environment (abi-reference §8.3, §8.4).
#[derive(Debug, Clone)]
pub struct AmdgpuConfig {
    /// `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` (8 KiB; 0 disables the pool).
    pub memory_manager_threshold: u64,
    /// `LIBOMPTARGET_SHARED_MEMORY_SIZE`: minimum dynamic LDS per team.
    pub shared_memory_size: u32,
    /// `LIBOMPTARGET_DEVICE_RTL_DEBUG`.
    pub device_rtl_debug: u32,
    /// `LIBOMPTARGET_STACK_SIZE`: private segment of kernels with a dynamic call stack.
    pub stack_size: u32,
    /// `LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT` (32).
    pub min_threads_low_trip: u32,
    /// `LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT` (true).
    pub reuse_blocks_for_high_trip: bool,
    /// `OMP_NUM_TEAMS` / `OMP_TEAMS_THREAD_LIMIT` (≤ 0: unset).
    pub omp_num_teams: i64,
    pub omp_teams_thread_limit: i64,
    /// `LIBOMPTARGET_AMDGPU_TEAMS_PER_CU` (4).
    pub teams_per_cu: u32,
    /// `LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE` (512 packets).
    pub queue_size: u32,
    /// `LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES` (4): HSA queues per device that
    /// asynchronous streams are spread over (capped by the agent's maximum).
    pub num_queues: u32,
    /// `LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES` (1 MiB): larger transfers
    /// lock the host memory instead of staging it.
    pub max_async_copy_bytes: u64,
    /// `OMPTARGET_RS_AMDGPU_ABORT_ON_GPU_ERROR` (true): a GPU memory fault or
    /// queue error prints LLVM 22.1's report and aborts the process, as 22.1
    /// does; false reports it as the error of the wait (naming the kernel).
    pub abort_on_gpu_error: bool,
}

impl AmdgpuConfig {
    fn from_env() -> Self {
        let int = |n: &str| std::env::var(n).ok().and_then(|v| parse_int(&v));
        let non_negative = |n: &str| int(n).and_then(|v| u64::try_from(v).ok());
        let u32_or = |n: &str, d: u32| non_negative(n).map(|v| u32::try_from(v).unwrap_or(u32::MAX)).unwrap_or(d);
        AmdgpuConfig {
            memory_manager_threshold: non_negative("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD")
                .unwrap_or(super::gpu::memory::DEFAULT_THRESHOLD),
            shared_memory_size: u32_or("LIBOMPTARGET_SHARED_MEMORY_SIZE", 0),
            device_rtl_debug: u32_or("LIBOMPTARGET_DEVICE_RTL_DEBUG", 0),
            stack_size: u32_or("LIBOMPTARGET_STACK_SIZE", 1024),
            min_threads_low_trip: u32_or("LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT", 32),
            reuse_blocks_for_high_trip: parse_bool(std::env::var("LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT").ok().as_deref(), true),
            omp_num_teams: int("OMP_NUM_TEAMS").unwrap_or(0),
            omp_teams_thread_limit: int("OMP_TEAMS_THREAD_LIMIT").unwrap_or(0),
            teams_per_cu: u32_or("LIBOMPTARGET_AMDGPU_TEAMS_PER_CU", 4),
            queue_size: u32_or("LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE", 512),
            num_queues: u32_or("LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES", 4).max(1),
            max_async_copy_bytes: non_negative("LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES").unwrap_or(1 << 20),
            abort_on_gpu_error: parse_bool(std::env::var("OMPTARGET_RS_AMDGPU_ABORT_ON_GPU_ERROR").ok().as_deref(), true),
        }
    }
}

static CONFIG: LazyLock<AmdgpuConfig> = LazyLock::new(AmdgpuConfig::from_env);

/// The plugin's settings, read on first use.
pub fn config() -> &'static AmdgpuConfig {
    &CONFIG
}

/// `AMDGPUGridValues`: default team size (abi-reference §7.5).
pub const AMDGPU_DEFAULT_WG_SIZE: u32 = 256;
/// Kernel run by LLVM after loading an image that defines it (§7.8).
pub const DEVICE_INIT_KERNEL: &str = "amdgcn.device.init";
/// Kernel run by LLVM before unloading an image that defines it.
pub const DEVICE_FINI_KERNEL: &str = "amdgcn.device.fini";
/// Caching threshold of the kernarg and staging buffer pools.
const HOST_BUFFER_CACHE_BYTES: u64 = 1 << 20;
/// Timeout hint of one blocked wait on a signal; between waits the plugin
/// looks for queue errors and memory faults.
const WAIT_SLICE_HINT: u64 = 100_000_000;

/// `KernelLaunchEnvironmentTy` (22.1, 16 bytes; abi-reference §7.4).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct KernelLaunchEnvironment {
    reduction_cnt: u32,
    reduction_iter_cnt: u32,
    reduction_buffer: u64,
}
const _: () = assert!(size_of::<KernelLaunchEnvironment>() == 16);

/// A queue created by the runtime, with the slot its error callback fills.
struct DeviceQueue {
    queue: *mut HsaQueue,
    /// Serialises acquiring and publishing packets (as LLVM's queue mutex).
    lock: Mutex<()>,
    errors: &'static QueueErrors,
    /// LIBOMPTARGET_PROFILE: dispatch timestamps were turned on for it.
    profiled: AtomicBool,
}
// SAFETY: the queue is an HSA object usable from any thread; all packet
// writes happen under `lock`, and the HSA calls on it are thread-safe.
unsafe impl Send for DeviceQueue {}
// SAFETY: as above.
unsafe impl Sync for DeviceQueue {}

/// What the queue error callback reported (0 = nothing), and what it
/// needs to report like LLVM.
#[derive(Default)]
struct QueueErrors {
    status: AtomicI32,
    hsa: Option<&'static HsaRuntime>,
    /// The kernel of the last dispatch published on the queue.
    last_kernel: AtomicPtr<AmdKernel>,
}

/// The last GPU memory fault reported by the system event handler, and the
/// kernel launches 22.1 lists when it reports one.
#[derive(Default)]
struct FaultRecord {
    /// Set when a fault arrived.
    seen: AtomicU32,
    agent: AtomicU64,
    address: AtomicU64,
    reasons: AtomicU32,
    /// Per device: its agent handle and node.
    devices: Vec<(u64, u32)>,
    /// Per device: the last kernels launched, newest first.
    traces: Vec<Mutex<VecDeque<&'static str>>>,
}

/// Launches 22.1 remembers per device (`KernelLaunchTraces`).
const KERNEL_TRACES: usize = 8;

impl FaultRecord {
    fn record_launch(&self, device: usize, name: &'static str) {
        if let Some(t) = self.traces.get(device) {
            let mut t = t.lock();
            t.push_front(name);
            t.truncate(KERNEL_TRACES);
        }
    }
}

/// What the plugin knows about a GPU agent.
struct DeviceInfo {
    agent: HsaAgent,
    name: String,
    product: String,
    node: u32,
    isas: Vec<TargetId>,
    grid: GridLimits,
    compute_units: u32,
    waves_per_cu: u32,
    clock_frequency: u64,
    uuid: Option<String>,
    queue_max_size: u32,
    /// HSA queues (index 0 serves the synchronous methods), created on first use.
    queues: Vec<OnceLock<Result<DeviceQueue>>>,
    /// Coarse-grained global pool and the agents allowed on its allocations.
    coarse: Option<(HsaMemoryPool, Vec<HsaAgent>)>,
    pool: MemoryPool,
    /// Idle signals (shared with the signal references of asynchronous work).
    signals: Arc<Mutex<Vec<HsaSignal>>>,
    /// Streams and events of the asynchronous methods.
    streams: stream::StreamPool,
}

impl DeviceInfo {
    /// `getHardwareParallelism()`: CUs × waves per CU.
    fn hardware_parallelism(&self) -> u64 {
        u64::from(self.compute_units) * u64::from(self.waves_per_cu)
    }
}

/// Host memory reachable from the GPUs.
struct HostPools {
    /// Fine-grained pool (pinned and staging memory) and the GPUs that reach it.
    fine: (HsaMemoryPool, Vec<HsaAgent>),
    /// Fine-grained pool with `KERNARG_INIT`, for kernarg buffers.
    kernarg: (HsaMemoryPool, Vec<HsaAgent>),
}

/// The initialised plugin.
struct State {
    hsa: &'static HsaRuntime,
    version: (u16, u16),
    devices: Vec<DeviceInfo>,
    host: Option<HostPools>,
    /// Kernarg buffers and staging buffers, reused.
    kernarg_cache: MemoryPool,
    staging_cache: MemoryPool,
    /// Pinned host allocations (start → size): freed with the pool, and
    /// transfers from inside them skip the staging copy.
    pinned: Mutex<BTreeMap<u64, u64>>,
    /// Host ranges locked with hsa_amd_memory_lock by transfers in flight.
    locks: Mutex<BTreeMap<usize, LockedRange>>,
    faults: &'static FaultRecord,
}

/// One range locked by `hsa_amd_memory_lock`, shared by the transfers using it.
struct LockedRange {
    size: usize,
    agent_ptr: u64,
    users: u32,
}

/// A loaded code object.
struct LoadedImage {
    device: usize,
    /// Set once unload_binary has run (the handle is then refused).
    unloaded: AtomicBool,
    executable: HsaExecutable,
    symbols: ImageSymbols,
    metadata: Option<CodeObjectMetadata>,
    envs: HashMap<String, KernelEnvironment>,
}

/// A resolved kernel.
struct AmdKernel {
    device: usize,
    name: String,
    image: ImageHandle,
    kernel_object: u64,
    kernarg_size: u32,
    group_size: u32,
    private_size: u32,
    dynamic_stack: bool,
    meta: Option<KernelMeta>,
    env: Option<KernelEnvironment>,
    grid: KernelGrid,
}

/// The AMDGPU plugin.
#[derive(Default)]
pub struct AmdgpuPlugin {
    state: OnceLock<Result<State>>,
    images: RwLock<Vec<&'static LoadedImage>>,
    kernels: RwLock<Vec<&'static AmdKernel>>,
    /// LIBOMPTARGET_PROFILE device timing (stream.rs): spans read from the
    /// completion signals of completed work, by token, until the runtime
    /// takes them.
    timings: Mutex<HashMap<u64, (u64, u64)>>,
    next_timing: AtomicU64,
    /// The HSA system clock against the host's `CLOCK_MONOTONIC`: (host ns
    /// minus HSA ns, ticks per second), read once; `None` without it.
    clock_map: OnceLock<Option<(i128, u64)>>,
    /// `hsa_amd_profiling_async_copy_enable(true)` was called (its outcome).
    copy_timing: OnceLock<bool>,
}

/// Allocations from one HSA memory pool, made accessible to `agents`.
struct PoolAlloc<'a> {
    hsa: &'a HsaRuntime,
    pool: HsaMemoryPool,
    agents: &'a [HsaAgent],
}

impl RawAllocator for PoolAlloc<'_> {
    fn raw_alloc(&self, size: u64) -> Result<u64> {
        let bytes = usize::try_from(size).map_err(|_| OffloadError::OutOfDeviceMemory { bytes: size })?;
        let mut p: *mut c_void = core::ptr::null_mut();
        // SAFETY: valid out-pointer; the pool handle came from the runtime.
        let rc = unsafe { (self.hsa.hsa_amd_memory_pool_allocate)(self.pool, bytes, 0, &mut p) };
        if rc == HsaStatus::ERROR_OUT_OF_RESOURCES || (rc == HsaStatus::SUCCESS && p.is_null()) {
            return Err(OffloadError::OutOfDeviceMemory { bytes: size });
        }
        self.hsa.check(rc, "hsa_amd_memory_pool_allocate")?;
        if !self.agents.is_empty() {
            let rc =
                // SAFETY: `agents` is a live slice; `p` is the allocation just made.
                unsafe { (self.hsa.hsa_amd_agents_allow_access)(self.agents.len() as u32, self.agents.as_ptr(), core::ptr::null(), p) };
            if let Err(e) = self.hsa.check(rc, "hsa_amd_agents_allow_access") {
                // SAFETY: `p` came from hsa_amd_memory_pool_allocate and is not used.
                let _ = unsafe { (self.hsa.hsa_amd_memory_pool_free)(p) };
                return Err(e);
            }
        }
        Ok(p as u64)
    }
    fn raw_free(&self, ptr: u64) -> Result<()> {
        // SAFETY: `ptr` came from hsa_amd_memory_pool_allocate and is freed once (pool invariant).
        let rc = unsafe { (self.hsa.hsa_amd_memory_pool_free)(ptr as usize as *mut c_void) };
        self.hsa.check(rc, "hsa_amd_memory_pool_free")
    }
}

fn cstring(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| OffloadError::InvalidArgument(format!("symbol name '{name}' contains NUL")))
}

/// Runs `f` on the collector behind `data`, returning `HSA_STATUS_ERROR`
/// instead of unwinding into the HSA runtime.
fn guarded<T>(data: *mut c_void, f: impl FnOnce(&mut T) -> HsaStatus) -> HsaStatus {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: every iteration call below passes a `&mut T` of the callback's own collector type as `data`, live for the call.
        let t = unsafe { &mut *(data as *mut T) };
        f(t)
    }))
    .unwrap_or(HsaStatus::ERROR)
}

unsafe extern "C" fn collect_agent(agent: HsaAgent, data: *mut c_void) -> HsaStatus {
    guarded::<Vec<HsaAgent>>(data, |v| {
        v.push(agent);
        HsaStatus::SUCCESS
    })
}

unsafe extern "C" fn collect_isa(isa: HsaIsa, data: *mut c_void) -> HsaStatus {
    guarded::<Vec<HsaIsa>>(data, |v| {
        v.push(isa);
        HsaStatus::SUCCESS
    })
}

unsafe extern "C" fn collect_pool(pool: HsaMemoryPool, data: *mut c_void) -> HsaStatus {
    guarded::<Vec<HsaMemoryPool>>(data, |v| {
        v.push(pool);
        HsaStatus::SUCCESS
    })
}

/// Queue error callback: records the status for the waiting thread.
unsafe extern "C" fn queue_error(status: HsaStatus, queue: *mut HsaQueue, data: *mut c_void) {
    if data.is_null() {
        return;
    }
    // SAFETY: `data` is the `&'static QueueErrors` given to hsa_queue_create.
    let slot = unsafe { &*(data as *const QueueErrors) };
    if config().abort_on_gpu_error {
        // Reference (AMDGPUQueueTy::callbackError): a trap is reported with
        // the queue's kernel, anything else as a fatal error; both abort.
        let _ = std::panic::catch_unwind(|| {
            let kernel = slot.last_kernel.load(Ordering::Acquire);
            let text = if status == HsaStatus::ERROR_EXCEPTION {
                // SAFETY: kernels are leaked ('static) once resolved; null when none ran.
                match unsafe { kernel.as_ref() } {
                    Some(k) => format!(
                        "OFFLOAD ERROR: Kernel '{}'\nOFFLOAD ERROR: execution interrupted by hardware trap instruction\n\
                         Use 'OFFLOAD_TRACK_NUM_KERNEL_LAUNCH_TRACES=1' to show the stack trace of the kernel\n",
                        pretty_kernel_name(&k.name)
                    ),
                    None => "OFFLOAD ERROR: execution interrupted by hardware trap instruction\n".into(),
                }
            } else {
                let desc = slot.hsa.map(|h| h.status_text(status)).unwrap_or_else(|| "unknown error".into());
                format!("omptarget fatal error 1: received error in queue {}: {desc}\n", c_pointer(queue as u64))
            };
            crate::base::diag::c_write(crate::base::diag::CStream::Stderr, &text);
        });
        std::process::abort();
    }
    slot.status.store(status.0, Ordering::Release);
}

/// System event handler: records GPU memory faults for the waiting thread.
unsafe extern "C" fn system_event(event: *const hsa::HsaAmdEvent, data: *mut c_void) -> HsaStatus {
    if event.is_null() || data.is_null() {
        return HsaStatus::SUCCESS;
    }
    // SAFETY: the runtime passes a valid event for the call; `data` is the `&'static FaultRecord` registered with the handler.
    let (e, rec) = unsafe { (&*event, &*(data as *const FaultRecord)) };
    if e.event_type == consts::EVENT_GPU_MEMORY_FAULT && config().abort_on_gpu_error {
        // The process aborts right after: nothing observes a half-done report.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::base::diag::c_write(crate::base::diag::CStream::Stderr, &fault_report(rec, e));
        }));
        std::process::abort();
    }
    if e.event_type == consts::EVENT_GPU_MEMORY_FAULT {
        rec.agent.store(e.agent.handle, Ordering::Relaxed);
        rec.address.store(e.virtual_address, Ordering::Relaxed);
        rec.reasons.store(e.fault_reason_mask, Ordering::Relaxed);
        rec.seen.store(1, Ordering::Release);
    }
    HsaStatus::SUCCESS
}

/// `llvm::omp::prettifyFunctionName`: `omp target in <parent> @ <line> (<name>)`
/// for OpenMP kernels (`__omp_offloading_<hash>_<hash>_<parent>_l<line>...`;
/// C++ parents stay mangled here), `<name> (internalized)` for internalized
/// functions, else the name.
fn pretty_kernel_name(name: &str) -> String {
    if let Some(base) = name.strip_suffix(".internalized") {
        return format!("{base} (internalized)");
    }
    let parent_and_line = || {
        let mut rest = name.strip_prefix("__omp_offloading")?;
        for _ in 0..3 {
            rest = rest.get(rest.find('_')? + 1..)?;
        }
        let at = rest.rfind("_l")?;
        let digits: &str = &rest[at + 2..];
        let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
        let line: u32 = digits[..end].parse().ok()?;
        Some((&rest[..at], line))
    };
    match parent_and_line() {
        Some((parent, line)) if line != 0 => format!("omp target in {parent} @ {line} ({name})"),
        _ => name.to_string(),
    }
}

/// C's `%p`.
fn c_pointer(p: u64) -> String {
    if p == 0 { "(nil)".into() } else { format!("{p:#x}") }
}

/// What 22.1's event handler prints for a memory fault (its kernel traces,
/// then the fault) before it aborts.
fn fault_report(rec: &FaultRecord, e: &hsa::HsaAmdEvent) -> String {
    let mut out = String::new();
    let device = rec.devices.iter().position(|&(agent, _)| agent == e.agent.handle);
    let node = device.map(|d| rec.devices[d].1).unwrap_or(u32::MAX);
    let fault = format!(
        "memory access fault by GPU {node} (agent {:#x}) at virtual address {}. Reasons: {}",
        e.agent.handle,
        c_pointer(e.virtual_address),
        fault_reasons(e.fault_reason_mask)
    );
    let Some(d) = device else {
        // No device with the fault's node: 22.1's final FATAL_MESSAGE.
        return format!("omptarget fatal error 1: {fault}\n");
    };
    {
        let names: Vec<&str> = rec.traces[d].lock().iter().copied().collect();
        match names.len() {
            0 => out.push_str("No kernel launches known\n"),
            1 => out.push_str(&format!("Display only launched kernel:\nKernel '{}'\n", pretty_kernel_name(names[0]))),
            n => {
                out.push_str(&format!("Display last {n} kernels launched:\n"));
                for (i, k) in names.iter().enumerate() {
                    out.push_str(&format!("Kernel {i}: '{}'\n", pretty_kernel_name(k)));
                }
                out.push_str(&format!(
                    "Use 'OFFLOAD_TRACK_NUM_KERNEL_LAUNCH_TRACES=<num>' to adjust the number of shown stack traces (0 now, up to {KERNEL_TRACES})\n"
                ));
            }
        }
    }
    out.push_str(&format!("OFFLOAD ERROR: {fault}\nUse 'OFFLOAD_TRACK_ALLOCATION_TRACES=true' to track device allocations\n"));
    out
}

/// Reasons of a memory fault, as LLVM's event handler words them.
fn fault_reasons(mask: u32) -> String {
    const REASONS: [(u32, &str); 8] = [
        (1 << 0, "Page not present or supervisor privilege"),
        (1 << 1, "Write access to a read-only page"),
        (1 << 2, "Execute access to a page marked NX"),
        (1 << 3, "GPU attempted access to a host only page"),
        (1 << 4, "DRAM ECC failure"),
        (1 << 5, "Can't determine the exact fault address"),
        (1 << 6, "SRAM ECC failure (ie registers, no fault address)"),
        (1 << 31, "GPU reset following unspecified hang"),
    ];
    let r: Vec<&str> = REASONS.iter().filter(|(b, _)| mask & b != 0).map(|(_, s)| *s).collect();
    if r.is_empty() { format!("Unknown ({mask})") } else { r.join(", ") }
}

/// Typed `hsa_agent_get_info`.
fn agent_info<T: Copy + Default>(hsa: &HsaRuntime, agent: HsaAgent, attr: i32, call: &'static str) -> Result<T> {
    let mut v = T::default();
    // SAFETY: `v` is a live value of the type the attribute fills (the callers pair each attribute with its documented type).
    let rc = unsafe { (hsa.hsa_agent_get_info)(agent, attr, (&mut v as *mut T).cast()) };
    hsa.check(rc, call).map(|_| v)
}

/// `hsa_agent_get_info` of a fixed-size character attribute.
fn agent_string<const N: usize>(hsa: &HsaRuntime, agent: HsaAgent, attr: i32) -> Option<String> {
    let mut buf = [0u8; N];
    // SAFETY: `buf` holds N bytes, at least what the attribute documents.
    let rc = unsafe { (hsa.hsa_agent_get_info)(agent, attr, buf.as_mut_ptr().cast()) };
    if rc != HsaStatus::SUCCESS {
        return None;
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(N);
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

fn pool_info<T: Copy + Default>(hsa: &HsaRuntime, pool: HsaMemoryPool, attr: i32) -> Result<T> {
    let mut v = T::default();
    // SAFETY: `v` is a live value of the attribute's documented type.
    let rc = unsafe { (hsa.hsa_amd_memory_pool_get_info)(pool, attr, (&mut v as *mut T).cast()) };
    hsa.check(rc, "hsa_amd_memory_pool_get_info").map(|_| v)
}

fn memory_pools(hsa: &HsaRuntime, agent: HsaAgent) -> Result<Vec<HsaMemoryPool>> {
    let mut pools: Vec<HsaMemoryPool> = Vec::new();
    // SAFETY: the callback receives `&mut pools` (a Vec<HsaMemoryPool>) for the call only.
    let rc = unsafe { (hsa.hsa_amd_agent_iterate_memory_pools)(agent, collect_pool, (&mut pools as *mut Vec<HsaMemoryPool>).cast()) };
    hsa.check(rc, "hsa_amd_agent_iterate_memory_pools").map(|_| pools)
}

/// The GPU agents allowed to access allocations of `pool`.
fn agents_with_access(hsa: &HsaRuntime, pool: HsaMemoryPool, gpus: &[HsaAgent]) -> Vec<HsaAgent> {
    gpus.iter()
        .copied()
        .filter(|&a| {
            let mut access: u32 = consts::POOL_ACCESS_NEVER_ALLOWED;
            // SAFETY: `access` is the u32 enum the attribute fills.
            let rc = unsafe { (hsa.hsa_amd_agent_memory_pool_get_info)(a, pool, hi::AGENT_POOL_ACCESS, (&mut access as *mut u32).cast()) };
            rc == HsaStatus::SUCCESS && access != consts::POOL_ACCESS_NEVER_ALLOWED
        })
        .collect()
}

/// A global pool of `agent` whose flags contain `want` (and runtime allocation is allowed).
fn find_pool(hsa: &HsaRuntime, pools: &[HsaMemoryPool], want: u32) -> Result<Option<HsaMemoryPool>> {
    for &p in pools {
        if pool_info::<u32>(hsa, p, hi::POOL_SEGMENT)? != consts::SEGMENT_GLOBAL {
            continue;
        }
        let flags: u32 = pool_info(hsa, p, hi::POOL_GLOBAL_FLAGS)?;
        let allowed: bool = pool_info::<u8>(hsa, p, hi::POOL_RUNTIME_ALLOC_ALLOWED).map(|b| b != 0).unwrap_or(true);
        if flags & want == want && allowed {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

fn agent_isas(hsa: &HsaRuntime, agent: HsaAgent) -> Result<Vec<TargetId>> {
    let mut isas: Vec<HsaIsa> = Vec::new();
    // SAFETY: the callback receives `&mut isas` (a Vec<HsaIsa>) for the call only.
    let rc = unsafe { (hsa.hsa_agent_iterate_isas)(agent, collect_isa, (&mut isas as *mut Vec<HsaIsa>).cast()) };
    hsa.check(rc, "hsa_agent_iterate_isas")?;
    let mut out = Vec::new();
    for isa in isas {
        let mut len: u32 = 0;
        // SAFETY: the NAME_LENGTH attribute fills a u32.
        hsa.check(unsafe { (hsa.hsa_isa_get_info_alt)(isa, hi::ISA_NAME_LENGTH, (&mut len as *mut u32).cast()) }, "hsa_isa_get_info_alt")?;
        let mut buf = vec![0u8; len as usize + 1];
        // SAFETY: `buf` holds the NAME_LENGTH bytes the NAME attribute writes, plus one.
        hsa.check(unsafe { (hsa.hsa_isa_get_info_alt)(isa, hi::ISA_NAME, buf.as_mut_ptr().cast()) }, "hsa_isa_get_info_alt")?;
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).into_owned();
        match TargetId::parse(&name) {
            Some(t) => out.push(t),
            None => crate::debug!("amdgpu: ignoring ISA {name}"),
        }
    }
    Ok(out)
}

fn init_state() -> Result<State> {
    let hsa = hsa::get().map_err(Clone::clone)?;
    // SAFETY: hsa_init takes no arguments; it may be called once per process here.
    hsa.check(unsafe { (hsa.hsa_init)() }, "hsa_init")?;
    let mut version = (0u16, 0u16);
    if let Some(f) = hsa.hsa_system_get_info {
        // SAFETY: the version attributes fill u16 values.
        unsafe {
            let _ = f(hi::SYSTEM_VERSION_MAJOR, (&mut version.0 as *mut u16).cast());
            let _ = f(hi::SYSTEM_VERSION_MINOR, (&mut version.1 as *mut u16).cast());
        }
    }
    let mut agents: Vec<HsaAgent> = Vec::new();
    // SAFETY: the callback receives `&mut agents` (a Vec<HsaAgent>) for the call only.
    let rc = unsafe { (hsa.hsa_iterate_agents)(collect_agent, (&mut agents as *mut Vec<HsaAgent>).cast()) };
    hsa.check(rc, "hsa_iterate_agents")?;
    let (mut cpus, mut gpus) = (Vec::new(), Vec::new());
    for &a in &agents {
        match agent_info::<u32>(hsa, a, hi::AGENT_DEVICE, "hsa_agent_get_info")? {
            consts::DEVICE_TYPE_CPU => cpus.push(a),
            consts::DEVICE_TYPE_GPU => {
                let features: u32 = agent_info(hsa, a, hi::AGENT_FEATURE, "hsa_agent_get_info")?;
                if features & consts::AGENT_FEATURE_KERNEL_DISPATCH != 0 {
                    gpus.push(a);
                }
            }
            _ => {}
        }
    }
    crate::debug!("amdgpu: {} agents: {} CPU, {} GPU with kernel dispatch", agents.len(), cpus.len(), gpus.len());

    // Host pools: the first fine-grained pool and the first kernarg pool of the CPU agents.
    let (mut fine, mut kernarg) = (None, None);
    for &c in &cpus {
        let pools = memory_pools(hsa, c)?;
        if fine.is_none() {
            fine = find_pool(hsa, &pools, consts::POOL_FLAG_FINE_GRAINED)?;
        }
        if kernarg.is_none() {
            kernarg = find_pool(hsa, &pools, consts::POOL_FLAG_FINE_GRAINED | consts::POOL_FLAG_KERNARG_INIT)?;
        }
    }
    let host = match (fine, kernarg) {
        (Some(f), Some(k)) => {
            Some(HostPools { fine: (f, agents_with_access(hsa, f, &gpus)), kernarg: (k, agents_with_access(hsa, k, &gpus)) })
        }
        _ if gpus.is_empty() => None,
        _ => {
            return Err(OffloadError::PluginUnavailable {
                plugin: "amdgpu",
                reason: "no fine-grained host memory pool with kernel-argument support".into(),
            });
        }
    };

    let cfg = config();
    let mut devices = Vec::new();
    for (index, &agent) in gpus.iter().enumerate() {
        let get_u32 = |attr: i32| agent_info::<u32>(hsa, agent, attr, "hsa_agent_get_info");
        let name = agent_string::<64>(hsa, agent, hi::AGENT_NAME).unwrap_or_else(|| "unknown".into());
        let product = agent_string::<64>(hsa, agent, hi::AMD_AGENT_PRODUCT_NAME).unwrap_or_default();
        let wavefront = get_u32(hi::AGENT_WAVEFRONT_SIZE)?;
        let max_dim: [u16; 3] = agent_info(hsa, agent, hi::AGENT_WORKGROUP_MAX_DIM, "hsa_agent_get_info")?;
        let grid_max: HsaDim3 = agent_info(hsa, agent, hi::AGENT_GRID_MAX_DIM, "hsa_agent_get_info")?;
        let max_wg = u32::from(max_dim[0]).max(1);
        // Reference (AMDGPUDeviceTy::initImpl): GV_Max_Teams = grid max x / max workgroup size.
        let max_teams = grid_max.x / max_wg;
        if max_teams == 0 {
            return Err(OffloadError::PluginUnavailable {
                plugin: "amdgpu",
                reason: format!("device {index}: maximum number of teams cannot be zero"),
            });
        }
        let compute_units = get_u32(hi::AMD_AGENT_COMPUTE_UNIT_COUNT)?;
        let waves_per_cu = get_u32(hi::AMD_AGENT_MAX_WAVES_PER_CU)?;
        let mut grid = GridLimits::new(wavefront.max(1), max_wg, max_teams, cfg.omp_num_teams, cfg.omp_teams_thread_limit);
        grid.default_threads = AMDGPU_DEFAULT_WG_SIZE.min(grid.thread_limit);
        grid.default_blocks = compute_units.saturating_mul(cfg.teams_per_cu).max(1);
        grid.min_threads_low_trip = cfg.min_threads_low_trip;
        grid.reuse_blocks_for_high_trip = cfg.reuse_blocks_for_high_trip;
        let clock_frequency = agent_info::<u64>(hsa, agent, hi::AMD_AGENT_TIMESTAMP_FREQUENCY, "hsa_agent_get_info").unwrap_or(0);
        let uuid = agent_string::<24>(hsa, agent, hi::AMD_AGENT_UUID).filter(|u| !u.is_empty() && !u.ends_with("-XX"));
        let pools = memory_pools(hsa, agent)?;
        let coarse = find_pool(hsa, &pools, consts::POOL_FLAG_COARSE_GRAINED)?.map(|p| (p, agents_with_access(hsa, p, &gpus)));
        let info = DeviceInfo {
            agent,
            node: get_u32(hi::AGENT_NODE).unwrap_or(index as u32),
            isas: agent_isas(hsa, agent)?,
            grid,
            compute_units,
            waves_per_cu,
            clock_frequency,
            uuid,
            queue_max_size: get_u32(hi::AGENT_QUEUE_MAX_SIZE)?,
            queues: {
                // Reference (AMDGPUDeviceTy::initImpl): max(1, min(NUM_HSA_QUEUES, QUEUES_MAX)).
                let max = get_u32(hi::AGENT_QUEUES_MAX).unwrap_or(1).max(1);
                (0..cfg.num_queues.min(max).max(1)).map(|_| OnceLock::new()).collect()
            },
            coarse,
            pool: MemoryPool::new(cfg.memory_manager_threshold),
            signals: Arc::new(Mutex::new(Vec::new())),
            streams: stream::StreamPool::default(),
            name,
            product,
        };
        let isas: Vec<String> = info.isas.iter().map(ToString::to_string).collect();
        crate::debug!(
            "amdgpu: device {index}: {} ({}), ISA {}, {} CUs, wavefront {wavefront}, {} coarse-grained pool",
            info.name,
            info.product,
            isas.join(" "),
            info.compute_units,
            if info.coarse.is_some() { "with a" } else { "without a" }
        );
        devices.push(info);
    }
    let faults: &'static FaultRecord = Box::leak(Box::new(FaultRecord {
        devices: devices.iter().map(|d| (d.agent.handle, d.node)).collect(),
        traces: devices.iter().map(|_| Mutex::new(VecDeque::with_capacity(KERNEL_TRACES))).collect(),
        ..Default::default()
    }));
    if let Some(register) = hsa.hsa_amd_register_system_event_handler
        && !devices.is_empty()
    {
        // SAFETY: the handler only reads the event and writes atomics of the leaked (so 'static) record it is given.
        let rc = unsafe { register(system_event, (faults as *const FaultRecord).cast_mut().cast()) };
        if rc != HsaStatus::SUCCESS {
            crate::debug!("amdgpu: hsa_amd_register_system_event_handler: {}", hsa.describe(rc));
        }
    }
    Ok(State {
        hsa,
        version,
        devices,
        host,
        kernarg_cache: MemoryPool::new(HOST_BUFFER_CACHE_BYTES),
        staging_cache: MemoryPool::new(HOST_BUFFER_CACHE_BYTES),
        pinned: Mutex::new(BTreeMap::new()),
        locks: Mutex::new(BTreeMap::new()),
        faults,
    })
}

impl AmdgpuPlugin {
    /// The runtime and devices, initialised on first call (the outcome is cached).
    fn state(&self) -> Result<&State> {
        self.state
            .get_or_init(|| {
                let s = init_state();
                match &s {
                    Ok(st) => crate::debug!(
                        "amdgpu: HSA runtime {} (version {}.{}), {} devices",
                        st.hsa.path,
                        st.version.0,
                        st.version.1,
                        st.devices.len()
                    ),
                    Err(e) => crate::debug!("amdgpu: plugin unavailable, 0 AMDGPU devices: {e}"),
                }
                s
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn device(&self, device: usize) -> Result<(&State, &DeviceInfo)> {
        let st = self.state()?;
        let dev = st.devices.get(device).ok_or_else(|| OffloadError::Internal(format!("amdgpu: no device {device}")))?;
        Ok((st, dev))
    }

    fn host(st: &State) -> Result<&HostPools> {
        st.host.as_ref().ok_or_else(|| OffloadError::Internal("amdgpu: no host memory pools".into()))
    }

    fn image(&self, handle: ImageHandle) -> Result<&'static LoadedImage> {
        self.images
            .read()
            .get(handle)
            .copied()
            .filter(|m| !m.unloaded.load(Ordering::Acquire))
            .ok_or_else(|| OffloadError::Internal(format!("amdgpu: unknown or unloaded image handle {handle}")))
    }

    fn kernel(&self, handle: KernelHandle) -> Result<&'static AmdKernel> {
        let i = usize::try_from(handle).unwrap_or(usize::MAX);
        self.kernels.read().get(i).copied().ok_or_else(|| OffloadError::Internal(format!("amdgpu: unknown kernel handle {handle}")))
    }

    /// A signal with value 1, from the device's pool or new.
    fn take_signal(st: &State, dev: &DeviceInfo) -> Result<HsaSignal> {
        let s = match dev.signals.lock().pop() {
            Some(s) => s,
            None => {
                let mut s = HsaSignal::default();
                // SAFETY: valid out-pointer; no consumers list.
                st.hsa.check(unsafe { (st.hsa.hsa_signal_create)(1, 0, core::ptr::null(), &mut s) }, "hsa_signal_create")?;
                s
            }
        };
        // SAFETY: `s` is a live signal no operation is using.
        unsafe { (st.hsa.hsa_signal_store_screlease)(s, 1) };
        Ok(s)
    }

    /// Waits until `signal` reaches 0; a queue error or memory fault reported
    /// meanwhile ends the wait with an error naming `what`.
    fn wait(st: &State, signal: HsaSignal, errors: Option<&QueueErrors>, what: &dyn Fn() -> String) -> Result<()> {
        loop {
            // SAFETY: `signal` is live until the caller returns it to the pool.
            let v = unsafe {
                (st.hsa.hsa_signal_wait_scacquire)(signal, consts::SIGNAL_CONDITION_EQ, 0, WAIT_SLICE_HINT, consts::WAIT_STATE_BLOCKED)
            };
            if v == 0 {
                return Ok(());
            }
            if st.faults.seen.load(Ordering::Acquire) != 0 {
                return Err(OffloadError::Driver {
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
            if let Some(e) = errors {
                let status = e.status.load(Ordering::Acquire);
                if status != 0 {
                    return Err(OffloadError::Driver {
                        plugin: "amdgpu",
                        call: "the HSA queue",
                        message: format!("received error while running {}: {}", what(), st.hsa.describe(HsaStatus(status))),
                    });
                }
            }
            std::hint::spin_loop();
        }
    }

    /// One `hsa_amd_memory_async_copy` on `dev`'s signals, waited for.
    fn copy(st: &State, dev: &DeviceInfo, dst: u64, dst_agent: HsaAgent, src: u64, src_agent: HsaAgent, size: u64) -> Result<()> {
        let s = Self::take_signal(st, dev)?;
        // SAFETY: the caller guarantees both ranges are valid for `size` bytes until the copy completes, which is waited for below.
        let rc = unsafe {
            (st.hsa.hsa_amd_memory_async_copy)(
                dst as usize as *mut c_void,
                dst_agent,
                src as usize as *const c_void,
                src_agent,
                size as usize,
                0,
                core::ptr::null(),
                s,
            )
        };
        if let Err(e) = st.hsa.check(rc, "hsa_amd_memory_async_copy") {
            dev.signals.lock().push(s);
            return Err(e);
        }
        Self::wait(st, s, None, &|| format!("a copy of {size} bytes"))?;
        dev.signals.lock().push(s);
        Ok(())
    }

    /// The start of the pinned allocation containing `[ptr, ptr+size)`.
    fn pinned_range(st: &State, ptr: u64, size: u64) -> bool {
        let pinned = st.pinned.lock();
        pinned.range(..=ptr).next_back().is_some_and(|(&start, &len)| ptr.checked_add(size).is_some_and(|end| end <= start + len))
    }

    /// Copies between host memory `host` and device memory `device_ptr`
    /// (`to_device` gives the direction): directly from pinned memory, through
    /// locked memory for large transfers, else through a staging buffer.
    ///
    /// # Safety
    /// `[host, host+size)` must be valid host memory (readable when copying to
    /// the device, writable otherwise) for the call.
    unsafe fn host_transfer(&self, device: usize, device_ptr: u64, host: usize, size: u64, to_device: bool) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let (st, dev) = self.device(device)?;
        let dst_src = |h: u64| if to_device { (device_ptr, h) } else { (h, device_ptr) };
        let agent = dev.agent;
        if Self::pinned_range(st, host as u64, size) {
            let (d, s) = dst_src(host as u64);
            return Self::copy(st, dev, d, agent, s, agent, size);
        }
        if size >= config().max_async_copy_bytes
            // SAFETY: the host range is valid for `size` bytes (caller's contract).
            && let Some((agent_ptr, key)) = unsafe { Self::lock_host(st, host, size as usize)? }
        {
            let (d, s) = dst_src(agent_ptr);
            let r = Self::copy(st, dev, d, agent, s, agent, size);
            // The copy has completed (or failed): the range may be unlocked.
            let u = Self::unlock_host(st, key);
            return r.and(u);
        }
        let hp = Self::host(st)?;
        let alloc = PoolAlloc { hsa: st.hsa, pool: hp.fine.0, agents: &hp.fine.1 };
        let staging = st.staging_cache.alloc(size, &alloc)?;
        let r = (|| {
            if to_device {
                // SAFETY: `host` is readable for `size` bytes; `staging` is a host-accessible allocation of at least `size` bytes.
                unsafe { core::ptr::copy_nonoverlapping(host as *const u8, staging as usize as *mut u8, size as usize) };
            }
            let (d, s) = dst_src(staging);
            Self::copy(st, dev, d, agent, s, agent, size)?;
            if !to_device {
                // SAFETY: `host` is writable for `size` bytes; the copy into `staging` has completed.
                unsafe { core::ptr::copy_nonoverlapping(staging as usize as *const u8, host as *mut u8, size as usize) };
            }
            Ok(())
        })();
        let f = st.staging_cache.free(staging, &alloc);
        r.and(f)
    }

    /// Locks `[host, host+size)` for the GPUs, or shares a lock in flight that
    /// covers it. Returns the agent pointer of `host` and the key to unlock
    /// with, or `None` when the range partly overlaps another locked range
    /// (the caller stages the transfer instead).
    ///
    /// # Safety
    /// The range must be valid host memory until [`Self::unlock_host`].
    unsafe fn lock_host(st: &State, host: usize, size: usize) -> Result<Option<(u64, usize)>> {
        let mut locks = st.locks.lock();
        let end = host.saturating_add(size);
        if let Some((&start, r)) = locks.range_mut(..=host).next_back()
            && start + r.size > host
        {
            if end > start + r.size {
                return Ok(None);
            }
            r.users += 1;
            return Ok(Some((r.agent_ptr + (host - start) as u64, start)));
        }
        if locks.range(host..end).next().is_some() {
            return Ok(None);
        }
        let mut locked: *mut c_void = core::ptr::null_mut();
        // SAFETY: the host range is valid for `size` bytes (caller's contract).
        let rc = unsafe { (st.hsa.hsa_amd_memory_lock)(host as *mut c_void, size, core::ptr::null_mut(), 0, &mut locked) };
        st.hsa.check(rc, "hsa_amd_memory_lock")?;
        locks.insert(host, LockedRange { size, agent_ptr: locked as u64, users: 1 });
        Ok(Some((locked as u64, host)))
    }

    /// Drops one user of a range locked by [`Self::lock_host`]; the last one unlocks it.
    fn unlock_host(st: &State, key: usize) -> Result<()> {
        let mut locks = st.locks.lock();
        let Some(r) = locks.get_mut(&key) else { return Err(OffloadError::Internal(format!("amdgpu: {key:#x} is not locked"))) };
        r.users -= 1;
        if r.users > 0 {
            return Ok(());
        }
        locks.remove(&key);
        // SAFETY: `key` is the start of a range this plugin locked and no transfer uses any more.
        st.hsa.check(unsafe { (st.hsa.hsa_amd_memory_unlock)(key as *mut c_void) }, "hsa_amd_memory_unlock")
    }

    /// The device's first queue (the one of the synchronous methods).
    fn queue<'a>(st: &State, device: usize, dev: &'a DeviceInfo) -> Result<&'a DeviceQueue> {
        Self::queue_at(st, device, dev, 0)
    }

    /// Queue `index` of the device, created on first use.
    fn queue_at<'a>(st: &State, device: usize, dev: &'a DeviceInfo, index: usize) -> Result<&'a DeviceQueue> {
        let slot =
            dev.queues.get(index % dev.queues.len().max(1)).ok_or_else(|| OffloadError::Internal("amdgpu: no queue slots".into()))?;
        slot.get_or_init(|| Self::create_queue(st, device, dev, &format!("queue {index}"))).as_ref().map_err(Clone::clone)
    }

    /// Creates an HSA queue of the configured size on the device; `what`
    /// names it in the debug trace.
    fn create_queue(st: &State, device: usize, dev: &DeviceInfo, what: &str) -> Result<DeviceQueue> {
        let want = config().queue_size.max(1).next_power_of_two();
        let size = if dev.queue_max_size > 0 { want.min(dev.queue_max_size) } else { want };
        let errors: &'static QueueErrors = Box::leak(Box::new(QueueErrors { hsa: Some(st.hsa), ..Default::default() }));
        let mut q: *mut HsaQueue = core::ptr::null_mut();
        // The callback only stores into the leaked (so 'static) error slot passed as `data`.
        // SAFETY: valid out-pointer and a callback that touches nothing else.
        let rc = unsafe {
            (st.hsa.hsa_queue_create)(
                dev.agent,
                size,
                consts::QUEUE_TYPE_MULTI,
                Some(queue_error),
                (errors as *const QueueErrors).cast_mut().cast(),
                u32::MAX,
                u32::MAX,
                &mut q,
            )
        };
        st.hsa.check(rc, "hsa_queue_create")?;
        if q.is_null() {
            return Err(OffloadError::Internal("amdgpu: hsa_queue_create returned no queue".into()));
        }
        crate::debug!("amdgpu: device {device}: {what} of {size} packets created");
        Ok(DeviceQueue { queue: q, lock: Mutex::new(()), errors, profiled: AtomicBool::new(false) })
    }

    /// The first error status reported by any of the device's queues (0: none).
    fn queue_error_status(dev: &DeviceInfo) -> i32 {
        dev.queues
            .iter()
            .filter_map(|q| q.get()?.as_ref().ok())
            .map(|q| q.errors.status.load(Ordering::Acquire))
            .find(|&s| s != 0)
            .unwrap_or(0)
    }

    /// Writes `packet` into the next slot of the queue, publishes its header
    /// atomically and rings the doorbell.
    fn dispatch(st: &State, q: &DeviceQueue, packet: &KernelDispatchPacket) {
        // SAFETY: a KernelDispatchPacket is 64 plain bytes.
        let bytes = unsafe { &*(packet as *const KernelDispatchPacket as *const [u8; 64]) };
        Self::publish(st, q, &[*bytes]);
    }

    /// Publishes AQL packets (64 bytes each, the 32-bit header word first)
    /// back to back under the queue lock, ringing the doorbell for each.
    fn publish(st: &State, q: &DeviceQueue, packets: &[[u8; 64]]) {
        let _guard = q.lock.lock();
        let hsa = st.hsa;
        for packet in packets {
            // `q.queue` is a live queue created by hsa_queue_create; the slot
            // index is masked into its ring of `size` (a power of two) 64-byte
            // packets, and the slot is free once the read index has passed it
            // (waited for below). The body is written before the header, which
            // is stored last with release semantics so the packet processor
            // never sees a partial packet.
            // SAFETY: as just said: a free, in-bounds slot of a live queue, published once.
            unsafe {
                let queue = &*q.queue;
                let index = (hsa.hsa_queue_add_write_index_relaxed)(q.queue, 1);
                let size = u64::from(queue.size.max(1));
                while index.wrapping_sub((hsa.hsa_queue_load_read_index_scacquire)(q.queue)) >= size {
                    std::hint::spin_loop();
                }
                let slot = (queue.base_address as *mut [u8; 64]).add((index & (size - 1)) as usize);
                core::ptr::copy_nonoverlapping(packet.as_ptr().add(4), slot.cast::<u8>().add(4), 60);
                let word = u32::from_le_bytes([packet[0], packet[1], packet[2], packet[3]]);
                (*(slot as *const AtomicU32)).store(word, Ordering::Release);
                (hsa.hsa_signal_store_relaxed)(queue.doorbell_signal, index as i64);
            }
        }
    }

    /// Looks up a symbol of a loaded executable (`None`: no such symbol).
    fn find_symbol(st: &State, exec: HsaExecutable, agent: HsaAgent, name: &str) -> Result<Option<HsaExecutableSymbol>> {
        let c = cstring(name)?;
        let mut sym = HsaExecutableSymbol::default();
        // SAFETY: a live executable, a NUL-terminated name, a valid agent pointer and out-pointer.
        let rc = unsafe { (st.hsa.hsa_executable_get_symbol_by_name)(exec, c.as_ptr(), &agent, &mut sym) };
        match rc {
            HsaStatus::SUCCESS => Ok(Some(sym)),
            HsaStatus::ERROR_INVALID_SYMBOL_NAME => Ok(None),
            _ => Err(st.hsa.error(rc, "hsa_executable_get_symbol_by_name")),
        }
    }

    fn symbol_info<T: Copy + Default>(st: &State, sym: HsaExecutableSymbol, attr: i32) -> Result<T> {
        let mut v = T::default();
        // SAFETY: `v` is a live value of the attribute's documented type.
        let rc = unsafe { (st.hsa.hsa_executable_symbol_get_info)(sym, attr, (&mut v as *mut T).cast()) };
        st.hsa.check(rc, "hsa_executable_symbol_get_info").map(|_| v)
    }

    /// Writes `__omp_rtl_device_environment` when the image defines it with
    /// the 48 bytes of 22.1 (other sizes: skipped silently, as 22.1).
    fn write_device_environment(&self, st: &State, device: usize, dev: &DeviceInfo, exec: HsaExecutable) -> Result<()> {
        let Some(sym) = Self::find_symbol(st, exec, dev.agent, DEVICE_ENVIRONMENT_SYMBOL)? else { return Ok(()) };
        let bytes: u32 = Self::symbol_info(st, sym, hi::SYMBOL_VARIABLE_SIZE)?;
        if bytes as usize != size_of::<DeviceEnvironment>() {
            crate::debug!("amdgpu: {DEVICE_ENVIRONMENT_SYMBOL} has {bytes} bytes, not 48: not written");
            return Ok(());
        }
        let ptr: u64 = Self::symbol_info(st, sym, hi::SYMBOL_VARIABLE_ADDRESS)?;
        let cfg = config();
        let env = DeviceEnvironment {
            device_debug_kind: cfg.device_rtl_debug,
            num_devices: st.devices.len() as u32,
            device_num: device as u32,
            dynamic_mem_size: cfg.shared_memory_size,
            clock_frequency: dev.clock_frequency,
            indirect_call_table: 0,
            indirect_call_table_size: 0,
            hardware_parallelism: dev.hardware_parallelism(),
        };
        crate::debug!("amdgpu: device {device}: writing {env:?} to {DEVICE_ENVIRONMENT_SYMBOL} at {ptr:#x}");
        // SAFETY: `env` is a live 48-byte value for the call.
        unsafe { self.host_transfer(device, ptr, (&env as *const DeviceEnvironment) as usize, 48, true) }
    }

    /// Runs `amdgcn.device.init` or `amdgcn.device.fini` of a loaded image.
    fn run_ctor_dtor(&self, device: usize, handle: ImageHandle, kernel: &str) -> Result<()> {
        // Reference (callGlobalCtorDtorCommon): one team of one thread, no arguments.
        crate::debug!("amdgpu: device {device}: running {kernel} of image {handle}");
        let k = self.get_function(device, handle, kernel)?;
        let one = LaunchDims { teams: [1, 1, 1], threads: [1, 1, 1], dyn_shared_bytes: 0, tripcount: 0 };
        // Not a launch 22.1 lists in its kernel traces (it calls launchImpl directly).
        let p = self.prepare_launch(device, k, kernel, &[], &one)?;
        self.launch_prepared(device, &p, kernel, &[])
    }

    /// Test hook: the grid a launch of `kernel` would use.
    pub fn launch_grid(&self, device: usize, kernel: KernelHandle, dims: &LaunchDims) -> Result<grid::Launch> {
        let k = self.kernel(kernel)?;
        let (_, dev) = self.device(device)?;
        Ok(grid::compute(&k.grid, &dev.grid, dims.teams, dims.threads, dims.tripcount))
    }

    /// The kernel environment a resolved kernel uses (`None`: bare).
    pub fn kernel_environment(&self, kernel: KernelHandle) -> Result<Option<KernelEnvironment>> {
        Ok(self.kernel(kernel)?.env)
    }

    /// The metadata entry of a resolved kernel, if its image has one.
    pub fn kernel_metadata(&self, kernel: KernelHandle) -> Result<Option<KernelMeta>> {
        Ok(self.kernel(kernel)?.meta.clone())
    }

    /// The ISA target ids of a device (initialises the runtime).
    pub fn target_ids(&self, device: usize) -> Result<Vec<String>> {
        Ok(self.device(device)?.1.isas.iter().map(ToString::to_string).collect())
    }
}

impl Plugin for AmdgpuPlugin {
    fn name(&self) -> &'static str {
        "amdgpu"
    }

    fn eager_init(&self) -> bool {
        // `__tgt_init_all_rtls` must not load libhsa for programs without AMDGPU images.
        false
    }

    fn is_compatible(&self, bytes: &[u8]) -> bool {
        match image::identify(bytes) {
            Ok(img) => {
                crate::debug!("amdgpu: image is a {img}");
                true
            }
            Err(_) => false,
        }
    }

    fn number_of_devices(&self) -> usize {
        self.state().map(|s| s.devices.len()).unwrap_or(0)
    }

    fn traceable(&self) -> bool {
        true
    }

    /// 22.1's `getComputeUnitKind`: the agent's name, `gfxNNN` (OMPT's `device_initialize` type).
    fn compute_unit_kind(&self, device: usize) -> String {
        self.state().ok().and_then(|s| s.devices.get(device)).map_or_else(|| "unknown".into(), |d| d.name.clone())
    }

    /// The HSA system timestamp (the domain of HSA's profiling times), in ns.
    fn device_clock(&self, device: usize) -> Option<u64> {
        let st = self.state().ok()?;
        st.devices.get(device)?;
        let f = st.hsa.hsa_system_get_info?;
        let (mut ticks, mut freq) = (0u64, 0u64);
        // SAFETY: both attributes fill a u64.
        let rc = unsafe {
            (f(hi::SYSTEM_TIMESTAMP, (&mut ticks as *mut u64).cast()), f(hi::SYSTEM_TIMESTAMP_FREQUENCY, (&mut freq as *mut u64).cast()))
        };
        if rc.0 != HsaStatus::SUCCESS || rc.1 != HsaStatus::SUCCESS || freq == 0 {
            return None;
        }
        Some((u128::from(ticks) * 1_000_000_000 / u128::from(freq)) as u64)
    }

    fn timing_start(&self, device: usize, queue: QueueHandle) -> Option<u64> {
        self.stream_timing_start(device, queue)
    }

    fn timing_stop(&self, device: usize, queue: QueueHandle, token: u64) {
        self.stream_timing_stop(device, queue, token)
    }

    fn timing_read(&self, _device: usize, token: u64) -> Option<(u64, u64)> {
        self.timings.lock().remove(&token)
    }

    fn launched_grid(&self, device: usize, kernel: KernelHandle, dims: &LaunchDims) -> Option<([u32; 3], [u32; 3])> {
        let k = self.kernel(kernel).ok()?;
        let (_, dev) = self.device(device).ok()?;
        let l = grid::compute(&k.grid, &dev.grid, dims.teams, dims.threads, dims.tripcount);
        Some((l.blocks, l.threads))
    }

    fn why_no_device(&self, bytes: &[u8]) -> Option<String> {
        let img = image::identify(bytes).ok()?;
        match self.state() {
            Err(e) => Some(format!("AMDGPU image for {}: no AMDGPU device: {e}", img.processor)),
            Ok(st) if st.devices.is_empty() => Some(format!("AMDGPU image for {}: the HSA runtime reports no GPU agents", img.processor)),
            Ok(st) if st.devices.iter().any(|d| d.isas.iter().any(|t| image::is_compatible(&img, t))) => None,
            Ok(st) => Some(image::incompatibility_message(&img, &st.devices.iter().map(|d| d.isas.clone()).collect::<Vec<_>>())),
        }
    }

    fn is_device_compatible(&self, device: usize, bytes: &[u8]) -> bool {
        let (Ok(img), Ok(st)) = (image::identify(bytes), self.state()) else { return false };
        let Some(dev) = st.devices.get(device) else { return false };
        let fits = |d: &DeviceInfo| d.isas.iter().any(|t| image::is_compatible(&img, t));
        if fits(dev) {
            return true;
        }
        // Say why once per image: when the last device is asked and none fits.
        if device + 1 == st.devices.len() && !st.devices.iter().any(fits) {
            let isas: Vec<Vec<TargetId>> = st.devices.iter().map(|d| d.isas.clone()).collect();
            let msg = image::incompatibility_message(&img, &isas);
            crate::debug!("amdgpu: {msg}");
            diag::plugin_info(info::PLUGIN_KERNEL, device, || msg);
        }
        false
    }

    fn load_binary(&self, device: usize, bytes: &[u8]) -> Result<ImageHandle> {
        crate::device::image::check_elf_layout(bytes)?;
        let img = image::identify(bytes)?;
        let (st, dev) = self.device(device)?;
        if !dev.isas.iter().any(|t| image::is_compatible(&img, t)) {
            return Err(OffloadError::IncompatibleImage(image::incompatibility_message(&img, std::slice::from_ref(&dev.isas))));
        }
        let hsa = st.hsa;
        let mut reader = HsaCodeObjectReader::default();
        // SAFETY: `bytes` is the whole code object and outlives the reader, which is destroyed below once the executable is frozen.
        let rc = unsafe { (hsa.hsa_code_object_reader_create_from_memory)(bytes.as_ptr().cast(), bytes.len(), &mut reader) };
        hsa.check(rc, "hsa_code_object_reader_create_from_memory")?;
        let empty = c"".as_ptr();
        let load = || -> Result<HsaExecutable> {
            let mut exec = HsaExecutable::default();
            let rc =
                // SAFETY: valid enum values, an empty options string and an out-pointer.
                unsafe { (hsa.hsa_executable_create_alt)(consts::PROFILE_FULL, consts::FLOAT_ROUNDING_MODE_DEFAULT, empty, &mut exec) };
            hsa.check(rc, "hsa_executable_create_alt")?;
            let mut loaded = HsaLoadedCodeObject::default();
            // SAFETY: live executable, agent and reader; valid out-pointer.
            let rc = unsafe { (hsa.hsa_executable_load_agent_code_object)(exec, dev.agent, reader, empty, &mut loaded) };
            hsa.check(rc, "hsa_executable_load_agent_code_object")?;
            // SAFETY: a live executable with its code object loaded.
            hsa.check(unsafe { (hsa.hsa_executable_freeze)(exec, empty) }, "hsa_executable_freeze")?;
            if let Some(validate) = hsa.hsa_executable_validate {
                let mut result: u32 = 0;
                // SAFETY: a frozen executable and a valid out-pointer.
                hsa.check(unsafe { validate(exec, &mut result) }, "hsa_executable_validate")?;
                if result != 0 {
                    return Err(OffloadError::Driver {
                        plugin: "amdgpu",
                        call: "hsa_executable_validate",
                        message: format!("the executable of {img} failed validation (result {result})"),
                    });
                }
            }
            Ok(exec)
        };
        let exec = load();
        if let Some(destroy) = hsa.hsa_code_object_reader_destroy {
            // SAFETY: the reader is no longer needed once loading finished or failed.
            let _ = unsafe { destroy(reader) };
        }
        let exec = exec?;
        let metadata = image::metadata(bytes)
            .inspect_err(|e| crate::debug!("amdgpu: reading kernel metadata: {e}; kernels use the fixed implicit-argument layout"))
            .ok();
        let envs = image::kernel_environments(bytes).unwrap_or_else(|e| {
            crate::debug!("amdgpu: reading kernel environments: {e}; kernels run in bare mode");
            HashMap::new()
        });
        let symbols = image::symbols(bytes)?;
        self.write_device_environment(st, device, dev, exec)?;
        let has_init = symbols.kernels.iter().any(|k| k == DEVICE_INIT_KERNEL);
        let loaded: &'static LoadedImage =
            Box::leak(Box::new(LoadedImage { device, unloaded: AtomicBool::new(false), executable: exec, symbols, metadata, envs }));
        let handle = {
            let mut images = self.images.write();
            images.push(loaded);
            images.len() - 1
        };
        crate::debug!("amdgpu: device {device}: loaded {img} ({} bytes) as image {handle}", bytes.len());
        if has_init {
            self.run_ctor_dtor(device, handle, DEVICE_INIT_KERNEL)?;
        }
        Ok(handle)
    }

    fn unload_binary(&self, device: usize, handle: ImageHandle) -> Result<()> {
        let m = self.image(handle)?;
        if m.device != device {
            return Err(OffloadError::Internal(format!("amdgpu: image {handle} belongs to device {}, not {device}", m.device)));
        }
        let (st, _) = self.device(device)?;
        // Reference (GenericDeviceTy::deinit → callGlobalDestructors, then
        // unloadBinaryImpl): `amdgcn.device.fini` when the image has it, then
        // hsa_executable_destroy. A failing destructor still unloads.
        let fini = if m.symbols.kernels.iter().any(|k| k == DEVICE_FINI_KERNEL) {
            self.run_ctor_dtor(device, handle, DEVICE_FINI_KERNEL)
        } else {
            Ok(())
        };
        m.unloaded.store(true, Ordering::Release);
        let destroyed = match st.hsa.hsa_executable_destroy {
            // SAFETY: a live executable of this plugin, destroyed once (the handle is refused from now on).
            Some(destroy) => st.hsa.check(unsafe { destroy(m.executable) }, "hsa_executable_destroy"),
            None => Ok(()),
        };
        crate::debug!("amdgpu: device {device}: image {handle} unloaded");
        fini.and(destroyed)
    }

    fn get_function(&self, device: usize, handle: ImageHandle, name: &str) -> Result<KernelHandle> {
        let m = self.image(handle)?;
        if m.device != device {
            return Err(OffloadError::Internal(format!("amdgpu: image {handle} belongs to device {}, not {device}", m.device)));
        }
        let (st, dev) = self.device(device)?;
        let kd = format!("{name}{}", image::KERNEL_DESCRIPTOR_SUFFIX);
        let sym = Self::find_symbol(st, m.executable, dev.agent, &kd)?
            .ok_or_else(|| OffloadError::MissingSymbol { lib: "the device image".into(), symbol: name.into() })?;
        if Self::symbol_info::<u32>(st, sym, hi::SYMBOL_TYPE)? != consts::SYMBOL_KIND_KERNEL {
            return Err(OffloadError::BadImage(format!("symbol {kd} is not a kernel function")));
        }
        let meta = m.metadata.as_ref().and_then(|md| md.kernel(name)).cloned();
        if meta.is_none() {
            diag::plugin_info(info::PLUGIN_KERNEL, device, || format!("Could not read extra information for kernel {name}."));
        }
        let env = m.envs.get(name).copied();
        let max_flat = meta.as_ref().map(|k| k.max_flat_workgroup_size).filter(|&n| n > 0);
        let kernel: &'static AmdKernel = Box::leak(Box::new(AmdKernel {
            device,
            name: name.to_string(),
            image: handle,
            kernel_object: Self::symbol_info(st, sym, hi::SYMBOL_KERNEL_OBJECT)?,
            kernarg_size: Self::symbol_info(st, sym, hi::SYMBOL_KERNEL_KERNARG_SEGMENT_SIZE)?,
            group_size: Self::symbol_info(st, sym, hi::SYMBOL_KERNEL_GROUP_SEGMENT_SIZE)?,
            private_size: Self::symbol_info(st, sym, hi::SYMBOL_KERNEL_PRIVATE_SEGMENT_SIZE)?,
            dynamic_stack: Self::symbol_info::<u8>(st, sym, hi::SYMBOL_KERNEL_DYNAMIC_CALLSTACK)? != 0,
            grid: KernelGrid::new(env.as_ref(), &dev.grid, max_flat),
            meta,
            env,
        }));
        let mut kernels = self.kernels.write();
        kernels.push(kernel);
        crate::debug!(
            "amdgpu: device {device}: kernel {name} -> handle {} ({} mode, object {:#x}, {} kernarg bytes, {} metadata)",
            kernels.len() - 1,
            kernel.grid.mode.name(),
            kernel.kernel_object,
            kernel.kernarg_size,
            if kernel.meta.is_some() { "with" } else { "without" }
        );
        Ok((kernels.len() - 1) as KernelHandle)
    }

    fn get_global(&self, device: usize, handle: ImageHandle, name: &str, size: u64) -> Result<u64> {
        let m = self.image(handle)?;
        let (st, dev) = self.device(device)?;
        let missing = || OffloadError::MissingSymbol {
            lib: "the device image".into(),
            symbol: format!("failed to find global symbol '{name}' in the ELF image"),
        };
        let elf_size = m.symbols.global_size(name).ok_or_else(missing)?;
        if size != 0 && elf_size != size {
            return Err(OffloadError::BadImage(format!(
                "transfer failed because global symbol '{name}' has {elf_size} bytes in the ELF image but {size} bytes on the host"
            )));
        }
        let sym = Self::find_symbol(st, m.executable, dev.agent, name)?.ok_or_else(missing)?;
        if Self::symbol_info::<u32>(st, sym, hi::SYMBOL_TYPE)? != consts::SYMBOL_KIND_VARIABLE {
            return Err(missing());
        }
        Self::symbol_info(st, sym, hi::SYMBOL_VARIABLE_ADDRESS)
    }

    fn alloc(&self, device: usize, size: u64, kind: AllocKind) -> Result<u64> {
        let (st, dev) = self.device(device)?;
        match kind {
            AllocKind::Device | AllocKind::Default => {
                let (pool, agents) = dev.coarse.as_ref().ok_or_else(|| OffloadError::PluginUnavailable {
                    plugin: "amdgpu",
                    reason: format!("device {device} has no coarse-grained memory pool"),
                })?;
                dev.pool.alloc(size, &PoolAlloc { hsa: st.hsa, pool: *pool, agents })
            }
            // Reference (AMDGPUDeviceTy::allocate): host and shared memory
            // both come from the fine-grained host pool, accessible to all GPUs.
            AllocKind::Host | AllocKind::Shared => {
                let hp = Self::host(st)?;
                let p = PoolAlloc { hsa: st.hsa, pool: hp.fine.0, agents: &hp.fine.1 }.raw_alloc(size)?;
                st.pinned.lock().insert(p, size);
                Ok(p)
            }
        }
    }

    fn free(&self, device: usize, ptr: u64, kind: AllocKind) -> Result<()> {
        let (st, dev) = self.device(device)?;
        if st.pinned.lock().remove(&ptr).is_some() {
            // SAFETY: `ptr` came from hsa_amd_memory_pool_allocate and was in the pinned set once.
            return st.hsa.check(unsafe { (st.hsa.hsa_amd_memory_pool_free)(ptr as usize as *mut c_void) }, "hsa_amd_memory_pool_free");
        }
        match (kind, dev.coarse.as_ref()) {
            (AllocKind::Device | AllocKind::Default, Some((pool, agents))) => {
                dev.pool.free(ptr, &PoolAlloc { hsa: st.hsa, pool: *pool, agents })
            }
            // SAFETY: the runtime frees only pointers this plugin returned, once.
            _ => st.hsa.check(unsafe { (st.hsa.hsa_amd_memory_pool_free)(ptr as usize as *mut c_void) }, "hsa_amd_memory_pool_free"),
        }
    }

    unsafe fn submit(&self, device: usize, dst: u64, src: usize, size: u64) -> Result<()> {
        // SAFETY: `src` is readable for `size` bytes (caller's contract).
        unsafe { self.host_transfer(device, dst, src, size, true) }
    }

    unsafe fn retrieve(&self, device: usize, dst: usize, src: u64, size: u64) -> Result<()> {
        // SAFETY: `dst` is writable for `size` bytes (caller's contract).
        unsafe { self.host_transfer(device, src, dst, size, false) }
    }

    fn exchange(&self, src_device: usize, src: u64, dst_device: usize, dst: u64, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let (_, src_dev) = self.device(src_device)?;
        let src_agent = src_dev.agent;
        let (st, dst_dev) = self.device(dst_device)?;
        // Device allocations are made accessible to every GPU that can reach
        // the pool (PoolAlloc), so one async copy serves both cases.
        Self::copy(st, dst_dev, dst, dst_dev.agent, src, src_agent, size)
    }

    fn memset(&self, device: usize, ptr: u64, value: u8, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let (st, _) = self.device(device)?;
        if ptr.is_multiple_of(4) && size.is_multiple_of(4) {
            let word = u32::from_ne_bytes([value; 4]);
            // SAFETY: a 4-aligned device range of `size` bytes (runtime's checks).
            let rc = unsafe { (st.hsa.hsa_amd_memory_fill)(ptr as usize as *mut c_void, word, (size / 4) as usize) };
            return st.hsa.check(rc, "hsa_amd_memory_fill");
        }
        let bytes = vec![value; size as usize];
        // SAFETY: `bytes` is a live buffer of `size` bytes.
        unsafe { self.host_transfer(device, ptr, bytes.as_ptr() as usize, size, true) }
    }

    fn launch(&self, device: usize, kernel: KernelHandle, name: &str, args: &[u64], dims: &LaunchDims) -> Result<()> {
        let p = self.prepare_launch(device, kernel, name, args, dims)?;
        self.state()?.faults.record_launch(device, &p.k.name);
        self.launch_prepared(device, &p, name, args)
    }

    fn has_queues(&self) -> bool {
        true
    }

    fn queue_acquire(&self, device: usize) -> Result<QueueHandle> {
        self.stream_acquire(device)
    }

    fn queue_synchronize(&self, device: usize, queue: QueueHandle) -> Result<()> {
        self.stream_synchronize(device, queue)
    }

    fn queue_query(&self, device: usize, queue: QueueHandle) -> Result<bool> {
        self.stream_query(device, queue)
    }

    fn queue_release(&self, device: usize, queue: QueueHandle) {
        self.stream_release(device, queue)
    }

    unsafe fn submit_async(&self, device: usize, dst: u64, src: usize, size: u64, queue: QueueHandle) -> Result<()> {
        // SAFETY: `src` stays readable until the queue is synchronised (caller's contract).
        unsafe { self.stream_transfer(device, queue, dst, src, size, true) }
    }

    unsafe fn retrieve_async(&self, device: usize, dst: usize, src: u64, size: u64, queue: QueueHandle) -> Result<()> {
        // SAFETY: `dst` stays writable and unread until the queue is synchronised (caller's contract).
        unsafe { self.stream_transfer(device, queue, src, dst, size, false) }
    }

    fn launch_async(
        &self,
        device: usize,
        kernel: KernelHandle,
        name: &str,
        args: &[u64],
        dims: &LaunchDims,
        queue: QueueHandle,
    ) -> Result<()> {
        self.stream_launch(device, kernel, name, args, dims, queue)
    }

    fn event_record(&self, device: usize, queue: QueueHandle) -> Result<EventHandle> {
        self.stream_event_record(device, queue)
    }

    fn event_wait(&self, device: usize, event: EventHandle, queue: QueueHandle) -> Result<()> {
        self.stream_event_wait(device, event, queue)
    }

    fn event_release(&self, device: usize, event: EventHandle) {
        self.stream_event_release(device, event)
    }

    /// A stream's own HSA queue: foreign code (ROCm libraries, the program's
    /// AQL packets) may queue work there; the stream's next synchronisation
    /// waits for it (22.1's AMDGPU plugin hands out no `targetsync`).
    fn queue_native(&self, device: usize, queue: QueueHandle) -> Option<usize> {
        self.stream_native(device, queue).inspect_err(|e| crate::debug!("amdgpu: no interop queue: {e}")).ok()
    }

    /// 22.1's AMDGPU interop: foreign runtime `hsa` (7), vendor `amd` (1),
    /// the `hsa_agent_t` handle as the device, no context.
    fn interop_info(&self, device: usize) -> Option<super::InteropInfo> {
        let (_, dev) = self.device(device).ok()?;
        Some(super::InteropInfo {
            fr_id: 7,
            vendor_id: 1,
            platform: 0,
            device: dev.agent.handle as usize,
            context: 0,
            type_names: [c"N/A", c"hsa_agent_t", c"N/A", c"hsa_queue_t *"],
        })
    }

    fn is_accessible(&self, _device: usize, ptr: usize, size: u64) -> bool {
        // Pinned host allocations are fine-grained memory every GPU reaches.
        self.state().is_ok_and(|st| Self::pinned_range(st, ptr as u64, size))
    }

    fn uid(&self, device: usize) -> String {
        match self.device(device) {
            Ok((_, dev)) => dev.uuid.clone().unwrap_or_else(|| format!("amdgpu-{device}")),
            Err(_) => format!("amdgpu-{device}"),
        }
    }

    fn properties(&self, device: usize) -> super::DeviceProperties {
        let Ok((st, dev)) = self.device(device) else { return super::DeviceProperties::default() };
        let group = dev.grid.thread_limit;
        super::DeviceProperties {
            device_type: super::DeviceType::Gpu,
            name: dev.name.clone(),
            product: dev.product.clone(),
            vendor: "AMD".into(),
            vendor_id: 0x1002,
            driver_version: format!("{}.{}", st.version.0, st.version.1),
            max_group_size: group,
            max_group_dims: [group; 3],
            max_groups: [dev.grid.block_limit; 3],
            compute_units: dev.compute_units,
            clock_mhz: 0,
            memory_clock_mhz: 0,
            address_bits: 64,
            global_memory: 0,
            // LDS per work group.
            local_memory: 64 << 10,
            simd_width: dev.grid.warp_size,
            vector_widths: [1; 7],
        }
    }

    fn device_info(&self, device: usize) -> String {
        let Ok((st, dev)) = self.device(device) else { return String::from("    AMDGPU device unavailable\n") };
        let isas: Vec<String> = dev.isas.iter().map(ToString::to_string).collect();
        format!(
            "    HSA Runtime Version: \t\t{}.{}\n    HSA OpenMP Device Number: \t\t{device}\n    Product Name: \t\t\t{}\n    \
             Device Name: \t\t\t{}\n    ISA: \t\t\t\t{}\n    Compute Units: \t\t\t{}\n    Wavefront Size: \t\t\t{}\n    \
             Max Waves Per CU: \t\t\t{}\n    Workgroup Max Size: \t\t{}\n    Max Teams: \t\t\t\t{}\n    Node: \t\t\t\t{}\n    UID: \t\t\t\t{}\n",
            st.version.0,
            st.version.1,
            dev.product,
            dev.name,
            isas.join(" "),
            dev.compute_units,
            dev.grid.warp_size,
            dev.waves_per_cu,
            dev.grid.thread_limit,
            dev.grid.block_limit,
            dev.node,
            self.uid(device)
        )
    }
}

/// A launch checked and sized, ready for its kernarg buffer and packet.
struct PreparedLaunch {
    k: &'static AmdKernel,
    l: grid::Launch,
    grid_size: [u32; 3],
    /// `KernelArgs.DynCGroupMem` (the hidden dynamic LDS argument).
    dyn_cgroup_mem: u32,
    /// Dynamic LDS the packet reserves (the clause or LIBOMPTARGET_SHARED_MEMORY_SIZE).
    dyn_shared: u32,
}

impl AmdgpuPlugin {
    /// Resolves the grid of a launch, prints the INFO lines and checks the AQL limits.
    fn prepare_launch(&self, device: usize, kernel: KernelHandle, name: &str, args: &[u64], dims: &LaunchDims) -> Result<PreparedLaunch> {
        let k = self.kernel(kernel)?;
        if k.device != device {
            return Err(OffloadError::Internal(format!("amdgpu: kernel {name} belongs to device {}, not {device}", k.device)));
        }
        self.image(k.image)?;
        let (_, dev) = self.device(device)?;
        let l = grid::compute(&k.grid, &dev.grid, dims.teams, dims.threads, dims.tripcount);
        diag::plugin_info(info::PLUGIN_KERNEL, device, || {
            format!(
                "Launching kernel {name} with [{},{},{}] blocks and [{},{},{}] threads in {} mode",
                l.blocks[0],
                l.blocks[1],
                l.blocks[2],
                l.threads[0],
                l.threads[1],
                l.threads[2],
                k.grid.mode.name()
            )
        });
        if let Some(meta) = &k.meta {
            diag::plugin_info(info::PLUGIN_KERNEL, device, || {
                format!(
                    "#Args: {} Teams x Thrds: {:4}x{:4} (MaxFlatWorkGroupSize: {}) LDS Usage: {}B #SGPRs/VGPRs: {}/{} #SGPR/VGPR Spills: {}/{} Tripcount: {}",
                    args.len(),
                    l.blocks.iter().map(|&b| u64::from(b)).product::<u64>(),
                    l.threads.iter().map(|&t| u64::from(t)).product::<u64>(),
                    meta.max_flat_workgroup_size,
                    meta.group_segment_fixed_size,
                    meta.sgpr_count,
                    meta.vgpr_count,
                    meta.sgpr_spill_count,
                    meta.vgpr_spill_count,
                    dims.tripcount
                )
            });
        }
        // AQL limits: 16-bit workgroup sizes, 32-bit grid sizes in work-items.
        let mut grid_size = [0u32; 3];
        for (d, g) in grid_size.iter_mut().enumerate() {
            let work_items = u64::from(l.blocks[d]) * u64::from(l.threads[d]);
            if l.threads[d] == 0 || l.threads[d] > u32::from(u16::MAX) || l.blocks[d] == 0 || work_items > u64::from(u32::MAX) {
                return Err(OffloadError::Driver {
                    plugin: "amdgpu",
                    call: "the kernel launch",
                    message: format!(
                        "'{name}': a grid of {:?} teams of {:?} threads does not fit an AQL dispatch packet",
                        l.blocks, l.threads
                    ),
                });
            }
            *g = work_items as u32;
        }
        // Reference (GenericKernelTy::launch): max of the clause and LIBOMPTARGET_SHARED_MEMORY_SIZE.
        let dyn_shared = dims.dyn_shared_bytes.max(config().shared_memory_size);
        Ok(PreparedLaunch { k, l, grid_size, dyn_cgroup_mem: dims.dyn_shared_bytes, dyn_shared })
    }

    /// Runs a prepared launch and waits for it.
    fn launch_prepared(&self, device: usize, p: &PreparedLaunch, name: &str, args: &[u64]) -> Result<()> {
        let (st, dev) = self.device(device)?;
        // The implicit first argument: ~0, or a KernelLaunchEnvironment for
        // kernels with team reductions.
        let mut owned_args;
        let mut args = args;
        let mut launch_allocs: Vec<u64> = Vec::new();
        if let Some(env) = Self::launch_environment(p.k, args) {
            let buffer = self.alloc(device, env.reduction_buffer_bytes().max(1), AllocKind::Default)?;
            launch_allocs.push(buffer);
            let kle_ptr = self.alloc(device, size_of::<KernelLaunchEnvironment>() as u64, AllocKind::Default);
            let kle_ptr = match kle_ptr {
                Ok(p) => p,
                Err(e) => {
                    let _ = self.free(device, buffer, AllocKind::Default);
                    return Err(e);
                }
            };
            launch_allocs.push(kle_ptr);
            let kle = KernelLaunchEnvironment { reduction_buffer: buffer, ..Default::default() };
            Self::kle_info(device, &kle, kle_ptr);
            // SAFETY: `kle` is a live 16-byte value for the call.
            let r = unsafe { self.host_transfer(device, kle_ptr, (&kle as *const KernelLaunchEnvironment) as usize, 16, true) };
            if let Err(e) = r {
                for p in launch_allocs {
                    let _ = self.free(device, p, AllocKind::Default);
                }
                return Err(e);
            }
            owned_args = args.to_vec();
            owned_args[0] = kle_ptr;
            args = &owned_args;
        }
        let r = self.dispatch_and_wait(st, device, dev, p, name, args);
        for p in launch_allocs {
            let _ = self.free(device, p, AllocKind::Default);
        }
        r
    }

    /// The kernel environment when this launch needs a launch environment
    /// (team reductions, and the runtime passed ~0 as the implicit argument).
    fn launch_environment(k: &AmdKernel, args: &[u64]) -> Option<KernelEnvironment> {
        k.env.filter(|e| e.needs_launch_environment() && args.first() == Some(&u64::MAX))
    }

    fn kle_info(device: usize, kle: &KernelLaunchEnvironment, kle_ptr: u64) {
        diag::plugin_info(info::DATA_TRANSFER, device, || {
            format!(
                "Copying data from host to device, HstPtr={}, TgtPtr={}, Size=16, Name=KernelLaunchEnv",
                diag::ptr(kle as *const _ as u64),
                diag::ptr(kle_ptr)
            )
        });
    }

    /// A kernarg buffer filled for the launch (owned by the caller).
    fn kernarg_buffer(st: &State, p: &PreparedLaunch, name: &str, args: &[u64]) -> Result<u64> {
        let geometry = kernargs::Geometry { blocks: p.l.blocks, threads: p.l.threads, dynamic_lds: p.dyn_cgroup_mem };
        let bytes = kernargs::build(name, p.k.kernarg_size, p.k.meta.as_ref(), args, &geometry)?;
        let hp = Self::host(st)?;
        let alloc = PoolAlloc { hsa: st.hsa, pool: hp.kernarg.0, agents: &hp.kernarg.1 };
        let kernarg = st.kernarg_cache.alloc((bytes.len() as u64).max(64), &alloc)?;
        // SAFETY: `kernarg` is a host-accessible kernarg-pool buffer of at least `bytes.len()` bytes that no dispatch is using.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), kernarg as usize as *mut u8, bytes.len()) };
        crate::debug!(
            "amdgpu: launching {name}: grid {:?} workgroup {:?} ({} work-items), {} kernarg bytes at {kernarg:#x}",
            p.l.blocks,
            p.l.threads,
            p.grid_size.iter().map(|&g| u64::from(g)).product::<u64>(),
            bytes.len()
        );
        Ok(kernarg)
    }

    /// Returns a kernarg buffer to its cache.
    fn free_kernarg(st: &State, kernarg: u64) -> Result<()> {
        let hp = Self::host(st)?;
        st.kernarg_cache.free(kernarg, &PoolAlloc { hsa: st.hsa, pool: hp.kernarg.0, agents: &hp.kernarg.1 })
    }

    /// The AQL dispatch packet of a prepared launch.
    fn dispatch_packet(p: &PreparedLaunch, kernarg: u64, signal: HsaSignal) -> KernelDispatchPacket {
        let k = p.k;
        let setup = kernargs::grid_dims(p.l.blocks, p.l.threads) << consts::DISPATCH_SETUP_DIMENSIONS;
        let header = (consts::PACKET_TYPE_KERNEL_DISPATCH << consts::PACKET_HEADER_TYPE)
            | (consts::FENCE_SCOPE_SYSTEM << consts::PACKET_HEADER_ACQUIRE_FENCE_SCOPE)
            | (consts::FENCE_SCOPE_SYSTEM << consts::PACKET_HEADER_RELEASE_FENCE_SCOPE);
        KernelDispatchPacket {
            header,
            setup,
            workgroup_size_x: p.l.threads[0] as u16,
            workgroup_size_y: p.l.threads[1] as u16,
            workgroup_size_z: p.l.threads[2] as u16,
            reserved0: 0,
            grid_size_x: p.grid_size[0],
            grid_size_y: p.grid_size[1],
            grid_size_z: p.grid_size[2],
            // Reference (pushKernelLaunch): the stack size for kernels with a dynamic call stack.
            private_segment_size: if k.dynamic_stack { k.private_size.max(config().stack_size) } else { k.private_size },
            group_segment_size: k.group_size.saturating_add(p.dyn_shared),
            kernel_object: k.kernel_object,
            kernarg_address: kernarg,
            reserved2: 0,
            completion_signal: signal,
        }
    }

    /// Fills a kernarg buffer, writes the AQL packet and waits for completion.
    fn dispatch_and_wait(&self, st: &State, device: usize, dev: &DeviceInfo, p: &PreparedLaunch, name: &str, args: &[u64]) -> Result<()> {
        let kernarg = Self::kernarg_buffer(st, p, name, args)?;
        let result = (|| {
            let q = Self::queue(st, device, dev)?;
            let signal = Self::take_signal(st, dev)?;
            q.errors.last_kernel.store((p.k as *const AmdKernel).cast_mut(), Ordering::Release);
            Self::dispatch(st, q, &Self::dispatch_packet(p, kernarg, signal));
            Self::wait(st, signal, Some(q.errors), &|| format!("kernel '{name}'"))?;
            dev.signals.lock().push(signal);
            Ok(())
        })();
        // A buffer of a failed dispatch may still be read by the device: keep it.
        if result.is_ok() {
            Self::free_kernarg(st, kernarg)?;
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_reasons_as_llvm() {
        assert_eq!(fault_reasons(1), "Page not present or supervisor privilege");
        assert_eq!(fault_reasons(0x3), "Page not present or supervisor privilege, Write access to a read-only page");
        assert_eq!(fault_reasons(0), "Unknown (0)");
    }

    #[test]
    fn fault_report_as_llvm() {
        let rec = FaultRecord { devices: vec![(0x2000, 1)], traces: vec![Mutex::new(VecDeque::new())], ..Default::default() };
        let ev = hsa::HsaAmdEvent { event_type: 0, agent: HsaAgent { handle: 0x2000 }, virtual_address: 0xdead000, fault_reason_mask: 1 };
        let tail = "OFFLOAD ERROR: memory access fault by GPU 1 (agent 0x2000) at virtual address 0xdead000. Reasons: Page not present or \
                    supervisor privilege\nUse 'OFFLOAD_TRACK_ALLOCATION_TRACES=true' to track device allocations\n";
        assert_eq!(fault_report(&rec, &ev), format!("No kernel launches known\n{tail}"));
        rec.record_launch(0, "saxpy");
        assert_eq!(fault_report(&rec, &ev), format!("Display only launched kernel:\nKernel 'saxpy'\n{tail}"));
        for k in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            rec.record_launch(0, k);
        }
        let r = fault_report(&rec, &ev);
        assert!(r.starts_with("Display last 8 kernels launched:\nKernel 0: 'h'\n"), "{r}");
        assert!(r.contains("Kernel 7: 'a'\nUse 'OFFLOAD_TRACK_NUM_KERNEL_LAUNCH_TRACES=<num>'") && !r.contains("saxpy"), "{r}");
    }

    #[test]
    fn kernel_names_prettified_as_llvm() {
        assert_eq!(
            pretty_kernel_name("__omp_offloading_34_4474430_main_l19"),
            "omp target in main @ 19 (__omp_offloading_34_4474430_main_l19)"
        );
        assert_eq!(
            pretty_kernel_name("__omp_offloading_10302_a1b2c_foo_bar_l7_1"),
            "omp target in foo_bar @ 7 (__omp_offloading_10302_a1b2c_foo_bar_l7_1)"
        );
        assert_eq!(pretty_kernel_name("saxpy"), "saxpy");
        assert_eq!(pretty_kernel_name("__omp_offloading_1_2_main"), "__omp_offloading_1_2_main");
        assert_eq!(pretty_kernel_name("f.internalized"), "f (internalized)");
    }

    #[test]
    fn plugin_creation_touches_nothing() {
        let p = AmdgpuPlugin::default();
        assert_eq!(p.name(), "amdgpu");
        assert!(!p.eager_init());
        assert!(!p.is_compatible(b"\x7fELF"));
        assert!(!p.is_compatible(b""));
    }
}
