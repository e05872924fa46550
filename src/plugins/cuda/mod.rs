//! The CUDA plugin (abi-reference §10.3): NVIDIA GPUs through the driver API
//! of `libcuda.so.1`, opened at run time (no build-time CUDA dependency).
//!
//! Cost model: nothing here touches the driver until the runtime asks for the
//! number of devices, which it only does once a registered image passed
//! [`image::identify`] (pure byte inspection). `__tgt_init_all_rtls` skips
//! this plugin ([`Plugin::eager_init`] is false). A missing library, a missing
//! required symbol or a failing `cuInit` gives zero devices and one debug line.
//!
//! Per device: the primary context, retained on first use (not at
//! registration) and made current before every driver call (a thread may
//! have switched contexts through the CUDA runtime in between); a pool of
//! non-blocking streams and one of events; a caching allocator for small
//! device allocations. The synchronous trait methods enqueue on a stream taken
//! from the pool and synchronise it before returning; the asynchronous ones
//! (`queue.rs`) enqueue on the stream of a runtime queue and leave the waiting
//! to `queue_synchronize`/`queue_query`.
//!
//! Handles given to the runtime are indices: [`ImageHandle`] into the loaded
//! modules, [`KernelHandle`] into the resolved kernels; queues and events are
//! generation-checked slab keys. Modules are unloaded, after their device
//! destructors ran, only when the runtime shuts down (`unload_binary`).

pub mod driver;
pub mod fatbin;
pub mod image;
mod queue;
mod timing;

use super::{AllocKind, EventHandle, ImageHandle, KernelHandle, LaunchDims, Plugin, QueueHandle};
use crate::base::config::{info, parse_bool, parse_int};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::plugins::gpu::grid::{self, GridLimits, KernelGrid};
use crate::plugins::gpu::memory::{self, MemoryPool, RawAllocator};
use core::ffi::{c_char, c_int, c_uint, c_void};
use driver::{CUcontext, CUdevice, CUdeviceptr, CUevent, CUresult, CUstream, CudaDriver, attr};
use image::{ComputeCapability, CudaImage, CudaImageKind, KernelEnvironment};
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{LazyLock, OnceLock};

/// A driver handle (context, module, function, stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Handle(*mut c_void);
// Driver handles are process-wide identifiers the driver API accepts from
// any thread (with the owning context current, which every use arranges).
// SAFETY: this crate never dereferences the handle, only passes it to the driver.
unsafe impl Send for Handle {}
// SAFETY: as above; shared references only copy the identifier.
unsafe impl Sync for Handle {}

/// Settings read once from the environment (abi-reference §8.3).
#[derive(Debug, Clone)]
pub struct CudaConfig {
    /// `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` (8 KiB; 0 disables the pool).
    pub memory_manager_threshold: u64,
    /// `LIBOMPTARGET_SHARED_MEMORY_SIZE`: minimum dynamic shared memory per team.
    pub shared_memory_size: u32,
    /// `LIBOMPTARGET_DEVICE_RTL_DEBUG`.
    pub device_rtl_debug: u32,
    /// `LIBOMPTARGET_HEAP_SIZE` / `LIBOMPTARGET_STACK_SIZE` (unset: driver default).
    pub heap_size: Option<u64>,
    pub stack_size: Option<u64>,
    /// `LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT` (32).
    pub min_threads_low_trip: u32,
    /// `LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT` (true).
    pub reuse_blocks_for_high_trip: bool,
    /// `OMP_NUM_TEAMS` / `OMP_TEAMS_THREAD_LIMIT` (≤ 0: unset).
    pub omp_num_teams: i64,
    pub omp_teams_thread_limit: i64,
}

impl CudaConfig {
    fn from_env() -> Self {
        let int = |n: &str| std::env::var(n).ok().and_then(|v| parse_int(&v));
        let non_negative = |n: &str| int(n).and_then(|v| u64::try_from(v).ok());
        let u32_or = |n: &str, d: u32| non_negative(n).map(|v| u32::try_from(v).unwrap_or(u32::MAX)).unwrap_or(d);
        CudaConfig {
            memory_manager_threshold: non_negative("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD").unwrap_or(memory::DEFAULT_THRESHOLD),
            shared_memory_size: u32_or("LIBOMPTARGET_SHARED_MEMORY_SIZE", 0),
            device_rtl_debug: u32_or("LIBOMPTARGET_DEVICE_RTL_DEBUG", 0),
            heap_size: non_negative("LIBOMPTARGET_HEAP_SIZE"),
            stack_size: non_negative("LIBOMPTARGET_STACK_SIZE"),
            min_threads_low_trip: u32_or("LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT", 32),
            reuse_blocks_for_high_trip: parse_bool(std::env::var("LIBOMPTARGET_REUSE_BLOCKS_FOR_HIGH_TRIP_COUNT").ok().as_deref(), true),
            omp_num_teams: int("OMP_NUM_TEAMS").unwrap_or(0),
            omp_teams_thread_limit: int("OMP_TEAMS_THREAD_LIMIT").unwrap_or(0),
        }
    }
}

static CONFIG: LazyLock<CudaConfig> = LazyLock::new(CudaConfig::from_env);

/// The plugin's settings, read on first use.
pub fn config() -> &'static CudaConfig {
    &CONFIG
}

pub use crate::plugins::gpu::{DEVICE_ENVIRONMENT_SYMBOL, DeviceEnvironment};

/// The kernel LLVM's nvptx-lower-ctor-dtor pass emits to run constructors.
pub const GLOBAL_CTOR_KERNEL: &str = "nvptx$device$init";
/// ... and the one that runs destructors.
pub const GLOBAL_DTOR_KERNEL: &str = "nvptx$device$fini";
/// CUDA's `getClockFrequency()` in LLVM 22.1.
const CLOCK_FREQUENCY: u64 = 1_000_000_000;

/// `KernelLaunchEnvironmentTy` (22.1, 16 bytes; abi-reference §7.4).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct KernelLaunchEnvironment {
    reduction_cnt: u32,
    reduction_iter_cnt: u32,
    reduction_buffer: u64,
}
const _: () = assert!(size_of::<KernelLaunchEnvironment>() == 16);

/// What the plugin knows about a device without a context.
struct DeviceInfo {
    ordinal: c_int,
    dev: CUdevice,
    cc: ComputeCapability,
    name: String,
    grid: GridLimits,
    sm_count: u32,
    max_threads_per_sm: u32,
    total_mem: u64,
    uuid: Option<[u8; 16]>,
    ctx: OnceLock<Result<DeviceCtx>>,
}

impl DeviceInfo {
    /// `getHardwareParallelism()`: SMs × warps per SM.
    fn hardware_parallelism(&self) -> u64 {
        u64::from(self.sm_count) * u64::from(self.max_threads_per_sm / self.grid.warp_size.max(1))
    }
}

/// A device's retained primary context and what lives in it.
struct DeviceCtx {
    ctx: Handle,
    streams: Mutex<Vec<Handle>>,
    /// Idle events (created with `CU_EVENT_DISABLE_TIMING`).
    events: Mutex<Vec<Handle>>,
    /// Peer access to other devices (by index), once decided.
    peers: Mutex<HashMap<usize, bool>>,
    pool: MemoryPool,
    /// Pinned host allocations (`AllocKind::Host`), freed with `cuMemFreeHost`
    /// whatever kind the caller names.
    pinned: Mutex<HashSet<u64>>,
    /// OMPT device tracing: the device clock's events, made at first use.
    clock: Mutex<Option<Clock>>,
    /// LIBOMPTARGET_PROFILE: timing events and reference points (timing.rs).
    profile: Mutex<Option<timing::ProfileClock>>,
}

/// The device clock (OMPT device tracing): `base_ns` is the host's
/// monotonic time when `base` was reached; a reading records `probe` on the
/// context's default stream, waits for it and adds the events' elapsed time.
/// The base moves forward every second, which keeps `cuEventElapsedTime`'s
/// single-precision milliseconds at sub-microsecond resolution.
struct Clock {
    base: Handle,
    probe: Handle,
    base_ns: u64,
}

/// The initialised plugin: the driver and its devices.
struct State {
    driver: &'static CudaDriver,
    driver_version: c_int,
    devices: Vec<DeviceInfo>,
}

/// A loaded image.
struct LoadedModule {
    device: usize,
    module: Handle,
    kind: CudaImageKind,
    /// Kernel environments read from the cubin (PTX: read from the device).
    envs: HashMap<String, KernelEnvironment>,
    /// The `__fini_array_object_*` symbols in priority order, when the image
    /// had `nvptx$device$fini` at load (22.1 decides then, too).
    dtors: Option<Vec<String>>,
    /// Set by `unload_binary`: the module and its kernels are gone.
    unloaded: AtomicBool,
}

