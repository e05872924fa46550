//! Device back-ends behind one trait. The runtime only talks to [`Plugin`];
//! each plugin owns its driver state and numbers its devices from 0.
//!
//! Host addresses cross this trait as plain `usize` and device addresses as
//! `u64`; the methods that touch host memory are `unsafe` and say what the
//! caller must guarantee.

pub mod amdgpu;
pub mod cuda;
pub mod gpu;
pub mod host;
pub mod remote;

use crate::base::error::Result;

/// Allocation kinds (`TargetAllocTy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    Host,
    Shared,
    Default,
}

/// An image loaded on one device (opaque to the runtime).
pub type ImageHandle = usize;
/// A kernel resolved in a loaded image (its address or driver handle).
pub type KernelHandle = u64;
/// A queue of asynchronous work on one device (a CUDA stream, an HSA queue
/// with its completion signals), owned by one runtime async context.
pub type QueueHandle = u64;
/// A point in a queue that other queues can wait for (a CUDA event, an HSA
/// signal); attached to mapping entries whose data is still in flight.
pub type EventHandle = u64;

/// Grid the runtime asks a plugin to launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    pub teams: [u32; 3],
    pub threads: [u32; 3],
    pub dyn_shared_bytes: u32,
    pub tripcount: u64,
}

/// What an OpenMP interop object exposes for a device: the
/// foreign-runtime and vendor ids of OpenMP's additional definitions and the
/// native handles, as addresses (0 where the plugin has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InteropInfo {
    pub fr_id: i32,
    pub vendor_id: i32,
    pub platform: usize,
    pub device: usize,
    pub context: usize,
    /// Type names of the platform, device, context and targetsync handles.
    pub type_names: [&'static core::ffi::CStr; 4],
}

/// Most devices one process can have (all plugins together).
pub const MAX_DEVICES: usize = 256;

/// Argument slots of [`Plugin::launch_plain`].
pub const PLAIN_LAUNCH_SLOTS: usize = 16;

/// What kind of processor a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceType {
    #[default]
    Cpu,
    Gpu,
}

/// A device's properties as typed values, filled by its plugin once. Both
/// APIs' device queries read them (`ol*` device info, OMPT, device
/// printing); nothing parses text back. `0` and empty strings mean "the
/// plugin does not know".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceProperties {
    pub device_type: DeviceType,
    /// Marketing or model name (`cuDeviceGetName`, the HSA agent's product, the CPU model).
    pub name: String,
    /// Product or architecture name where it differs from `name` (the gfx target).
    pub product: String,
    pub vendor: String,
    /// PCI vendor id (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel, 0x1022 AMD CPUs).
    pub vendor_id: u32,
    /// The driver's version text (`12.4`, `1.14`).
    pub driver_version: String,
    /// Work items one work group may have, and per dimension.
    pub max_group_size: u32,
    pub max_group_dims: [u32; 3],
    /// Work groups one launch may have per dimension.
    pub max_groups: [u32; 3],
    /// Multiprocessors, compute units or CPU cores.
    pub compute_units: u32,
    pub clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub address_bits: u32,
    pub global_memory: u64,
    /// Memory local to a work group (shared memory, LDS).
    pub local_memory: u64,
    /// Threads of one SIMD unit (warp or wavefront; 1 on CPUs).
    pub simd_width: u32,
    /// Native vector widths in elements: char, short, int, long, float, double, half.
    pub vector_widths: [u32; 7],
}

/// What a program asks of the devices that run its images, beyond the
/// image's architecture.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgramNeeds {
    /// `requires unified_shared_memory`: kernels dereference host pointers.
    pub unified_shared_memory: bool,
    /// `declare target indirect` functions: host function pointers reach
    /// kernels (a GPU image translates them through its indirect-call
    /// table, a CPU image calls them as they are).
    pub indirect_calls: bool,
}

