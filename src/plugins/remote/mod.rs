//! The remote plugin: the devices of `omptarget-rs-device`
//! server ranks of an MPI job, as devices of this process (rank 0).
//!
//! Nothing of MPI is linked into the runtime: when the environment says this
//! process is rank 0 of an Open MPI job with more than one application
//! context (`mpirun -np 1 ./program : -np N omptarget-rs-device`), the first
//! use loads `libomptarget_rs_remote.so` (built by the workspace crate
//! `remote/`, next to this library, or `OMPTARGET_RS_REMOTE_LIB`) through a
//! driver table, as the GPU plugins load their drivers. That library owns
//! MPI: it greets the servers; a blocking call here is one request to the
//! server of the device, answered before the call returns, and a queued one
//! goes out at once with its reply collected when the queue is synchronised
//! (see "Queues" below). A device takes the images its server's plugin runs
//! (x86-64 shared objects on a host-plugin server); each goes to a server
//! once.
//!
//! `OMPTARGET_RS_REMOTE=0` turns the plugin off.

use super::{
    AllocKind, DeviceProperties, DeviceType, EventHandle, ImageHandle, KernelHandle, LaunchDims, Plugin, ProgramNeeds, QueueHandle,
};
use crate::base::error::{OffloadError, Result};
use crate::base::image::{elf_ident, machine};
use std::ffi::{c_char, c_int};
use std::sync::OnceLock;

driver_table! {
    /// The exports of `libomptarget_rs_remote.so` (remote/src/lib.rs).
    pub(crate) struct RemoteLib, plugin = "remote", libs = ["libomptarget_rs_remote.so"] {
        required fn omptarget_rs_remote_init(devices: *mut u32) -> c_int;
        required fn omptarget_rs_remote_error(buf: *mut u8, len: usize) -> usize;
        required fn omptarget_rs_remote_describe(device: u32, words: *mut u64, which: u32, buf: *mut u8, len: usize) -> c_int;
        required fn omptarget_rs_remote_alloc(device: u32, size: u64, kind: u32, ptr: *mut u64) -> c_int;
        required fn omptarget_rs_remote_free(device: u32, ptr: u64, kind: u32) -> c_int;
        required fn omptarget_rs_remote_submit(device: u32, dst: u64, src: *const u8, size: u64) -> c_int;
        required fn omptarget_rs_remote_retrieve(device: u32, dst: *mut u8, src: u64, size: u64) -> c_int;
        required fn omptarget_rs_remote_memset(device: u32, ptr: u64, value: u8, size: u64) -> c_int;
        required fn omptarget_rs_remote_exchange(src_device: u32, src: u64, dst_device: u32, dst: u64, size: u64) -> c_int;
        required fn omptarget_rs_remote_load(device: u32, image: *const u8, len: usize, handle: *mut u64) -> c_int;
        required fn omptarget_rs_remote_unload(device: u32, image: u64) -> c_int;
        required fn omptarget_rs_remote_symbol(device: u32, image: u64, name: *const u8, len: usize, global: u32, size: u64, result: *mut u64) -> c_int;
        required fn omptarget_rs_remote_launch(device: u32, kernel: u64, args: *const u64, n: u32, teams: u32, threads: u32, tripcount: u64) -> c_int;
        required fn omptarget_rs_remote_shutdown() -> c_int;
        required fn omptarget_rs_remote_queue_create(handle: *mut u64) -> c_int;
        required fn omptarget_rs_remote_submit_async(device: u32, dst: u64, src: *const u8, size: u64, q: u64) -> c_int;
        required fn omptarget_rs_remote_retrieve_async(device: u32, dst: *mut u8, src: u64, size: u64, q: u64) -> c_int;
        required fn omptarget_rs_remote_launch_async(device: u32, kernel: u64, args: *const u64, n: u32, teams: u32, threads: u32, tripcount: u64, q: u64) -> c_int;
        required fn omptarget_rs_remote_queue_sync(q: u64, wait: u32, done: *mut u32) -> c_int;
        required fn omptarget_rs_remote_event_record(q: u64, handle: *mut u64) -> c_int;
        required fn omptarget_rs_remote_event_wait(handle: u64, device: u32, q: u64) -> c_int;
        required fn omptarget_rs_remote_event_release(handle: u64) -> c_int;
    }
}