/// A resolved kernel.
struct CudaKernel {
    device: usize,
    module: &'static LoadedModule,
    func: Handle,
    env: Option<KernelEnvironment>,
    grid: KernelGrid,
    /// Bytes of the kernel's parameters (from `cuFuncGetParamInfo`).
    param_bytes: Option<u64>,
    /// Current `MAX_DYNAMIC_SHARED_SIZE_BYTES` of the function.
    dyn_shared_limit: AtomicU32,
}

/// The default per-function dynamic shared memory limit.
const DEFAULT_DYN_SHARED_LIMIT: u32 = 48 * 1024;

/// The CUDA plugin.
#[derive(Default)]
pub struct CudaPlugin {
    state: OnceLock<Result<State>>,
    modules: RwLock<Vec<&'static LoadedModule>>,
    kernels: RwLock<Vec<&'static CudaKernel>>,
    queues: Mutex<queue::Slab<queue::Queue>>,
    events: Mutex<queue::Slab<queue::EventState>>,
    /// LIBOMPTARGET_PROFILE: timed spans in flight (timing.rs).
    timings: Mutex<queue::Slab<timing::Timing>>,
}

/// Device memory through the driver, for the pool.
struct DriverAlloc<'a>(&'a CudaDriver);

impl RawAllocator for DriverAlloc<'_> {
    fn raw_alloc(&self, size: u64) -> Result<u64> {
        let mut p: CUdeviceptr = 0;
        let bytes = usize::try_from(size).map_err(|_| OffloadError::OutOfDeviceMemory { bytes: size })?;
        // SAFETY: `p` is a valid out-pointer; the caller made the context current.
        let rc = unsafe { (self.0.cuMemAlloc_v2)(&mut p, bytes) };
        alloc_result(self.0, rc, "cuMemAlloc", size).map(|_| p)
    }
    fn raw_free(&self, ptr: u64) -> Result<()> {
        // SAFETY: `ptr` came from cuMemAlloc_v2 and is freed once (pool invariant).
        let rc = unsafe { (self.0.cuMemFree_v2)(ptr) };
        self.0.check(rc, "cuMemFree")
    }
}

fn alloc_result(d: &CudaDriver, rc: CUresult, call: &'static str, size: u64) -> Result<()> {
    match rc {
        CUresult::SUCCESS => Ok(()),
        CUresult::ERROR_OUT_OF_MEMORY => Err(OffloadError::OutOfDeviceMemory { bytes: size }),
        _ => Err(d.error(rc, call)),
    }
}

fn cstring(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| OffloadError::InvalidArgument(format!("symbol name '{name}' contains NUL")))
}