/// One device back-end.
pub trait Plugin: Send + Sync {
    /// Short name used in messages (`x86_64`, `cuda`, `amdgpu`).
    fn name(&self) -> &'static str;
    /// Whether the plugin can run this (inner, unwrapped) image at all. Must
    /// not initialise any driver unless the image targets this plugin.
    fn is_compatible(&self, image: &[u8]) -> bool;
    /// Number of devices; may initialise the driver on first call.
    fn number_of_devices(&self) -> usize;
    /// Whether `__tgt_init_all_rtls` initialises this plugin even when none of
    /// its images was registered. Plugins whose initialisation loads a driver
    /// answer false: they are initialised when an image for them registers.
    fn eager_init(&self) -> bool {
        true
    }
    /// Whether `device` can run `image` (architecture checks).
    fn is_device_compatible(&self, _device: usize, _image: &[u8]) -> bool {
        true
    }
    /// Whether this plugin's devices can run `image` of a program that
    /// needs `needs`; `Err` says what they lack (a "why no device" line).
    fn supports(&self, _image: &[u8], _needs: ProgramNeeds) -> std::result::Result<(), String> {
        Ok(())
    }
    /// Loads an image on a device.
    fn load_binary(&self, device: usize, image: &[u8]) -> Result<ImageHandle>;
    /// Runs the image's device destructors (global `fini` arrays), then
    /// unloads it. The runtime calls it once per loaded image when it shuts
    /// down (the last library unregisters), as 22.1's device deinit does;
    /// errors are reported, not fatal.
    fn unload_binary(&self, _device: usize, _image: ImageHandle) -> Result<()> {
        Ok(())
    }
    /// Whether images still loaded at process exit are unloaded from the
    /// runtime's library destructor (GPU plugins: their device destructors).
    fn unload_at_exit(&self) -> bool {
        true
    }
    /// Resolves a kernel by name in a loaded image.
    fn get_function(&self, device: usize, image: ImageHandle, name: &str) -> Result<KernelHandle>;
    /// Resolves a global by name; `size` is the host's view of its size.
    fn get_global(&self, device: usize, image: ImageHandle, name: &str, size: u64) -> Result<u64>;
    /// The size of a loaded image's global as the driver knows it, for
    /// images whose bytes do not say (PTX, a fatbin's chosen entry).
    fn global_size(&self, _device: usize, _image: ImageHandle, _name: &str) -> Option<u64> {
        None
    }
    /// Allocates device memory; `size` > 0.
    fn alloc(&self, device: usize, size: u64, kind: AllocKind) -> Result<u64>;
    /// Frees memory returned by [`Plugin::alloc`].
    fn free(&self, device: usize, ptr: u64, kind: AllocKind) -> Result<()>;
    /// [`Plugin::alloc`] of default memory for a fast path, when nothing is
    /// traced or recorded: `Some` as `alloc` would answer, or `None`, having
    /// done nothing, when this plugin has no such path or the allocation
    /// fails (the caller then takes the general path, which reports).
    fn alloc_plain(&self, _device: usize, _size: u64) -> Option<u64> {
        None
    }
    /// [`Plugin::free`] of default memory for a fast path, with the
    /// block's size as the allocation table knows it: true when freed as
    /// `free` would, false, having done nothing, when this plugin has no
    /// such path.
    fn free_plain(&self, _device: usize, _ptr: u64, _size: u64) -> bool {
        false
    }

    /// Frees device memory kept for reuse (the runtime's last deinit).
    fn release_cached(&self) {}
    /// Copies host → device.
    ///
    /// # Safety
    /// `[src, src+size)` must be readable host memory for the call.
    unsafe fn submit(&self, device: usize, dst: u64, src: usize, size: u64) -> Result<()>;
    /// Copies device → host.
    ///
    /// # Safety
    /// `[dst, dst+size)` must be writable host memory for the call.
    unsafe fn retrieve(&self, device: usize, dst: usize, src: u64, size: u64) -> Result<()>;
    /// Copies device → device within this plugin, when supported directly.
    fn exchange(&self, src_device: usize, src: u64, dst_device: usize, dst: u64, size: u64) -> Result<()>;
    /// Fills device memory with a byte.
    fn memset(&self, device: usize, ptr: u64, value: u8, size: u64) -> Result<()>;
    /// Launches a kernel with pointer-sized arguments and waits for it.
    fn launch(&self, device: usize, kernel: KernelHandle, name: &str, args: &[u64], dims: &LaunchDims) -> Result<()>;
    /// Whether [`Plugin::launch_plain`] launches (for every argument count
    /// up to [`PLAIN_LAUNCH_SLOTS`]) when the plugin has no queues: a fast
    /// path that must do work before its launch asks this first.
    fn launches_plain(&self) -> bool {
        false
    }
    /// [`Plugin::launch`] for a construct's fast path, when nothing is to be
    /// printed or traced: runs the kernel with the first `n` of `slots` as
    /// its arguments to completion and returns true, or returns false at
    /// once, having done nothing, when this plugin cannot launch this way
    /// (the caller then takes the general path).
    fn launch_plain(
        &self,
        _device: usize,
        _kernel: KernelHandle,
        _slots: &[u64; PLAIN_LAUNCH_SLOTS],
        _n: usize,
        _dims: &LaunchDims,
    ) -> bool {
        false
    }
    /// Whether the device-to-host calls of images on this plugin's devices
    /// (their RPC clients) are served by the plugin's side itself: a
    /// remote server's device layer serves its devices' clients there.
    fn serves_rpc_itself(&self) -> bool {
        false
    }
    /// Whether this plugin's device addresses are host addresses that a
    /// synchronous copy may read and write directly (the host plugin): the
    /// runtime's fast paths then copy with `memcpy` instead of calling
    /// [`Plugin::submit`] / [`Plugin::retrieve`], which would do the same.
    fn memory_is_host(&self) -> bool {
        false
    }
    // ---- Asynchronous work (abi-reference: AsyncInfoTy). Plugins without
    // queues keep the defaults: every operation completes before it returns,
    // and the runtime never asks them for a queue or an event.