/// Whether this process is rank 0 of an Open MPI job whose later
/// application contexts are servers (read from the environment only; no
/// library is touched).
pub fn mpi_job_with_servers() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| {
        let var = |n: &str| std::env::var(n).ok();
        if var("OMPTARGET_RS_REMOTE").is_some_and(|v| !crate::base::config::parse_bool(Some(&v), true)) {
            return false;
        }
        let rank0 = var("OMPI_COMM_WORLD_RANK").is_some_and(|r| r.trim() == "0");
        let apps = var("OMPI_APP_CTX_NUM_PROCS").map(|v| v.split_whitespace().count()).unwrap_or(0);
        rank0 && apps >= 2
    })
}

struct RemoteDevice {
    rank: i32,
    properties: DeviceProperties,
    uid: String,
    info: String,
    unit_kind: String,
    /// The ELF machine of the images the server's plugin for this device
    /// runs (from the plugin's name there).
    machine: Option<u16>,
}

struct Remote {
    lib: RemoteLib,
    devices: Vec<RemoteDevice>,
}

/// The remote plugin.
#[derive(Default)]
pub struct RemotePlugin {
    state: OnceLock<Option<Remote>>,
    /// Queues given back, for the next `queue_acquire`.
    free_queues: parking_lot::Mutex<Vec<QueueHandle>>,
}

/// Called at exit (registered once the servers answered): shuts the
/// servers down and finalises MPI, before the libraries' destructors.
extern "C" fn at_exit() {
    if let Some(shutdown) = SHUTDOWN.get() {
        // SAFETY: an export of the remote library, which the (leaked) plugin keeps loaded until exit; it catches its own panics.
        unsafe { shutdown() };
    }
}

/// The remote library's shutdown, once the servers answered (for the exit handler).
static SHUTDOWN: OnceLock<unsafe extern "C" fn() -> c_int> = OnceLock::new();

/// The directory of this library (where the workspace build puts the remote library).
fn own_dir() -> Option<String> {
    // SAFETY: Dl_info is plain data; dladdr fills it for an address inside this library.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: any address is allowed; `own_dir` is a function of this object.
    if unsafe { libc::dladdr(own_dir as *const libc::c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's file name is a NUL-terminated string owned by ld.so.
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname as *const c_char) }.to_string_lossy().into_owned();
    // Through symbolic links (libomptarget.so.22.1 -> target/release/libomptarget_rs.so).
    let path = std::fs::canonicalize(&path).unwrap_or_else(|_| path.into());
    let dir = path.parent()?.to_string_lossy().into_owned();
    Some(if dir.is_empty() { ".".into() } else { dir })
}

impl RemoteLib {
    fn load() -> Result<Self> {
        if let Ok(p) = std::env::var("OMPTARGET_RS_REMOTE_LIB") {
            return Self::open(&p);
        }
        if let Some(dir) = own_dir() {
            let p = format!("{dir}/{}", Self::LIBS[0]);
            if std::path::Path::new(&p).exists() {
                return Self::open(&p);
            }
        }
        Self::open(Self::LIBS[0])
    }

    /// The thread's last error text of the library.
    fn error(&self, call: &'static str) -> OffloadError {
        let mut buf = vec![0u8; 1024];
        // SAFETY: buf is 1024 writable bytes.
        unsafe { (self.omptarget_rs_remote_error)(buf.as_mut_ptr(), buf.len()) };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        OffloadError::Driver { plugin: "remote", call, message: String::from_utf8_lossy(&buf[..end]).into_owned() }
    }

    fn check(&self, rc: c_int, call: &'static str) -> Result<()> {
        if rc == 0 { Ok(()) } else { Err(self.error(call)) }
    }
}