fn init_state() -> Result<State> {
    let driver = driver::get().map_err(Clone::clone)?;
    // SAFETY: cuInit takes flags by value; 0 is the only valid value.
    let rc = unsafe { (driver.cuInit)(0) };
    if rc != CUresult::SUCCESS {
        // "Why no device" names the failure: `CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected (CUDA error 100)`.
        let text = driver.describe(rc);
        let message = driver.name(rc).map_or_else(|| text.clone(), |n| format!("{n}: {text}"));
        return Err(OffloadError::Driver { plugin: "cuda", call: "cuInit", message });
    }
    let mut driver_version: c_int = 0;
    if let Some(f) = driver.cuDriverGetVersion {
        // SAFETY: valid out-pointer.
        let _ = unsafe { f(&mut driver_version) };
    }
    let mut count: c_int = 0;
    // SAFETY: valid out-pointer.
    driver.check(unsafe { (driver.cuDeviceGetCount)(&mut count) }, "cuDeviceGetCount")?;
    let cfg = config();
    let mut devices = Vec::new();
    for ordinal in 0..count.max(0) {
        let mut dev: CUdevice = 0;
        // SAFETY: valid out-pointer; ordinal < count.
        driver.check(unsafe { (driver.cuDeviceGet)(&mut dev, ordinal) }, "cuDeviceGet")?;
        let get = |a: c_int| -> Result<u32> {
            let mut v: c_int = 0;
            // SAFETY: valid out-pointer and device handle.
            driver.check(unsafe { (driver.cuDeviceGetAttribute)(&mut v, a, dev) }, "cuDeviceGetAttribute")?;
            Ok(u32::try_from(v).unwrap_or(0))
        };
        let cc = ComputeCapability { major: get(attr::COMPUTE_CAPABILITY_MAJOR)?, minor: get(attr::COMPUTE_CAPABILITY_MINOR)? };
        let mut grid = GridLimits::new(
            get(attr::WARP_SIZE)?.max(1),
            get(attr::MAX_BLOCK_DIM_X)?,
            get(attr::MAX_GRID_DIM_X)?,
            cfg.omp_num_teams,
            cfg.omp_teams_thread_limit,
        );
        grid.min_threads_low_trip = cfg.min_threads_low_trip;
        grid.reuse_blocks_for_high_trip = cfg.reuse_blocks_for_high_trip;
        let mut name = String::from("unknown NVIDIA device");
        if let Some(f) = driver.cuDeviceGetName {
            let mut buf = [0 as c_char; 256];
            // SAFETY: `buf` holds 256 bytes and its length is passed.
            if unsafe { f(buf.as_mut_ptr(), buf.len() as c_int, dev) } == CUresult::SUCCESS {
                // SAFETY: the driver NUL-terminates within the buffer; the last byte is still 0.
                name = unsafe { core::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
            }
        }
        let mut total_mem: usize = 0;
        if let Some(f) = driver.cuDeviceTotalMem_v2 {
            // SAFETY: valid out-pointer and device.
            let _ = unsafe { f(&mut total_mem, dev) };
        }
        let uuid = driver.cuDeviceGetUuid.and_then(|f| {
            let mut u = [0u8; 16];
            // SAFETY: `u` is the 16-byte CUuuid the call fills.
            (unsafe { f(&mut u, dev) } == CUresult::SUCCESS).then_some(u)
        });
        let info = DeviceInfo {
            ordinal,
            dev,
            cc,
            name,
            grid,
            sm_count: get(attr::MULTIPROCESSOR_COUNT)?,
            max_threads_per_sm: get(attr::MAX_THREADS_PER_MULTIPROCESSOR)?,
            total_mem: total_mem as u64,
            uuid,
            ctx: OnceLock::new(),
        };
        crate::debug!("cuda: device {ordinal}: {} {}, {} SMs", info.name, info.cc, info.sm_count);
        devices.push(info);
    }
    Ok(State { driver, driver_version, devices })
}

impl CudaPlugin {
    /// The driver and devices, initialised on first call (the outcome is cached).
    fn state(&self) -> Result<&State> {
        self.state
            .get_or_init(|| {
                let s = init_state();
                match &s {
                    Ok(st) => {
                        crate::debug!("cuda: driver {} (version {}), {} devices", st.driver.path, st.driver_version, st.devices.len())
                    }
                    Err(e) => crate::debug!("cuda: plugin unavailable, 0 CUDA devices: {e}"),
                }
                s
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn device(&self, device: usize) -> Result<(&State, &DeviceInfo)> {
        let st = self.state()?;
        let dev = st.devices.get(device).ok_or_else(|| OffloadError::Internal(format!("cuda: no device {device}")))?;
        Ok((st, dev))
    }

    /// The device with its context current on this thread.
    fn active(&self, device: usize) -> Result<(&CudaDriver, &DeviceInfo, &DeviceCtx)> {
        let (st, dev) = self.device(device)?;
        let ctx = dev.ctx.get_or_init(|| retain_context(st.driver, device, dev)).as_ref().map_err(Clone::clone)?;
        // Reference (CUDADeviceTy::setContext): before every driver operation.
        // SAFETY: `ctx` is a retained primary context, never released.
        st.driver.check(unsafe { (st.driver.cuCtxSetCurrent)(ctx.ctx.0) }, "cuCtxSetCurrent")?;
        Ok((st.driver, dev, ctx))
    }

    /// Runs `f` on a pooled stream of the device, then synchronises.
    fn on_stream<R>(&self, d: &CudaDriver, ctx: &DeviceCtx, f: impl FnOnce(CUstream) -> Result<R>) -> Result<R> {
        let stream = self.take_stream(d, ctx)?;
        let r = f(stream.0);
        // SAFETY: `stream` was created in this context and is not destroyed.
        let sync = d.check(unsafe { (d.cuStreamSynchronize)(stream.0) }, "cuStreamSynchronize");
        self.return_stream(d, ctx, stream, sync.is_err());
        let v = r?;
        sync.map(|_| v)
    }

    /// A loaded (not unloaded) image.
    fn module(&self, handle: ImageHandle) -> Result<&'static LoadedModule> {
        let m = self
            .modules
            .read()
            .get(handle)
            .copied()
            .ok_or_else(|| OffloadError::Internal(format!("cuda: unknown image handle {handle}")))?;
        if m.unloaded.load(Ordering::Acquire) {
            return Err(OffloadError::Internal(format!("cuda: image {handle} was unloaded")));
        }
        Ok(m)
    }

    /// A kernel of a loaded image.
    fn kernel(&self, handle: KernelHandle) -> Result<&'static CudaKernel> {
        let i = usize::try_from(handle).unwrap_or(usize::MAX);
        let k =
            self.kernels.read().get(i).copied().ok_or_else(|| OffloadError::Internal(format!("cuda: unknown kernel handle {handle}")))?;
        if k.module.unloaded.load(Ordering::Acquire) {
            return Err(OffloadError::Internal(format!("cuda: kernel handle {handle} belongs to an unloaded image")));
        }
        Ok(k)
    }

    /// Reads `size` bytes of a device global into a vector.
    fn read_global(&self, d: &CudaDriver, ctx: &DeviceCtx, module: Handle, name: &str, size: usize) -> Result<Option<Vec<u8>>> {
        let Some((ptr, bytes)) = get_global(d, module, name)? else { return Ok(None) };
        if bytes < size {
            return Ok(None);
        }
        let mut buf = vec![0u8; size];
        self.on_stream(d, ctx, |s| {
            // SAFETY: `buf` is a live buffer of `size` bytes, kept until the stream is synchronised.
            d.check(unsafe { (d.cuMemcpyDtoHAsync_v2)(buf.as_mut_ptr().cast(), ptr, size, s) }, "cuMemcpyDtoHAsync")
        })?;
        Ok(Some(buf))
    }

    /// Writes `__omp_rtl_device_environment` when the image has it (22.1
    /// skips the step silently when the symbol is absent or differently sized).
    fn write_device_environment(&self, d: &CudaDriver, device: usize, dev: &DeviceInfo, ctx: &DeviceCtx, module: Handle) -> Result<()> {
        let Some((ptr, bytes)) = get_global(d, module, DEVICE_ENVIRONMENT_SYMBOL)? else { return Ok(()) };
        if bytes != size_of::<DeviceEnvironment>() {
            crate::debug!("cuda: {DEVICE_ENVIRONMENT_SYMBOL} has {bytes} bytes, not 48: not written");
            return Ok(());
        }
        let cfg = config();
        let env = DeviceEnvironment {
            device_debug_kind: cfg.device_rtl_debug,
            num_devices: self.state()?.devices.len() as u32,
            device_num: device as u32,
            dynamic_mem_size: cfg.shared_memory_size,
            clock_frequency: CLOCK_FREQUENCY,
            indirect_call_table: 0,
            indirect_call_table_size: 0,
            hardware_parallelism: dev.hardware_parallelism(),
        };
        crate::debug!("cuda: device {device}: writing {env:?} to {DEVICE_ENVIRONMENT_SYMBOL} at {ptr:#x}");
        self.on_stream(d, ctx, |s| {
            // SAFETY: `env` is a live 48-byte value kept until the stream is synchronised; `ptr` is a 48-byte device global.
            d.check(unsafe { (d.cuMemcpyHtoDAsync_v2)(ptr, (&env as *const DeviceEnvironment).cast(), bytes, s) }, "cuMemcpyHtoDAsync")
        })
    }

    /// Runs the image's device global constructors at load and returns its
    /// destructors, for [`Plugin::unload_binary`] (abi-reference §7.8).
    ///
    /// Reference (CUDADeviceTy::callGlobalConstructors, 22.1): an image has
    /// destructors to run later iff it has the `nvptx$device$fini` kernel at
    /// load; constructors run now iff it has `nvptx$device$init`.
    fn run_global_constructors(
        &self,
        d: &CudaDriver,
        device: usize,
        ctx: &DeviceCtx,
        module: Handle,
        bytes: &[u8],
    ) -> Result<Option<Vec<String>>> {
        let dtors = match find_function(d, module, CtorDtor::Fini.kernel())? {
            Some(_) => Some(ctor_dtor_symbols(bytes, CtorDtor::Fini)?),
            None => None,
        };
        if let Some(init) = find_function(d, module, CtorDtor::Init.kernel())? {
            let ctors = ctor_dtor_symbols(bytes, CtorDtor::Init)?;
            self.run_ctor_dtor(d, device, ctx, module, init, &ctors, CtorDtor::Init)?;
        }
        Ok(dtors)
    }

    /// Reference (CUDADeviceTy::callGlobalCtorDtorCommon): the values of the
    /// `__{init,fini}_array_object_*` constants (device function pointers),
    /// in priority order, go into a device buffer published through
    /// `__{init,fini}_array_start/_end`; then the kernel runs once with one
    /// thread and the buffer is freed.
    #[allow(clippy::too_many_arguments)] // Two call sites; a struct would only rename the list.
    fn run_ctor_dtor(
        &self,
        d: &CudaDriver,
        device: usize,
        ctx: &DeviceCtx,
        module: Handle,
        func: *mut c_void,
        names: &[String],
        phase: CtorDtor,
    ) -> Result<()> {
        let mut pointers: Vec<u64> = Vec::with_capacity(names.len());
        for name in names {
            let value = self
                .read_global(d, ctx, module, name, 8)?
                .ok_or_else(|| OffloadError::MissingSymbol { lib: "the device image".into(), symbol: name.clone() })?;
            pointers.push(u64::from_le_bytes(value[..8].try_into().unwrap_or([0; 8])));
        }
        let size = (pointers.len() * 8) as u64;
        let alloc = DriverAlloc(d);
        let buffer = if size > 0 { ctx.pool.alloc(size, &alloc)? } else { 0 };
        let result = (|| {
            let publish = |name: &str, value: u64| -> Result<()> {
                let (ptr, _) = get_global(d, module, name)?.ok_or_else(|| OffloadError::MissingSymbol {
                    lib: "the device image".into(),
                    symbol: format!("failed to find global symbol '{name}' in the ELF image"),
                })?;
                self.on_stream(d, ctx, |s| {
                    // SAFETY: `value` lives until the stream is synchronised; `ptr` is an 8-byte global.
                    d.check(unsafe { (d.cuMemcpyHtoDAsync_v2)(ptr, (&value as *const u64).cast(), 8, s) }, "cuMemcpyHtoDAsync")
                })
            };
            if size > 0 {
                self.on_stream(d, ctx, |s| {
                    // SAFETY: `pointers` holds `size` bytes and lives until the stream is synchronised.
                    let rc = unsafe { (d.cuMemcpyHtoDAsync_v2)(buffer, pointers.as_ptr().cast(), size as usize, s) };
                    d.check(rc, "cuMemcpyHtoDAsync")
                })?;
            }
            let (start, end) = phase.bounds();
            publish(start, buffer)?;
            publish(end, buffer + size)?;
            crate::debug!("cuda: device {device}: running {} global {} with {}", names.len(), phase.what(), phase.kernel());
            self.on_stream(d, ctx, |s| {
                // SAFETY: a live kernel without parameters, launched 1x1 on a stream of its context.
                let rc = unsafe { (d.cuLaunchKernel)(func, 1, 1, 1, 1, 1, 1, 0, s, core::ptr::null_mut(), core::ptr::null_mut()) };
                d.check(rc, "cuLaunchKernel")
            })
        })();
        if size > 0 {
            let _ = ctx.pool.free(buffer, &alloc);
        }
        result
    }

    /// Whether `src` may copy to `dst` with peer copies; the first call for a
    /// pair asks the driver and enables access from `src`'s (current)
    /// context, later calls use the answer (22.1: `PeerAccesses`, one state
    /// per destination). Errors are not remembered: the next copy asks again.
    fn peer_access(&self, d: &CudaDriver, ctx: &DeviceCtx, src: (usize, CUdevice), dst: (usize, CUdevice, Handle)) -> Result<bool> {
        let mut peers = ctx.peers.lock();
        if let Some(&known) = peers.get(&dst.0) {
            return Ok(known);
        }
        let available = match (d.cuDeviceCanAccessPeer, d.cuCtxEnablePeerAccess) {
            (Some(can_access), Some(enable)) => {
                let mut can: c_int = 0;
                // SAFETY: valid out-pointer and two device handles.
                d.check(unsafe { can_access(&mut can, src.1, dst.1) }, "cuDeviceCanAccessPeer")?;
                if can == 0 {
                    false
                } else {
                    // SAFETY: `dst`'s retained primary context; `src`'s context is current.
                    match unsafe { enable(dst.2.0, 0) } {
                        // Already enabled (by the program): 22.1 would fail here.
                        CUresult::SUCCESS | CUresult::ERROR_PEER_ACCESS_ALREADY_ENABLED => true,
                        CUresult::ERROR_TOO_MANY_PEERS => {
                            crate::debug!("cuda: too many peers: device {} -> {} falls back to device-to-device copies", src.0, dst.0);
                            false
                        }
                        rc => return Err(d.error(rc, "cuCtxEnablePeerAccess")),
                    }
                }
            }
            _ => false,
        };
        crate::debug!("cuda: peer access device {} -> {}: {}", src.0, dst.0, if available { "enabled" } else { "unavailable" });
        peers.insert(dst.0, available);
        Ok(available)
    }

    /// Makes sure the function accepts `bytes` of dynamic shared memory.
    fn ensure_dyn_shared(&self, d: &CudaDriver, k: &CudaKernel, bytes: u32) -> Result<()> {
        if bytes <= k.dyn_shared_limit.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(f) = d.cuFuncSetAttribute else {
            return Err(OffloadError::PluginUnavailable {
                plugin: "cuda",
                reason: "cuFuncSetAttribute is missing: cannot raise the dynamic shared memory limit".into(),
            });
        };
        // SAFETY: `k.func` is a live function handle; the attribute takes an int.
        let rc = unsafe { f(k.func.0, driver::func_attr::MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as c_int) };
        if rc != CUresult::SUCCESS {
            return Err(OffloadError::Driver {
                plugin: "cuda",
                call: "cuFuncSetAttribute while setting the memory limits",
                message: d.describe(rc),
            });
        }
        k.dyn_shared_limit.fetch_max(bytes, Ordering::Relaxed);
        Ok(())
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

    /// Compute capability of a device (initialises the driver).
    pub fn compute_capability(&self, device: usize) -> Result<ComputeCapability> {
        Ok(self.device(device)?.1.cc)
    }
}

/// `cuModuleGetGlobal`: `None` when the module has no such symbol.
fn get_global(d: &CudaDriver, module: Handle, name: &str) -> Result<Option<(CUdeviceptr, usize)>> {
    let c = cstring(name)?;
    let (mut ptr, mut bytes): (CUdeviceptr, usize) = (0, 0);
    // SAFETY: valid out-pointers, a live module and a NUL-terminated name.
    let rc = unsafe { (d.cuModuleGetGlobal_v2)(&mut ptr, &mut bytes, module.0, c.as_ptr()) };
    match rc {
        CUresult::SUCCESS => Ok(Some((ptr, bytes))),
        CUresult::ERROR_NOT_FOUND => Ok(None),
        _ => Err(d.error(rc, "cuModuleGetGlobal")),
    }
}

/// `cuModuleGetFunction`: `None` when the module has no such kernel.
fn find_function(d: &CudaDriver, module: Handle, name: &str) -> Result<Option<*mut c_void>> {
    let c = cstring(name)?;
    let mut func: *mut c_void = core::ptr::null_mut();
    // SAFETY: valid out-pointer, live module, NUL-terminated name.
    match unsafe { (d.cuModuleGetFunction)(&mut func, module.0, c.as_ptr()) } {
        CUresult::SUCCESS => Ok(Some(func)),
        CUresult::ERROR_NOT_FOUND => Ok(None),
        rc => Err(d.error(rc, "cuModuleGetFunction")),
    }
}

/// The constructor and destructor arrays of LLVM's nvptx-lower-ctor-dtor pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CtorDtor {
    Init,
    Fini,
}

impl CtorDtor {
    fn kernel(self) -> &'static str {
        match self {
            CtorDtor::Init => GLOBAL_CTOR_KERNEL,
            CtorDtor::Fini => GLOBAL_DTOR_KERNEL,
        }
    }
    fn prefix(self) -> &'static str {
        match self {
            CtorDtor::Init => "__init_array_object_",
            CtorDtor::Fini => "__fini_array_object_",
        }
    }
    fn bounds(self) -> (&'static str, &'static str) {
        match self {
            CtorDtor::Init => ("__init_array_start", "__init_array_end"),
            CtorDtor::Fini => ("__fini_array_start", "__fini_array_end"),
        }
    }
    fn what(self) -> &'static str {
        match self {
            CtorDtor::Init => "constructors",
            CtorDtor::Fini => "destructors",
        }
    }
}