    /// Whether this plugin queues work. When true the runtime sends the
    /// copies and the launch of one construct to one queue and synchronises
    /// (or, for `nowait`, queries) it once at the end.
    fn has_queues(&self) -> bool {
        false
    }
    /// Takes a queue for one async context (pooled; cheap after the first).
    fn queue_acquire(&self, _device: usize) -> Result<QueueHandle> {
        Err(crate::base::error::OffloadError::Internal(format!("{}: no asynchronous queues", self.name())))
    }
    /// Waits until everything queued has completed, then frees what the
    /// queued work needed (launch buffers). Returns the first failure of any
    /// queued operation. The queue stays usable.
    fn queue_synchronize(&self, _device: usize, _queue: QueueHandle) -> Result<()> {
        Ok(())
    }
    /// Non-blocking [`Plugin::queue_synchronize`]: `Ok(true)` once everything
    /// queued has completed (clean-up done), `Ok(false)` while work is pending.
    fn queue_query(&self, _device: usize, _queue: QueueHandle) -> Result<bool> {
        Ok(true)
    }
    /// Gives a queue back to the pool; its work has completed (after a
    /// synchronize or a query that returned true) or failed.
    fn queue_release(&self, _device: usize, _queue: QueueHandle) {}
    /// Queues a host → device copy.
    ///
    /// # Safety
    /// `[src, src+size)` must stay readable until the queue is synchronised.
    unsafe fn submit_async(&self, device: usize, dst: u64, src: usize, size: u64, _queue: QueueHandle) -> Result<()> {
        // SAFETY: forwarded contract (a synchronous copy needs less).
        unsafe { self.submit(device, dst, src, size) }
    }
    /// Queues a device → host copy.
    ///
    /// # Safety
    /// `[dst, dst+size)` must stay writable, and not be read by the host,
    /// until the queue is synchronised.
    unsafe fn retrieve_async(&self, device: usize, dst: usize, src: u64, size: u64, _queue: QueueHandle) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.retrieve(device, dst, src, size) }
    }
    /// Queues a launch after the work already in the queue. `args` are
    /// copied before returning.
    fn launch_async(
        &self,
        device: usize,
        kernel: KernelHandle,
        name: &str,
        args: &[u64],
        dims: &LaunchDims,
        _queue: QueueHandle,
    ) -> Result<()> {
        self.launch(device, kernel, name, args, dims)
    }
    /// Records an event after the work queued so far on `queue`.
    fn event_record(&self, _device: usize, _queue: QueueHandle) -> Result<EventHandle> {
        Err(crate::base::error::OffloadError::Internal(format!("{}: no events", self.name())))
    }
    /// Makes later work on `queue` wait (on the device) for `event`.
    fn event_wait(&self, _device: usize, _event: EventHandle, _queue: QueueHandle) -> Result<()> {
        Ok(())
    }
    /// Frees an event from [`Plugin::event_record`].
    fn event_release(&self, _device: usize, _event: EventHandle) {}

    // ---- Interop and kernel-language launches. Plugins keep the
    // defaults where 22.1 has neither: interop objects stay omp_interop_none.

    /// The native handles an interop object of `device` carries; `None`: no
    /// interop for this plugin.
    fn interop_info(&self, _device: usize) -> Option<InteropInfo> {
        None
    }
    /// The native handle (a `CUstream`) of a queue from
    /// [`Plugin::queue_acquire`] that foreign code may enqueue work on;
    /// `None`: the plugin hands out no queue (`targetsync` unsupported).
    /// After each call the queue counts as having work pending, so that the
    /// next [`Plugin::queue_synchronize`] waits for what foreign code queued.
    fn queue_native(&self, _device: usize, _queue: QueueHandle) -> Option<usize> {
        None
    }
    /// Launches a kernel whose parameters are one buffer laid out as the
    /// kernel declares them (CUDA/HIP kernel-language launches), and waits.
    fn launch_raw(&self, _device: usize, _kernel: KernelHandle, name: &str, _params: &[u8], _dims: &LaunchDims) -> Result<()> {
        Err(crate::base::error::OffloadError::InvalidArgument(format!(
            "{}: kernel-language launches (CUDA/HIP argument buffers) are not supported by this plugin (kernel {name})",
            self.name()
        )))
    }

    /// OMPT device tracing: whether this plugin's devices have a clock
    /// ([`Plugin::device_clock`]); the host plugin has none (as in 22.1).
    fn traceable(&self) -> bool {
        false
    }

    /// The device's clock now, in ns (OMPT device tracing); `None` without one.
    fn device_clock(&self, _device: usize) -> Option<u64> {
        None
    }

    // ---- Device timing for LIBOMPTARGET_PROFILE's device tracks.
    // Only called while a profile is recorded. Plugins without device timing
    // keep the defaults (the profile then shows the host's issue times).

    /// Starts timing the operation(s) queued on `queue` next (CUDA: an event
    /// recorded on the stream; HSA: the completion signals of what follows).
    /// Returns a token for [`Plugin::timing_stop`] and [`Plugin::timing_read`],
    /// `None` without device timing. Adds no wait.
    fn timing_start(&self, _device: usize, _queue: QueueHandle) -> Option<u64> {
        None
    }
    /// Ends the timed span after the operation(s) were queued.
    fn timing_stop(&self, _device: usize, _queue: QueueHandle, _token: u64) {}
    /// After the queue completed (synchronised, or a query said so): the
    /// span's start and end as measured on the device, mapped onto the host's
    /// `CLOCK_MONOTONIC` (ns). Frees the token; `None` when the device gave
    /// no times (failed work, no timing support).
    fn timing_read(&self, _device: usize, _token: u64) -> Option<(u64, u64)> {
        None
    }
    /// The grid a launch with `dims` gets: (teams, threads per team), x/y/z.
    fn launched_grid(&self, _device: usize, _kernel: KernelHandle, _dims: &LaunchDims) -> Option<([u32; 3], [u32; 3])> {
        None
    }

    /// Whether the device can access the host range directly.
    fn is_accessible(&self, _device: usize, _ptr: usize, _size: u64) -> bool {
        false
    }
    /// Fork safety: takes the plugin's locks for a `fork` (see
    /// `runtime::fork`); false as soon as one is busy. Plugins whose driver
    /// cannot be used in a child after `fork` (CUDA, HSA) keep the default.
    fn lock_for_fork(&'static self, _held: &mut crate::base::fork::ForkLocks) -> bool {
        true
    }
    /// In a child after `fork` (locks released): work that a thread of the
    /// parent was running will never finish there; the plugin must not wait
    /// for it.
    fn forked_child(&self) {}
    /// The runtime made the plugin's `device` user device `id` (before
    /// loading anything on it).
    fn device_exposed(&self, _device: usize, _id: usize) {}
    /// Why none of this plugin's devices takes `image` (one it recognises),
    /// for the "why no device" lines; `None` when one does.
    fn why_no_device(&self, _image: &[u8]) -> Option<String> {
        None
    }
    /// The device's compute-unit kind, the type string OMPT's
    /// `device_initialize` reports (22.1's `getComputeUnitKind`).
    fn compute_unit_kind(&self, _device: usize) -> String {
        "unknown".into()
    }
    /// Unique id string of a device (`omp_get_uid_from_device`).
    fn uid(&self, device: usize) -> String;
    /// Text printed by `__tgt_print_device_info`.
    fn device_info(&self, device: usize) -> String;
    /// The device's properties (see [`DeviceProperties`]).
    fn properties(&self, device: usize) -> DeviceProperties;
}