fn text(lib: &RemoteLib, device: u32, which: u32) -> String {
    let mut buf = vec![0u8; 4096];
    // SAFETY: buf is 4096 writable bytes; words may be null.
    unsafe { (lib.omptarget_rs_remote_describe)(device, std::ptr::null_mut(), which, buf.as_mut_ptr(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn describe(lib: &RemoteLib, device: u32) -> RemoteDevice {
    let mut w = [0u64; 23];
    // SAFETY: w is 23 writable words; no text asked (buf null, len 0).
    let rank = unsafe { (lib.omptarget_rs_remote_describe)(device, w.as_mut_ptr(), 99, std::ptr::null_mut(), 0) };
    let u = |i: usize| u32::try_from(w[i]).unwrap_or(u32::MAX);
    let name = text(lib, device, 0);
    let properties = DeviceProperties {
        device_type: if w[0] == 1 { DeviceType::Gpu } else { DeviceType::Cpu },
        name: format!("{name} (MPI rank {rank})"),
        product: text(lib, device, 1),
        vendor: text(lib, device, 2),
        vendor_id: u(1),
        driver_version: text(lib, device, 3),
        max_group_size: u(2),
        max_group_dims: [u(3), u(4), u(5)],
        max_groups: [u(6), u(7), u(8)],
        compute_units: u(9),
        clock_mhz: u(10),
        memory_clock_mhz: u(11),
        address_bits: u(12),
        global_memory: w[13],
        local_memory: w[14],
        simd_width: u(15),
        vector_widths: [u(16), u(17), u(18), u(19), u(20), u(21), u(22)],
    };
    RemoteDevice {
        rank,
        properties,
        uid: format!("mpi-rank-{rank}:{}", text(lib, device, 4)),
        info: format!("    MPI server rank:\t\t\t{rank} ({} plugin there)\n{}", text(lib, device, 7), text(lib, device, 5)),
        unit_kind: text(lib, device, 6),
        machine: match text(lib, device, 7).as_str() {
            "x86_64" => Some(machine::X86_64),
            "cuda" => Some(machine::CUDA),
            "amdgpu" => Some(machine::AMDGPU),
            _ => None,
        },
    }
}

impl RemotePlugin {
    fn state(&self) -> Option<&Remote> {
        self.state
            .get_or_init(|| {
                if !mpi_job_with_servers() {
                    return None;
                }
                let lib = match RemoteLib::load() {
                    Ok(l) => l,
                    Err(e) => {
                        crate::base::diag::report(&format!("remote devices over MPI unavailable: {e}"));
                        return None;
                    }
                };
                crate::debug!("remote plugin: loaded {}", lib.path);
                let mut n = 0u32;
                // SAFETY: n is a writable u32.
                if let Err(e) = lib.check(unsafe { (lib.omptarget_rs_remote_init)(&mut n) }, "init") {
                    crate::base::diag::report(&format!("remote devices over MPI unavailable: {e}"));
                    return None;
                }
                let devices = (0..n).map(|d| describe(&lib, d)).collect::<Vec<_>>();
                let _ = SHUTDOWN.set(lib.omptarget_rs_remote_shutdown);
                // SAFETY: registering a plain extern "C" fn that catches panics; this library stays loaded until exit.
                unsafe { libc::atexit(at_exit) };
                crate::debug!("remote plugin: {} devices on {} server ranks", devices.len(), {
                    let mut r: Vec<i32> = devices.iter().map(|d| d.rank).collect();
                    r.dedup();
                    r.len()
                });
                Some(Remote { lib, devices })
            })
            .as_ref()
    }

    fn remote(&self) -> Result<&Remote> {
        self.state
            .get()
            .and_then(Option::as_ref)
            .ok_or_else(|| OffloadError::PluginUnavailable { plugin: "remote", reason: "not initialised".into() })
    }

    /// The plugin, once a copy of `size` bytes on `device` is known to fit
    /// its memory. A larger one is refused here, before any host byte is
    /// sent: the server would refuse its range too, but the transfer's
    /// first piece would already read past the caller's host buffer (with
    /// Open MPI's shared-memory transport the server reads it, and a bad
    /// address ends the server).
    fn for_copy(&self, device: usize, size: u64, what: &str) -> Result<&Remote> {
        let r = self.remote()?;
        let Some(d) = r.devices.get(device) else { return Ok(r) };
        let memory = d.properties.global_memory;
        if memory != 0 && size > memory {
            return Err(OffloadError::InvalidArgument(format!(
                "{what} of {size} bytes exceeds the {memory} bytes of memory of the remote device on MPI rank {}",
                d.rank
            )));
        }
        Ok(r)
    }
}

fn dev32(device: usize) -> u32 {
    u32::try_from(device).unwrap_or(u32::MAX)
}

fn kind_code(kind: AllocKind) -> u32 {
    match kind {
        AllocKind::Device => 0,
        AllocKind::Host => 1,
        AllocKind::Shared => 2,
        AllocKind::Default => 3,
    }
}

impl Plugin for RemotePlugin {
    fn name(&self) -> &'static str {
        "remote"
    }

    fn is_compatible(&self, image: &[u8]) -> bool {
        mpi_job_with_servers() && elf_ident(image).is_ok_and(|e| [machine::X86_64, machine::CUDA, machine::AMDGPU].contains(&e.machine))
    }

    /// A remote device takes the images of its server's plugin: x86-64
    /// shared objects for CPU devices, CUDA or AMDGPU ELF images for GPUs
    /// (whose architecture the server checks when loading).
    fn is_device_compatible(&self, device: usize, image: &[u8]) -> bool {
        let want = self.remote().ok().and_then(|r| r.devices.get(device)).and_then(|d| d.machine);
        elf_ident(image).is_ok_and(|e| Some(e.machine) == want)
    }

    /// The server loads images through its own device layer, which serves
    /// their RPC clients on the server's node.
    fn serves_rpc_itself(&self) -> bool {
        true
    }

    /// A server's memory is another process's: kernels there cannot
    /// dereference the program's host pointers, nor can CPU-image code
    /// (which calls `declare target indirect` pointers as they are) call
    /// the program's functions.
    fn supports(&self, image: &[u8], needs: ProgramNeeds) -> std::result::Result<(), String> {
        if needs.unified_shared_memory {
            return Err("remote devices cannot run a program that requires unified_shared_memory: their memory is another process's".into());
        }
        if needs.indirect_calls && elf_ident(image).is_ok_and(|e| e.machine == machine::X86_64) {
            return Err("remote CPU devices cannot run an x86-64 image with declare target indirect functions: its code calls the program's host function pointers, which are not in the server's process".into());
        }
        Ok(())
    }

    fn number_of_devices(&self) -> usize {
        self.state().map_or(0, |r| r.devices.len())
    }

    fn eager_init(&self) -> bool {
        mpi_job_with_servers()
    }

    fn load_binary(&self, device: usize, image: &[u8]) -> Result<ImageHandle> {
        if elf_ident(image).is_ok_and(|e| e.machine == machine::X86_64) {
            crate::base::elf::check_shared_object(image)?;
        }
        let r = self.remote()?;
        let mut h = 0u64;
        // SAFETY: image is readable for the call; h writable.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_load)(dev32(device), image.as_ptr(), image.len(), &mut h) }, "image load")?;
        Ok(h as ImageHandle)
    }

    fn unload_binary(&self, device: usize, image: ImageHandle) -> Result<()> {
        let r = self.remote()?;
        // SAFETY: plain values.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_unload)(dev32(device), image as u64) }, "image unload")
    }

    fn unload_at_exit(&self) -> bool {
        // The servers unload everything when they shut down.
        false
    }

    fn get_function(&self, device: usize, image: ImageHandle, name: &str) -> Result<KernelHandle> {
        let r = self.remote()?;
        let mut k = 0u64;
        // SAFETY: name is readable for the call; k writable.
        let rc = unsafe { (r.lib.omptarget_rs_remote_symbol)(dev32(device), image as u64, name.as_ptr(), name.len(), 0, 0, &mut k) };
        r.lib.check(rc, "kernel look-up")?;
        Ok(k)
    }

    fn get_global(&self, device: usize, image: ImageHandle, name: &str, size: u64) -> Result<u64> {
        let r = self.remote()?;
        let mut g = 0u64;
        // SAFETY: name is readable for the call; g writable.
        let rc = unsafe { (r.lib.omptarget_rs_remote_symbol)(dev32(device), image as u64, name.as_ptr(), name.len(), 1, size, &mut g) };
        r.lib.check(rc, "global look-up")?;
        Ok(g)
    }

    fn alloc(&self, device: usize, size: u64, kind: AllocKind) -> Result<u64> {
        if matches!(kind, AllocKind::Host | AllocKind::Shared) {
            // Host and shared memory are memory the program dereferences;
            // a server's is another process's.
            return Err(OffloadError::InvalidArgument(format!(
                "remote devices have no {} memory: nothing the program's host can dereference",
                if kind == AllocKind::Host { "host" } else { "shared" }
            )));
        }
        let r = self.remote()?;
        let mut p = 0u64;
        // SAFETY: p is writable.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_alloc)(dev32(device), size, kind_code(kind), &mut p) }, "alloc")?;
        Ok(p)
    }

    fn free(&self, device: usize, ptr: u64, kind: AllocKind) -> Result<()> {
        let r = self.remote()?;
        // SAFETY: plain values.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_free)(dev32(device), ptr, kind_code(kind)) }, "free")
    }

    unsafe fn submit(&self, device: usize, dst: u64, src: usize, size: u64) -> Result<()> {
        let r = self.for_copy(device, size, "copy to device")?;
        // SAFETY: the caller keeps [src, src+size) readable (trait contract).
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_submit)(dev32(device), dst, src as *const u8, size) }, "copy to device")
    }

    unsafe fn retrieve(&self, device: usize, dst: usize, src: u64, size: u64) -> Result<()> {
        let r = self.for_copy(device, size, "copy from device")?;
        // SAFETY: the caller keeps [dst, dst+size) writable (trait contract).
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_retrieve)(dev32(device), dst as *mut u8, src, size) }, "copy from device")
    }

    fn exchange(&self, src_device: usize, src: u64, dst_device: usize, dst: u64, size: u64) -> Result<()> {
        self.for_copy(dst_device, size, "device-to-device copy")?;
        let r = self.for_copy(src_device, size, "device-to-device copy")?;
        // SAFETY: plain values; the library checks both devices.
        let rc = unsafe { (r.lib.omptarget_rs_remote_exchange)(dev32(src_device), src, dev32(dst_device), dst, size) };
        r.lib.check(rc, "device-to-device copy")
    }

    fn memset(&self, device: usize, ptr: u64, value: u8, size: u64) -> Result<()> {
        let r = self.remote()?;
        // SAFETY: plain values.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_memset)(dev32(device), ptr, value, size) }, "memset")
    }

    fn launch(&self, device: usize, kernel: KernelHandle, _name: &str, args: &[u64], dims: &LaunchDims) -> Result<()> {
        let r = self.remote()?;
        let n = u32::try_from(args.len()).map_err(|_| OffloadError::InvalidArgument("too many kernel arguments".into()))?;
        let (teams, threads) = (dims.teams[0], dims.threads[0]);
        // SAFETY: args is readable for n words.
        let rc = unsafe { (r.lib.omptarget_rs_remote_launch)(dev32(device), kernel, args.as_ptr(), n, teams, threads, dims.tripcount) };
        r.lib.check(rc, "launch")
    }

    // Queues: requests sent one after the other without waiting for their
    // replies (the client library keeps them in flight, in order); a
    // synchronisation waits for all of them. Servers run each queue's
    // requests in order on a thread of the queue's own. An event is a point
    // in a queue: another queue on the same server waits for it there; any
    // other waits on this rank until the event's requests have completed.
    fn has_queues(&self) -> bool {
        true
    }

    fn queue_acquire(&self, _device: usize) -> Result<QueueHandle> {
        if let Some(q) = self.free_queues.lock().pop() {
            return Ok(q);
        }
        let r = self.remote()?;
        let mut q = 0u64;
        // SAFETY: q is writable.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_queue_create)(&mut q) }, "queue create")?;
        Ok(q)
    }

    fn queue_synchronize(&self, _device: usize, queue: QueueHandle) -> Result<()> {
        let r = self.remote()?;
        // SAFETY: done may be null when waiting.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_queue_sync)(queue, 1, std::ptr::null_mut()) }, "queue synchronize")
    }

    fn queue_query(&self, _device: usize, queue: QueueHandle) -> Result<bool> {
        let r = self.remote()?;
        let mut done = 0u32;
        // SAFETY: done is writable.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_queue_sync)(queue, 0, &mut done) }, "queue query")?;
        Ok(done != 0)
    }

    fn queue_release(&self, _device: usize, queue: QueueHandle) {
        self.free_queues.lock().push(queue);
    }

    unsafe fn submit_async(&self, device: usize, dst: u64, src: usize, size: u64, queue: QueueHandle) -> Result<()> {
        let r = self.for_copy(device, size, "copy to device")?;
        // SAFETY: the caller keeps [src, src+size) readable until the queue is synchronised (trait contract).
        let rc = unsafe { (r.lib.omptarget_rs_remote_submit_async)(dev32(device), dst, src as *const u8, size, queue) };
        r.lib.check(rc, "copy to device")
    }

    unsafe fn retrieve_async(&self, device: usize, dst: usize, src: u64, size: u64, queue: QueueHandle) -> Result<()> {
        let r = self.for_copy(device, size, "copy from device")?;
        // SAFETY: the caller keeps [dst, dst+size) writable until the queue is synchronised (trait contract).
        let rc = unsafe { (r.lib.omptarget_rs_remote_retrieve_async)(dev32(device), dst as *mut u8, src, size, queue) };
        r.lib.check(rc, "copy from device")
    }

    fn launch_async(
        &self,
        device: usize,
        kernel: KernelHandle,
        _name: &str,
        args: &[u64],
        dims: &LaunchDims,
        queue: QueueHandle,
    ) -> Result<()> {
        let r = self.remote()?;
        let n = u32::try_from(args.len()).map_err(|_| OffloadError::InvalidArgument("too many kernel arguments".into()))?;
        // SAFETY: args is readable for n words during the call (the library copies them).
        let rc = unsafe {
            (r.lib.omptarget_rs_remote_launch_async)(
                dev32(device),
                kernel,
                args.as_ptr(),
                n,
                dims.teams[0],
                dims.threads[0],
                dims.tripcount,
                queue,
            )
        };
        r.lib.check(rc, "launch")
    }

    fn event_record(&self, _device: usize, queue: QueueHandle) -> Result<EventHandle> {
        let r = self.remote()?;
        let mut e = 0u64;
        // SAFETY: e is writable.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_event_record)(queue, &mut e) }, "event record")?;
        Ok(e)
    }

    fn event_wait(&self, device: usize, event: EventHandle, queue: QueueHandle) -> Result<()> {
        let r = self.remote()?;
        // SAFETY: plain values.
        r.lib.check(unsafe { (r.lib.omptarget_rs_remote_event_wait)(event, dev32(device), queue) }, "event wait")
    }

    fn event_release(&self, _device: usize, event: EventHandle) {
        if let Ok(r) = self.remote() {
            // SAFETY: plain value; an unknown handle is an error the library reports, not a crash.
            let _ = unsafe { (r.lib.omptarget_rs_remote_event_release)(event) };
        }
    }

    fn compute_unit_kind(&self, device: usize) -> String {
        self.remote().ok().and_then(|r| r.devices.get(device)).map_or_else(|| "unknown".into(), |d| d.unit_kind.clone())
    }

    fn uid(&self, device: usize) -> String {
        self.remote().ok().and_then(|r| r.devices.get(device)).map_or_else(String::new, |d| d.uid.clone())
    }

    fn device_info(&self, device: usize) -> String {
        self.remote().ok().and_then(|r| r.devices.get(device)).map_or_else(String::new, |d| d.info.clone())
    }

    fn properties(&self, device: usize) -> DeviceProperties {
        self.remote().ok().and_then(|r| r.devices.get(device)).map_or_else(DeviceProperties::default, |d| d.properties.clone())
    }
}