/// The image's `<prefix><name>_<id>_<priority>` symbols, by ascending
/// priority (22.1 sorts constructors and destructors alike; the fini kernel
/// walks its array backwards).
fn ctor_dtor_symbols(bytes: &[u8], phase: CtorDtor) -> Result<Vec<String>> {
    let mut found: Vec<(u16, String)> = Vec::new();
    for (name, _) in image::symbols(bytes)?.globals {
        if !name.starts_with(phase.prefix()) {
            continue;
        }
        let priority = name
            .rsplit('_')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| OffloadError::BadImage(format!("invalid priority for constructor or destructor '{name}'")))?;
        found.push((priority, name));
    }
    found.sort_by_key(|c| c.0);
    Ok(found.into_iter().map(|(_, n)| n).collect())
}

/// Retains a device's primary context the way LLVM 22.1 does.
fn retain_context(d: &CudaDriver, device: usize, dev: &DeviceInfo) -> Result<DeviceCtx> {
    let kernel_info = |text: &str| diag::plugin_info(info::PLUGIN_KERNEL, device, || text.to_string());
    if let Some(get_state) = d.cuDevicePrimaryCtxGetState {
        let (mut flags, mut active): (c_uint, c_int) = (0, 0);
        // SAFETY: valid out-pointers and device.
        d.check(unsafe { get_state(dev.dev, &mut flags, &mut active) }, "cuDevicePrimaryCtxGetState")?;
        if active == 0 {
            kernel_info("The primary context is inactive, set its flags to CU_CTX_SCHED_BLOCKING_SYNC");
            if let Some(set_flags) = d.cuDevicePrimaryCtxSetFlags_v2 {
                // SAFETY: valid device and flag value.
                d.check(unsafe { set_flags(dev.dev, driver::CU_CTX_SCHED_BLOCKING_SYNC) }, "cuDevicePrimaryCtxSetFlags")?;
            }
        } else {
            kernel_info("The primary context is active, no change to its flags");
            if flags & driver::CU_CTX_SCHED_MASK != driver::CU_CTX_SCHED_BLOCKING_SYNC {
                kernel_info("Warning: The current flags are not CU_CTX_SCHED_BLOCKING_SYNC");
            }
        }
    }
    let mut ctx: CUcontext = core::ptr::null_mut();
    // SAFETY: valid out-pointer and device; the context is never released (it lives until process exit, as the plugin's devices do).
    d.check(unsafe { (d.cuDevicePrimaryCtxRetain)(&mut ctx, dev.dev) }, "cuDevicePrimaryCtxRetain")?;
    // SAFETY: `ctx` was just retained.
    d.check(unsafe { (d.cuCtxSetCurrent)(ctx) }, "cuCtxSetCurrent")?;
    let cfg = config();
    for (limit, value, what) in [
        (driver::CU_LIMIT_MALLOC_HEAP_SIZE, cfg.heap_size, "LIBOMPTARGET_HEAP_SIZE"),
        (driver::CU_LIMIT_STACK_SIZE, cfg.stack_size, "LIBOMPTARGET_STACK_SIZE"),
    ] {
        let Some(v) = value else { continue };
        let Some(set) = d.cuCtxSetLimit else {
            crate::debug!("cuda: {what} ignored: the driver has no cuCtxSetLimit");
            continue;
        };
        // SAFETY: a valid limit enum and value for the current context.
        d.check(unsafe { set(limit, usize::try_from(v).unwrap_or(usize::MAX)) }, "cuCtxSetLimit")?;
    }
    crate::debug!("cuda: device {device} (ordinal {}): primary context {ctx:p} retained", dev.ordinal);
    Ok(DeviceCtx {
        ctx: Handle(ctx),
        streams: Mutex::new(Vec::new()),
        events: Mutex::new(Vec::new()),
        peers: Mutex::new(HashMap::new()),
        pool: MemoryPool::new(cfg.memory_manager_threshold),
        pinned: Mutex::new(HashSet::new()),
        clock: Mutex::new(None),
        profile: Mutex::new(None),
    })
}

/// Reads the device clock of `ctx` (its context is current), in ns.
fn read_clock(d: &CudaDriver, ctx: &DeviceCtx) -> Result<u64> {
    let missing = || OffloadError::PluginUnavailable { plugin: "cuda", reason: "the driver has no event timing calls".into() };
    let (Some(create), Some(record), Some(sync), Some(elapsed)) =
        (d.cuEventCreate, d.cuEventRecord, d.cuEventSynchronize, d.cuEventElapsedTime)
    else {
        return Err(missing());
    };
    let mark = |e: Handle| -> Result<()> {
        // SAFETY: an event of this context, recorded on the context's default stream, then waited for.
        d.check(unsafe { record(e.0, core::ptr::null_mut()) }, "cuEventRecord")?;
        // SAFETY: as above.
        d.check(unsafe { sync(e.0) }, "cuEventSynchronize")
    };
    let mut g = ctx.clock.lock();
    if g.is_none() {
        let (mut base, mut probe): (CUevent, CUevent) = (core::ptr::null_mut(), core::ptr::null_mut());
        // SAFETY: valid out-pointers; flags 0: events with timing (kept for the context's life).
        d.check(unsafe { create(&mut base, 0) }, "cuEventCreate")?;
        // SAFETY: as above.
        d.check(unsafe { create(&mut probe, 0) }, "cuEventCreate")?;
        mark(Handle(base))?;
        *g = Some(Clock { base: Handle(base), probe: Handle(probe), base_ns: crate::base::clock::monotonic_ns() });
    }
    let c = g.as_mut().ok_or_else(missing)?;
    mark(c.probe)?;
    let mut ms = 0f32;
    // SAFETY: two recorded, completed events of this context.
    d.check(unsafe { elapsed(&mut ms, c.base.0, c.probe.0) }, "cuEventElapsedTime")?;
    let now = c.base_ns + (f64::from(ms.max(0.0)) * 1e6) as u64;
    if ms > 1000.0 {
        // The probe becomes the base; the old base is the next probe.
        (c.base, c.probe, c.base_ns) = (c.probe, c.base, now);
    }
    Ok(now)
}

/// Size of the JIT error/info log buffers.
const JIT_LOG_BYTES: usize = 16 * 1024;

/// `cuModuleLoadDataEx` with the JIT error log captured into the error.
fn load_module(d: &CudaDriver, bytes: &[u8], kind: CudaImageKind) -> Result<Handle> {
    // PTX must be NUL-terminated; a cubin is read by its ELF headers.
    let ptx_copy;
    let data: *const c_void = if kind == CudaImageKind::Ptx && bytes.last() != Some(&0) {
        ptx_copy = [bytes, &[0u8]].concat();
        ptx_copy.as_ptr().cast()
    } else {
        bytes.as_ptr().cast()
    };
    let mut error_log = vec![0u8; JIT_LOG_BYTES];
    let mut info_log = vec![0u8; JIT_LOG_BYTES];
    let mut options: [c_uint; 4] = [
        driver::jit::ERROR_LOG_BUFFER,
        driver::jit::ERROR_LOG_BUFFER_SIZE_BYTES,
        driver::jit::INFO_LOG_BUFFER,
        driver::jit::INFO_LOG_BUFFER_SIZE_BYTES,
    ];
    // Option values are passed as pointer-sized words (sizes by value).
    let mut values: [*mut c_void; 4] =
        [error_log.as_mut_ptr().cast(), JIT_LOG_BYTES as *mut c_void, info_log.as_mut_ptr().cast(), JIT_LOG_BYTES as *mut c_void];
    let mut module: *mut c_void = core::ptr::null_mut();
    // SAFETY: `data` is a whole image (PTX NUL-terminated) alive for the call; log buffers sized as passed; 4 options.
    let rc = unsafe { (d.cuModuleLoadDataEx)(&mut module, data, options.len() as c_uint, options.as_mut_ptr(), values.as_mut_ptr()) };
    let text = |buf: &[u8]| {
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).trim().to_string()
    };
    let (err_text, info_text) = (text(&error_log), text(&info_log));
    if !info_text.is_empty() {
        crate::debug!("cuda: JIT info log: {info_text}");
    }
    if rc != CUresult::SUCCESS {
        let mut message = d.describe(rc);
        if !err_text.is_empty() {
            message.push_str(&format!("; JIT error log: {err_text}"));
        }
        return Err(OffloadError::Driver { plugin: "cuda", call: "cuModuleLoadDataEx", message });
    }
    Ok(Handle(module))
}

impl Plugin for CudaPlugin {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn eager_init(&self) -> bool {
        // `__tgt_init_all_rtls` must not load libcuda for programs without CUDA images.
        false
    }

    fn is_compatible(&self, image: &[u8]) -> bool {
        match image::identify(image) {
            Ok(img) => {
                crate::debug!("cuda: image is a {img}");
                true
            }
            Err(_) if fatbin::is_fatbin(image) => match fatbin::parse(image) {
                Ok(entries) => {
                    let list: Vec<String> = entries.iter().map(|e| e.describe()).collect();
                    crate::debug!("cuda: image is a fatbinary of {}", list.join(", "));
                    true
                }
                Err(e) => {
                    crate::debug!("cuda: {e}");
                    false
                }
            },
            Err(_) => false,
        }
    }

    fn number_of_devices(&self) -> usize {
        self.state().map(|s| s.devices.len()).unwrap_or(0)
    }

    fn traceable(&self) -> bool {
        true
    }

    /// 22.1's `getComputeUnitKind`: `sm_NN` (OMPT's `device_initialize` type).
    fn compute_unit_kind(&self, device: usize) -> String {
        self.device(device).map_or_else(|_| "unknown".into(), |(_, d)| format!("sm_{}", d.cc.sm()))
    }

    fn device_clock(&self, device: usize) -> Option<u64> {
        let (d, _, ctx) = self.active(device).ok()?;
        read_clock(d, ctx).inspect_err(|e| crate::debug!("cuda: device {device}: no device clock: {e}")).ok()
    }

    fn timing_start(&self, device: usize, queue: QueueHandle) -> Option<u64> {
        self.timing_start_impl(device, queue)
    }

    fn timing_stop(&self, device: usize, queue: QueueHandle, token: u64) {
        self.timing_stop_impl(device, queue, token)
    }

    fn timing_read(&self, device: usize, token: u64) -> Option<(u64, u64)> {
        self.timing_read_impl(device, token)
    }

    fn launched_grid(&self, device: usize, kernel: KernelHandle, dims: &LaunchDims) -> Option<([u32; 3], [u32; 3])> {
        self.launch_grid(device, kernel, dims).ok().map(|l| (l.blocks, l.threads))
    }

    fn why_no_device(&self, bytes: &[u8]) -> Option<String> {
        if fatbin::is_fatbin(bytes) {
            let entries = fatbin::parse(bytes).ok()?;
            return match self.state() {
                Err(e) => Some(format!("CUDA fatbinary: no CUDA device: {e}")),
                Ok(st) if st.devices.is_empty() => Some("CUDA fatbinary: the CUDA driver reports no devices".into()),
                Ok(st) if st.devices.iter().any(|d| !fatbin::candidates(&entries, d.cc).is_empty()) => None,
                Ok(st) => Some(fatbin::no_fit_message(&entries, &st.devices.iter().map(|d| d.cc).collect::<Vec<_>>())),
            };
        }
        let img = image::identify(bytes).ok()?;
        match self.state() {
            Err(e) => Some(format!("CUDA image for {}: no CUDA device: {e}", img.arch)),
            Ok(st) if st.devices.is_empty() => Some(format!("CUDA image for {}: the CUDA driver reports no devices", img.arch)),
            Ok(st) if st.devices.iter().any(|d| image::is_compatible(&img, d.cc)) => None,
            Ok(st) => Some(image::incompatibility_message(&img, &st.devices.iter().map(|d| d.cc).collect::<Vec<_>>())),
        }
    }

    fn is_device_compatible(&self, device: usize, bytes: &[u8]) -> bool {
        if fatbin::is_fatbin(bytes) {
            let (Ok(entries), Ok(st)) = (fatbin::parse(bytes), self.state()) else { return false };
            let Some(dev) = st.devices.get(device) else { return false };
            if !fatbin::candidates(&entries, dev.cc).is_empty() {
                return true;
            }
            if device + 1 == st.devices.len() && st.devices.iter().all(|d| fatbin::candidates(&entries, d.cc).is_empty()) {
                let msg = fatbin::no_fit_message(&entries, &st.devices.iter().map(|d| d.cc).collect::<Vec<_>>());
                crate::debug!("cuda: {msg}");
                diag::plugin_info(info::PLUGIN_KERNEL, device, || msg);
            }
            return false;
        }
        let (Ok(img), Ok(st)) = (image::identify(bytes), self.state()) else { return false };
        let Some(dev) = st.devices.get(device) else { return false };
        if image::is_compatible(&img, dev.cc) {
            return true;
        }
        // Say why once per image: when the last device is asked and none fits.
        if device + 1 == st.devices.len() && !st.devices.iter().any(|d| image::is_compatible(&img, d.cc)) {
            let ccs: Vec<ComputeCapability> = st.devices.iter().map(|d| d.cc).collect();
            let msg = image::incompatibility_message(&img, &ccs);
            crate::debug!("cuda: {msg}");
            diag::plugin_info(info::PLUGIN_KERNEL, device, || msg);
        }
        false
    }

    fn load_binary(&self, device: usize, bytes: &[u8]) -> Result<ImageHandle> {
        let fat = fatbin::is_fatbin(bytes);
        if !fat {
            crate::base::image::check_elf_layout(bytes)?;
            image::identify(bytes)?;
        }
        let (d, dev, ctx) = self.active(device)?;
        // A fatbinary: the entry this device runs best (cubin, else PTX), decompressed.
        let selected;
        let bytes = if fat {
            let (img, data) = fatbin::select(bytes, dev.cc)?;
            crate::debug!("cuda: device {device}: fatbinary of {} bytes: loading its {img} entry", bytes.len());
            selected = data;
            crate::base::image::check_elf_layout(&selected)?;
            &selected[..]
        } else {
            bytes
        };
        let img: CudaImage = image::identify(bytes)?;
        if !image::is_compatible(&img, dev.cc) {
            return Err(OffloadError::IncompatibleImage(image::incompatibility_message(&img, &[dev.cc])));
        }
        let module = load_module(d, bytes, img.kind)?;
        let envs = match img.kind {
            CudaImageKind::Cubin(_) => image::kernel_environments(bytes).unwrap_or_else(|e| {
                crate::debug!("cuda: reading kernel environments: {e}; kernels run in bare mode");
                HashMap::new()
            }),
            CudaImageKind::Ptx => HashMap::new(),
        };
        self.write_device_environment(d, device, dev, ctx, module)?;
        let dtors = self.run_global_constructors(d, device, ctx, module, bytes)?;
        let loaded: &'static LoadedModule =
            Box::leak(Box::new(LoadedModule { device, module, kind: img.kind, envs, dtors, unloaded: AtomicBool::new(false) }));
        let mut modules = self.modules.write();
        modules.push(loaded);
        crate::debug!("cuda: device {device}: loaded {img} ({} bytes) as image {}", bytes.len(), modules.len() - 1);
        Ok(modules.len() - 1)
    }

    fn unload_binary(&self, device: usize, handle: ImageHandle) -> Result<()> {
        let m = self.module(handle)?;
        if m.device != device {
            return Err(OffloadError::Internal(format!("cuda: image {handle} belongs to device {}, not {device}", m.device)));
        }
        let (d, _, ctx) = self.active(device)?;
        if m.unloaded.swap(true, Ordering::AcqRel) {
            return Err(OffloadError::Internal(format!("cuda: image {handle} was unloaded")));
        }
        // Reference (GenericDeviceTy::deinit, 22.1): destructors first, then
        // the module. The module goes even when a destructor failed.
        let dtors = match &m.dtors {
            Some(names) => match find_function(d, m.module, CtorDtor::Fini.kernel()) {
                Ok(Some(fini)) => self.run_ctor_dtor(d, device, ctx, m.module, fini, names, CtorDtor::Fini),
                Ok(None) => Err(OffloadError::MissingSymbol { lib: "the device image".into(), symbol: CtorDtor::Fini.kernel().into() }),
                Err(e) => Err(e),
            },
            None => Ok(()),
        };
        let unload = match d.cuModuleUnload {
            // SAFETY: a module loaded by this plugin, unloaded once (the flag above); its kernels are refused from now on.
            Some(f) => d.check(unsafe { f(m.module.0) }, "cuModuleUnload"),
            None => {
                crate::debug!("cuda: the driver has no cuModuleUnload; image {handle} stays loaded");
                Ok(())
            }
        };
        crate::debug!("cuda: device {device}: unloaded image {handle}");
        dtors.and(unload)
    }

    fn get_function(&self, device: usize, handle: ImageHandle, name: &str) -> Result<KernelHandle> {
        let m = self.module(handle)?;
        let (d, dev, ctx) = self.active(device)?;
        if m.device != device {
            return Err(OffloadError::Internal(format!("cuda: image {handle} belongs to device {}, not {device}", m.device)));
        }
        let c = cstring(name)?;
        let mut func: *mut c_void = core::ptr::null_mut();
        // SAFETY: valid out-pointer, live module, NUL-terminated name.
        let rc = unsafe { (d.cuModuleGetFunction)(&mut func, m.module.0, c.as_ptr()) };
        match rc {
            CUresult::SUCCESS => {}
            CUresult::ERROR_NOT_FOUND => {
                return Err(OffloadError::MissingSymbol { lib: "the device image".into(), symbol: name.into() });
            }
            _ => return Err(d.error(rc, "cuModuleGetFunction")),
        }
        let func_max_threads = d.cuFuncGetAttribute.and_then(|f| {
            let mut v: c_int = 0;
            // SAFETY: valid out-pointer and function handle.
            (unsafe { f(&mut v, driver::func_attr::MAX_THREADS_PER_BLOCK, func) } == CUresult::SUCCESS).then_some(v as u32)
        });
        // Reference (CUDAKernelTy::initImpl, LLVM 22): the parameter layout
        // from cuFuncGetParamInfo sizes the argument buffer.
        let param_bytes = d.cuFuncGetParamInfo.map(|f| {
            let mut end = 0u64;
            for index in 0.. {
                let (mut off, mut size) = (0usize, 0usize);
                // SAFETY: valid out-pointers and function; an index past the last parameter returns CUDA_ERROR_INVALID_VALUE.
                if unsafe { f(func, index, &mut off, &mut size) } != CUresult::SUCCESS {
                    break;
                }
                end = end.max((off + size) as u64);
            }
            end
        });
        let env = match m.kind {
            CudaImageKind::Cubin(_) => m.envs.get(name).copied(),
            CudaImageKind::Ptx => self
                .read_global(d, ctx, m.module, &format!("{name}{}", image::KERNEL_ENV_SUFFIX), image::KERNEL_ENV_CONFIG_BYTES)?
                .map(|b| KernelEnvironment::parse(&b))
                .transpose()?,
        };
        let grid = KernelGrid::new(env.as_ref(), &dev.grid, func_max_threads);
        let kernel: &'static CudaKernel = Box::leak(Box::new(CudaKernel {
            device,
            module: m,
            func: Handle(func),
            env,
            grid,
            param_bytes,
            dyn_shared_limit: AtomicU32::new(DEFAULT_DYN_SHARED_LIMIT),
        }));
        let mut kernels = self.kernels.write();
        kernels.push(kernel);
        crate::debug!(
            "cuda: device {device}: kernel {name} -> handle {} ({} mode, {:?} parameter bytes)",
            kernels.len() - 1,
            grid.mode.name(),
            param_bytes
        );
        Ok((kernels.len() - 1) as KernelHandle)
    }

    fn get_global(&self, device: usize, handle: ImageHandle, name: &str, size: u64) -> Result<u64> {
        let m = self.module(handle)?;
        let (d, _, _) = self.active(device)?;
        match get_global(d, m.module, name)? {
            None => Err(OffloadError::MissingSymbol {
                lib: "the device image".into(),
                symbol: format!("failed to find global symbol '{name}' in the ELF image"),
            }),
            Some((_, bytes)) if size != 0 && bytes as u64 != size => {
                Err(OffloadError::BadImage(format!("failed to load global '{name}' due to size mismatch ({bytes} != {size})")))
            }
            Some((ptr, _)) => Ok(ptr),
        }
    }

    fn global_size(&self, device: usize, handle: ImageHandle, name: &str) -> Option<u64> {
        let m = self.module(handle).ok()?;
        let (d, _, _) = self.active(device).ok()?;
        get_global(d, m.module, name).ok().flatten().map(|(_, bytes)| bytes as u64)
    }

    fn alloc(&self, device: usize, size: u64, kind: AllocKind) -> Result<u64> {
        let (d, _, ctx) = self.active(device)?;
        let bytes = usize::try_from(size).map_err(|_| OffloadError::OutOfDeviceMemory { bytes: size })?;
        match kind {
            AllocKind::Device | AllocKind::Default => ctx.pool.alloc(size, &DriverAlloc(d)),
            AllocKind::Host => {
                let mut p: *mut c_void = core::ptr::null_mut();
                // SAFETY: valid out-pointer; the context is current.
                alloc_result(d, unsafe { (d.cuMemAllocHost_v2)(&mut p, bytes) }, "cuMemAllocHost", size)?;
                ctx.pinned.lock().insert(p as u64);
                Ok(p as u64)
            }
            AllocKind::Shared => {
                let f = d.cuMemAllocManaged.ok_or_else(|| OffloadError::PluginUnavailable {
                    plugin: "cuda",
                    reason: "the driver has no cuMemAllocManaged".into(),
                })?;
                let mut p: CUdeviceptr = 0;
                // SAFETY: valid out-pointer and flags; the context is current.
                alloc_result(d, unsafe { f(&mut p, bytes, driver::CU_MEM_ATTACH_GLOBAL) }, "cuMemAllocManaged", size)?;
                Ok(p)
            }
        }
    }

    fn free(&self, device: usize, ptr: u64, kind: AllocKind) -> Result<()> {
        let (d, _, ctx) = self.active(device)?;
        if ctx.pinned.lock().remove(&ptr) {
            // SAFETY: `ptr` came from cuMemAllocHost_v2 and was in the pinned set once.
            return d.check(unsafe { (d.cuMemFreeHost)(ptr as usize as *mut c_void) }, "cuMemFreeHost");
        }
        match kind {
            AllocKind::Device | AllocKind::Default => ctx.pool.free(ptr, &DriverAlloc(d)),
            // SAFETY: the runtime frees only pointers this plugin returned, once.
            AllocKind::Shared | AllocKind::Host => d.check(unsafe { (d.cuMemFree_v2)(ptr) }, "cuMemFree"),
        }
    }

    unsafe fn submit(&self, device: usize, dst: u64, src: usize, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let (d, _, ctx) = self.active(device)?;
        self.on_stream(d, ctx, |s| {
            // SAFETY: `src` is readable for `size` bytes until we return (caller's contract); the stream is synchronised first.
            d.check(unsafe { (d.cuMemcpyHtoDAsync_v2)(dst, src as *const c_void, size as usize, s) }, "cuMemcpyHtoDAsync")
        })
    }

    unsafe fn retrieve(&self, device: usize, dst: usize, src: u64, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let (d, _, ctx) = self.active(device)?;
        self.on_stream(d, ctx, |s| {
            // SAFETY: `dst` is writable for `size` bytes until we return (caller's contract); the stream is synchronised first.
            d.check(unsafe { (d.cuMemcpyDtoHAsync_v2)(dst as *mut c_void, src, size as usize, s) }, "cuMemcpyDtoHAsync")
        })
    }

    fn exchange(&self, src_device: usize, src: u64, dst_device: usize, dst: u64, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        if src_device == dst_device {
            let (d, _, ctx) = self.active(dst_device)?;
            return self.on_stream(d, ctx, |s| {
                // SAFETY: both ranges are device memory of this device with `size` bytes (runtime's checks).
                d.check(unsafe { (d.cuMemcpyDtoDAsync_v2)(dst, src, size as usize, s) }, "cuMemcpyDtoDAsync")
            });
        }
        // Reference (CUDADeviceTy::dataExchangeImpl, 22.1): on the source
        // device; a peer copy when peer access could be enabled for the pair
        // (decided once), else a device-to-device copy (unified addressing).
        let (_, dst_info, dst_ctx) = self.active(dst_device)?;
        let (dst_dev, dst_ctx) = (dst_info.dev, dst_ctx.ctx);
        let (d, dev, ctx) = self.active(src_device)?;
        let peer = self.peer_access(d, ctx, (src_device, dev.dev), (dst_device, dst_dev, dst_ctx))?;
        self.on_stream(d, ctx, |s| match d.cuMemcpyPeerAsync {
            // SAFETY: device ranges of `size` bytes in the two live contexts.
            Some(f) if peer => d.check(unsafe { f(dst, dst_ctx.0, src, ctx.ctx.0, size as usize, s) }, "cuMemcpyPeerAsync"),
            // SAFETY: device ranges of `size` bytes; unified addressing lets the driver copy between devices.
            _ => d.check(unsafe { (d.cuMemcpyDtoDAsync_v2)(dst, src, size as usize, s) }, "cuMemcpyDtoDAsync"),
        })
    }

    fn memset(&self, device: usize, ptr: u64, value: u8, size: u64) -> Result<()> {
        if size == 0 {
            return Ok(());
        }
        let (d, _, ctx) = self.active(device)?;
        self.on_stream(d, ctx, |s| match d.cuMemsetD32Async {
            Some(f) if ptr.is_multiple_of(4) && size.is_multiple_of(4) => {
                let word = u32::from_ne_bytes([value; 4]);
                // SAFETY: a 4-aligned device range of `size` bytes.
                d.check(unsafe { f(ptr, word, (size / 4) as usize, s) }, "cuMemsetD32Async")
            }
            // SAFETY: a device range of `size` bytes.
            _ => d.check(unsafe { (d.cuMemsetD8Async)(ptr, value, size as usize, s) }, "cuMemsetD8Async"),
        })
    }

    fn launch(&self, device: usize, kernel: KernelHandle, name: &str, args: &[u64], dims: &LaunchDims) -> Result<()> {
        let k = self.launch_kernel(device, kernel, name)?;
        let (d, dev, ctx) = self.active(device)?;
        let mut keep = Vec::new();
        let r = self.on_stream(d, ctx, |s| self.enqueue_launch((d, dev, ctx), device, k, name, args, dims, s, &mut keep));
        // The launch environment is freed after the launch synchronised, as in 22.1.
        queue::release_deferred(d, ctx, keep);
        r
    }

    // ---- Asynchronous work: src/plugins/cuda/queue.rs.

    fn has_queues(&self) -> bool {
        true
    }

    fn queue_acquire(&self, device: usize) -> Result<QueueHandle> {
        self.queue_acquire_impl(device)
    }

    fn queue_synchronize(&self, device: usize, queue: QueueHandle) -> Result<()> {
        self.queue_synchronize_impl(device, queue)
    }

    fn queue_query(&self, device: usize, queue: QueueHandle) -> Result<bool> {
        self.queue_query_impl(device, queue)
    }

    fn queue_release(&self, device: usize, queue: QueueHandle) {
        self.queue_release_impl(device, queue)
    }

    unsafe fn submit_async(&self, device: usize, dst: u64, src: usize, size: u64, queue: QueueHandle) -> Result<()> {
        // SAFETY: forwarded contract (`src` readable until the queue is synchronised).
        unsafe { self.submit_async_impl(device, dst, src, size, queue) }
    }

    unsafe fn retrieve_async(&self, device: usize, dst: usize, src: u64, size: u64, queue: QueueHandle) -> Result<()> {
        // SAFETY: forwarded contract (`dst` writable and unread until the queue is synchronised).
        unsafe { self.retrieve_async_impl(device, dst, src, size, queue) }
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
        let k = self.launch_kernel(device, kernel, name)?;
        let q = self.queue(queue, device)?;
        let (d, dev, ctx) = self.active(device)?;
        let mut st = q.state.lock();
        st.pending = true;
        let stream = st.stream.0;
        // The launch environment stays with the queue until it completes.
        self.enqueue_launch((d, dev, ctx), device, k, name, args, dims, stream, &mut st.deferred)
    }

    fn event_record(&self, device: usize, queue: QueueHandle) -> Result<EventHandle> {
        self.event_record_impl(device, queue)
    }

    fn event_wait(&self, device: usize, event: EventHandle, queue: QueueHandle) -> Result<()> {
        self.event_wait_impl(device, event, queue)
    }

    fn event_release(&self, device: usize, event: EventHandle) {
        self.event_release_impl(device, event)
    }

    /// 22.1's CUDA interop: foreign runtime `cuda` (1), vendor `nvidia` (11),
    /// the `CUdevice` ordinal as the device handle (device 0 reads as NULL
    /// there, answered with `omp_irc_no_value`), the primary `CUcontext`.
    fn interop_info(&self, device: usize) -> Option<super::InteropInfo> {
        let (_, dev, ctx) = self.active(device).ok()?;
        Some(super::InteropInfo {
            fr_id: 1,
            vendor_id: 11,
            platform: 0,
            device: dev.dev as usize,
            context: ctx.ctx.0 as usize,
            type_names: [c"N/A", c"CUdevice", c"CUcontext", c"CUstream"],
        })
    }

    fn queue_native(&self, device: usize, queue: QueueHandle) -> Option<usize> {
        let q = self.queue(queue, device).ok()?;
        let mut st = q.state.lock();
        // Foreign work may be queued from now on: the next synchronisation waits.
        st.pending = true;
        Some(st.stream.0 as usize)
    }

    /// The buffer goes to `cuLaunchKernel` as its parameter buffer (22.1's
    /// `IsCUDA` launch), padded to whole 8-byte slots.
    fn launch_raw(&self, device: usize, kernel: KernelHandle, name: &str, params: &[u8], dims: &LaunchDims) -> Result<()> {
        let mut slots = vec![0u64; params.len().div_ceil(8)];
        for (slot, chunk) in slots.iter_mut().zip(params.chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            *slot = u64::from_ne_bytes(b);
        }
        self.launch(device, kernel, name, &slots, dims)
    }

    /// Always false, as in 22.1: its CUDA device keeps the generic
    /// `isAccessiblePtrImpl` (false for every pointer, pinned and managed
    /// memory included; checked in the installed libomptarget.so.22.1, whose
    /// CUDA plugin does not even resolve `cuPointerGetAttribute`). Only the
    /// AMDGPU plugin overrides it there.
    fn is_accessible(&self, _device: usize, _ptr: usize, _size: u64) -> bool {
        false
    }

    fn uid(&self, device: usize) -> String {
        match self.device(device) {
            Ok((_, dev)) => match dev.uuid {
                Some(u) => format!("GPU-{}-{}-{}-{}-{}", hex(&u[0..4]), hex(&u[4..6]), hex(&u[6..8]), hex(&u[8..10]), hex(&u[10..16])),
                None => format!("cuda-{}", dev.ordinal),
            },
            Err(_) => format!("cuda-{device}"),
        }
    }

    fn properties(&self, device: usize) -> super::DeviceProperties {
        let Ok((st, dev)) = self.device(device) else { return super::DeviceProperties::default() };
        let v = st.driver_version;
        let group = dev.grid.thread_limit;
        let dims = [group, group, group.min(64)];
        super::DeviceProperties {
            device_type: super::DeviceType::Gpu,
            name: dev.name.clone(),
            product: format!("sm_{}{}", dev.cc.major, dev.cc.minor),
            vendor: "NVIDIA Corporation".into(),
            vendor_id: 0x10de,
            driver_version: format!("{}.{}", v / 1000, (v % 1000) / 10),
            max_group_size: group,
            max_group_dims: dims,
            max_groups: [dev.grid.block_limit; 3],
            compute_units: dev.sm_count,
            clock_mhz: 0,
            memory_clock_mhz: 0,
            address_bits: 64,
            global_memory: dev.total_mem,
            // The static shared memory a block may use by default.
            local_memory: 48 << 10,
            simd_width: dev.grid.warp_size,
            vector_widths: [1; 7],
        }
    }

    fn device_info(&self, device: usize) -> String {
        let Ok((st, dev)) = self.device(device) else { return String::from("    CUDA device unavailable\n") };
        let v = st.driver_version;
        format!(
            "    CUDA Driver Version: \t\t{}.{}\n    CUDA OpenMP Device Number: \t\t{device}\n    Device Name: \t\t\t{}\n    \
             Global Memory Size: \t\t{} bytes\n    Number of Multiprocessors: \t\t{}\n    Warp Size: \t\t\t\t{}\n    \
             Maximum Threads per Block: \t\t{}\n    Maximum Grid Dimensions: \t\t{}\n    Compute Capabilities: \t\t{}{}\n    UID: \t\t\t\t{}\n",
            v / 1000,
            (v % 1000) / 10,
            dev.name,
            dev.total_mem,
            dev.sm_count,
            dev.grid.warp_size,
            dev.grid.thread_limit,
            dev.grid.block_limit,
            dev.cc.major,
            dev.cc.minor,
            self.uid(device)
        )
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl CudaPlugin {
    /// The kernel behind `kernel`, checked to belong to `device`.
    fn launch_kernel(&self, device: usize, kernel: KernelHandle, name: &str) -> Result<&'static CudaKernel> {
        let k = self.kernel(kernel)?;
        if k.device != device {
            return Err(OffloadError::Internal(format!("cuda: kernel {name} belongs to device {}, not {device}", k.device)));
        }
        Ok(k)
    }

    /// Enqueues a launch on `stream` without waiting. What the queued work
    /// reads until it completes (the launch environment: host copy, device
    /// copy, reduction buffer) goes to `keep`, also when enqueueing fails
    /// half-way; the caller frees it once the stream completed.
    #[allow(clippy::too_many_arguments)] // Two call sites; a struct would only rename the list.
    fn enqueue_launch(
        &self,
        (d, dev, ctx): (&CudaDriver, &DeviceInfo, &DeviceCtx),
        device: usize,
        k: &CudaKernel,
        name: &str,
        args: &[u64],
        dims: &LaunchDims,
        stream: CUstream,
        keep: &mut Vec<queue::Deferred>,
    ) -> Result<()> {
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
        // Reference (GenericKernelTy::launch): max of the clause and LIBOMPTARGET_SHARED_MEMORY_SIZE.
        let dyn_shared = dims.dyn_shared_bytes.max(config().shared_memory_size);
        self.ensure_dyn_shared(d, k, dyn_shared)?;

        // The implicit first argument: the runtime passes ~0 (Version >= 3);
        // kernels with team reductions get a KernelLaunchEnvironment instead
        // (reference: GenericKernelTy::getKernelLaunchEnvironment). A Version
        // <= 2 launch has no dyn_ptr slot; its first argument is never ~0 in
        // practice (clang 22 emits Version 3 for every kernel with an environment).
        if let Some(env) = k.env.filter(|e| e.needs_launch_environment())
            && args.first() == Some(&u64::MAX)
        {
            let alloc = DriverAlloc(d);
            let buffer = ctx.pool.alloc(env.reduction_buffer_bytes().max(1), &alloc)?;
            let kle_ptr = match ctx.pool.alloc(size_of::<KernelLaunchEnvironment>() as u64, &alloc) {
                Ok(p) => p,
                Err(e) => {
                    let _ = ctx.pool.free(buffer, &alloc);
                    return Err(e);
                }
            };
            // Boxed: the queued copy reads it after this function returned.
            let kle = Box::new(KernelLaunchEnvironment { reduction_buffer: buffer, ..Default::default() });
            diag::plugin_info(info::DATA_TRANSFER, device, || {
                format!(
                    "Copying data from host to device, HstPtr={}, TgtPtr={}, Size=16, Name=KernelLaunchEnv",
                    diag::ptr(&*kle as *const _ as u64),
                    diag::ptr(kle_ptr)
                )
            });
            let src: *const c_void = (&*kle as *const KernelLaunchEnvironment).cast();
            keep.extend([queue::Deferred::Device(kle_ptr), queue::Deferred::Device(buffer), queue::Deferred::Host(kle)]);
            // `src` points into the box now in `keep`, which the caller holds until the stream completed.
            // SAFETY: `src` outlives the queued copy (above); `kle_ptr` is a 16-byte device block.
            let rc = unsafe { (d.cuMemcpyHtoDAsync_v2)(kle_ptr, src, size_of::<KernelLaunchEnvironment>(), stream) };
            d.check(rc, "cuMemcpyHtoDAsync")?;
            let mut with_kle = args.to_vec();
            with_kle[0] = kle_ptr;
            return self.enqueue_kernel(d, k, name, &with_kle, &l, dyn_shared, stream);
        }
        self.enqueue_kernel(d, k, name, args, &l, dyn_shared, stream)
    }

    /// `cuLaunchKernel` with the arguments in one parameter buffer, which the
    /// driver copies before returning.
    #[allow(clippy::too_many_arguments)] // One call site; splitting would only move the list.
    fn enqueue_kernel(
        &self,
        d: &CudaDriver,
        k: &CudaKernel,
        name: &str,
        args: &[u64],
        l: &grid::Launch,
        dyn_shared: u32,
        stream: CUstream,
    ) -> Result<()> {
        // Reference (CUDAKernelTy::launchImpl, LLVM 22): one buffer of 8-byte
        // slots, passed with the size of the kernel's declared parameters.
        let provided = (args.len() * 8) as u64;
        let mut size = match k.param_bytes {
            Some(declared) if declared > provided => {
                return Err(OffloadError::Driver {
                    plugin: "cuda",
                    call: "cuLaunchKernel",
                    message: format!("mismatch in kernel arguments for '{name}': {provided} bytes passed, the kernel declares {declared}"),
                });
            }
            Some(declared) => declared as usize,
            None => provided as usize,
        };
        let mut extra: [*mut c_void; 5] = [
            driver::launch_param::BUFFER_POINTER as *mut c_void,
            args.as_ptr() as *mut c_void,
            driver::launch_param::BUFFER_SIZE as *mut c_void,
            (&mut size as *mut usize).cast(),
            driver::launch_param::END as *mut c_void,
        ];
        let extra_ptr = if size == 0 { core::ptr::null_mut() } else { extra.as_mut_ptr() };
        crate::debug!(
            "cuda: launching {name}: grid {:?} block {:?}, {dyn_shared} bytes dynamic shared memory, {size} parameter bytes {args:x?}",
            l.blocks,
            l.threads
        );
        // `extra` describes `size` ≤ 8 * args.len() readable bytes of `args`; the driver copies them at launch.
        // SAFETY: `extra` is valid for the call (above); `k.func` and `stream` are live in the current context.
        let rc = unsafe {
            (d.cuLaunchKernel)(
                k.func.0,
                l.blocks[0],
                l.blocks[1],
                l.blocks[2],
                l.threads[0],
                l.threads[1],
                l.threads[2],
                dyn_shared,
                stream,
                core::ptr::null_mut(),
                extra_ptr,
            )
        };
        if rc != CUresult::SUCCESS {
            return Err(OffloadError::Driver {
                plugin: "cuda",
                call: "cuLaunchKernel",
                message: format!("for '{name}': {}", d.describe(rc)),
            });
        }
        Ok(())
    }
}
