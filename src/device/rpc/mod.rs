//! The RPC server of the GPU plugins (device-to-host calls), shared by the
//! CUDA and AMDGPU plugins: LLVM 22.1's protocol (`libc/shared/rpc.h`,
//! [`protocol`]) and the opcodes LLVM's server handles that matter
//! ([`serve`]): writes to stdout/stderr, printf, malloc/free, exit/abort,
//! and user opcodes through the handlers an API registered
//! (liboffload's `olPlatformRegisterRPCCallback`, [`register`]).
//!
//! An image that defines `__llvm_rpc_client` gets a server when it is loaded
//! ([`attach`], from [`super::Device::load_image`]): a buffer of host memory
//! the device can reach, whose addresses are written into the client
//! object. One host thread serves every attached image while any is loaded
//! and stops when the last one is unloaded. Images without a client cost
//! nothing: no buffer, no thread, and launches do not look at RPC at all.
//! See docs/rpc.md.

pub mod printf;
pub mod protocol;

use core::ffi::c_void;
use parking_lot::Mutex;

/// An RPC handler: `(port, lanes) -> status`.
pub type Handler = unsafe extern "C" fn(port: *mut c_void, lanes: u32) -> u32;

/// (plugin name, handler), in registration order.
static HANDLERS: Mutex<Vec<(&'static str, usize)>> = Mutex::new(Vec::new());

/// Registers `handler` for the devices of `plugin`; registering the same
/// handler again for the same plugin keeps one entry.
pub fn register(plugin: &'static str, handler: Handler) {
    let mut h = HANDLERS.lock();
    let entry = (plugin, handler as usize);
    if !h.contains(&entry) {
        h.push(entry);
    }
}

/// The handlers registered for `plugin`, in registration order.
pub fn handlers(plugin: &str) -> Vec<Handler> {
    HANDLERS
        .lock()
        .iter()
        .filter(|(p, _)| *p == plugin)
        .map(|&(_, f)| {
            // SAFETY: every entry was stored from a `Handler` by `register`.
            unsafe { std::mem::transmute::<usize, Handler>(f) }
        })
        .collect()
}

/// Fork safety: the handler list and the servers' list.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&HANDLERS) && held.mutex(&SERVERS) && held.mutex(&THREAD)
}

/// In a forked child: the parent's serving thread does not exist here and
/// its buffers belong to the parent's device contexts; forget them (the
/// child serves the images it loads itself).
pub(crate) fn forked_child() {
    let mut all = SERVERS.lock();
    std::mem::forget(std::mem::take(&mut *all));
    GENERATION.fetch_add(1, Ordering::AcqRel);
    RUNNING.store(false, Ordering::Release);
    if let Some(h) = THREAD.lock().take() {
        std::mem::forget(h);
    }
}

// ---------------------------------------------------------------- server ---

use super::Device;
use crate::base::cstream::CStream;
use crate::base::error::{OffloadError, Result};
use crate::base::image::{SymbolKind, own_symbol};
use crate::plugins::{AllocKind, ImageHandle};
use protocol::{Buffer, CLIENT_BYTES, Port, Process, RPC_SUCCESS, RPC_UNHANDLED_OPCODE, Stall};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The symbol of the device-side client object (`rpc::Client`).
pub const CLIENT_SYMBOL: &str = "__llvm_rpc_client";

/// LLVM's libc opcodes (`libc/shared/rpc_opcodes.h`): `'c' << 24 | n`.
pub mod opcode {
    const fn libc(n: u32) -> u32 {
        (b'c' as u32) << 24 | n
    }
    pub const NOOP: u32 = libc(0);
    pub const EXIT: u32 = libc(1);
    pub const WRITE_TO_STDOUT: u32 = libc(2);
    pub const WRITE_TO_STDERR: u32 = libc(3);
    pub const WRITE_TO_STREAM: u32 = libc(4);
    pub const WRITE_TO_STDOUT_NEWLINE: u32 = libc(5);
    pub const MALLOC: u32 = libc(10);
    pub const FREE: u32 = libc(11);
    pub const ABORT: u32 = libc(13);
    pub const FFLUSH: u32 = libc(19);
    pub const PRINTF_TO_STDOUT: u32 = libc(21);
    pub const PRINTF_TO_STDERR: u32 = libc(22);
    pub const PRINTF_TO_STREAM: u32 = libc(23);
    pub const PRINTF_TO_STDOUT_PACKED: u32 = libc(24);
    pub const PRINTF_TO_STDERR_PACKED: u32 = libc(25);
    pub const PRINTF_TO_STREAM_PACKED: u32 = libc(26);
}

/// Largest single transfer the server keeps (a write, a format, its
/// arguments, a string); larger ones are read and dropped.
const MAX_TRANSFER: u64 = 64 << 20;

/// Ports of one buffer (`OMPTARGET_RS_RPC_PORTS`, 1..4096; default 512:
/// enough that a warp or wave rarely waits for a port).
fn port_count() -> u32 {
    std::env::var("OMPTARGET_RS_RPC_PORTS")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(512)
        .min(protocol::MAX_PORT_COUNT)
}

/// The server's process, kept behind the server's lock.
struct ProcessCell(Process);
// SAFETY: the raw pointers point into the server's buffer, which lives as
// long as the server; the process is only used under the server's mutex.
unsafe impl Send for ProcessCell {}

/// The server of one loaded image with a client.
struct Server {
    dev: &'static Device,
    image: ImageHandle,
    /// The buffer: host memory the device reaches at the same address.
    base: u64,
    lanes: u32,
    process: Mutex<ProcessCell>,
    /// Device memory handed out by `MALLOC`: only these are freed by `FREE`.
    allocations: Mutex<HashSet<u64>>,
    /// Set after a call could not be served: the image is served no more.
    broken: AtomicBool,
}

static SERVERS: Mutex<Vec<Arc<Server>>> = Mutex::new(Vec::new());
/// Whether any server was ever attached (unloads look no further otherwise).
static ANY: AtomicBool = AtomicBool::new(false);
/// Whether the serving thread runs (changed under `SERVERS`).
static RUNNING: AtomicBool = AtomicBool::new(false);
/// The generation of the serving thread: a thread ends when it changes.
static GENERATION: AtomicUsize = AtomicUsize::new(0);
/// The serving thread, joined when the last image with a client goes.
static THREAD: Mutex<Option<std::thread::JoinHandle<()>>> = Mutex::new(None);
/// Serving threads started so far (tests and debug output).
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// Number of serving threads this process started.
pub fn threads_started() -> usize {
    STARTED.load(Ordering::Relaxed)
}

/// Whether `image` defines the client object: a byte search first (glibc's
/// `memmem`, well under a millisecond a megabyte, for the usual image
/// without one), then its symbol table.
pub fn has_client(image: &[u8]) -> bool {
    let name = CLIENT_SYMBOL.as_bytes();
    // SAFETY: both ranges are valid for the lengths given; memmem only reads them.
    let found = unsafe { libc::memmem(image.as_ptr().cast(), image.len(), name.as_ptr().cast(), name.len()) };
    if found.is_null() {
        return false;
    }
    own_symbol(image, CLIENT_SYMBOL, SymbolKind::Global).is_ok()
}

/// Starts serving the client of `image` (just loaded on `dev` as `handle`):
/// allocates the buffer, writes the client object, starts the thread.
pub fn attach(dev: &'static Device, handle: ImageHandle, image: &[u8]) -> Result<()> {
    let (p, d) = (dev.plugin, dev.plugin_device);
    let size = own_symbol(image, CLIENT_SYMBOL, SymbolKind::Global)?;
    if let Some(s) = size
        && s != 0
        && s < CLIENT_BYTES as u64
    {
        return Err(OffloadError::InvalidArgument(format!(
            "{CLIENT_SYMBOL} has {s} bytes in the image, LLVM's rpc::Client has {CLIENT_BYTES}"
        )));
    }
    let lanes = match dev.properties().simd_width {
        0 => 32,
        w => w.min(64),
    };
    let ports = port_count();
    let bytes = protocol::allocation_size(lanes, ports);
    let base = p.alloc(d, bytes, AllocKind::Host)?;
    if base == 0 {
        return Err(OffloadError::OutOfDeviceMemory { bytes });
    }
    // SAFETY: `base` is a fresh host allocation of `bytes` bytes (AllocKind::Host is host memory).
    unsafe { std::ptr::write_bytes(base as usize as *mut u8, 0, bytes as usize) };
    let client = protocol::client_bytes(ports, base);
    let wrote = p.get_global(d, handle, CLIENT_SYMBOL, CLIENT_BYTES as u64).and_then(|addr| {
        // SAFETY: `client` is CLIENT_BYTES readable bytes; `addr` is the image's client object, which the symbol table says holds at least that many.
        unsafe { p.submit(d, addr, client.as_ptr() as usize, CLIENT_BYTES as u64) }
    });
    if let Err(e) = wrote {
        let _ = p.free(d, base, AllocKind::Host);
        return Err(e);
    }
    crate::debug!("rpc: device {}: image {handle:#x} has {CLIENT_SYMBOL}: {ports} ports x {lanes} lanes at {base:#x}", dev.id);
    let server = Arc::new(Server {
        dev,
        image: handle,
        base,
        lanes,
        process: Mutex::new(ProcessCell(Process::new(ports, base as usize))),
        allocations: Mutex::new(HashSet::new()),
        broken: AtomicBool::new(false),
    });
    let mut all = SERVERS.lock();
    all.push(server);
    ANY.store(true, Ordering::Release);
    if !RUNNING.swap(true, Ordering::AcqRel) {
        STARTED.fetch_add(1, Ordering::Relaxed);
        crate::debug!("rpc: server thread started");
        let generation = GENERATION.load(Ordering::Acquire);
        let spawned = std::thread::Builder::new().name("omptarget-rpc".into()).spawn(move || serve_loop(generation));
        match spawned {
            Ok(h) => {
                *THREAD.lock() = Some(h);
            }
            Err(e) => {
                RUNNING.store(false, Ordering::Release);
                all.pop();
                drop(all);
                let _ = p.free(d, base, AllocKind::Host);
                return Err(OffloadError::Internal(format!("cannot start the RPC server thread: {e}")));
            }
        }
    }
    Ok(())
}

/// Stops serving `image` of device `id` (before it is unloaded) and frees
/// its buffer. Nothing to do, and nearly no cost, for images without a client.
pub fn detach(id: usize, image: ImageHandle) {
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    let (server, thread) = {
        let mut all = SERVERS.lock();
        let Some(i) = all.iter().position(|s| s.dev.id == id && s.image == image) else { return };
        let s = all.remove(i);
        // No image with a client is left: the thread ends (within one call
        // or sleep); it is joined below so that none outlives its images.
        let t = if all.is_empty() && RUNNING.swap(false, Ordering::AcqRel) {
            GENERATION.fetch_add(1, Ordering::AcqRel);
            THREAD.lock().take()
        } else {
            None
        };
        (s, t)
    };
    if let Some(h) = thread
        && h.thread().id() != std::thread::current().id()
    {
        let _ = h.join();
    }
    // The thread may be in the middle of a call of this image: wait for it
    // (bounded: a call waits for its client at most the timeout).
    let deadline = std::time::Instant::now() + protocol::timeout() + Duration::from_secs(1);
    while Arc::strong_count(&server) > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_micros(100));
    }
    if Arc::strong_count(&server) == 1 {
        let _ = server.dev.plugin.free(server.dev.plugin_device, server.base, AllocKind::Host);
    }
}

/// The serving thread: polls every attached buffer, sleeping a little
/// longer each time nothing was pending; returns when no image is attached.
fn serve_loop(generation: usize) {
    let mut idle = 0u32;
    loop {
        let list: Vec<Arc<Server>> = {
            let all = SERVERS.lock();
            if GENERATION.load(Ordering::Acquire) != generation {
                crate::debug!("rpc: server thread ends (no image with a client is loaded)");
                return;
            }
            all.clone()
        };
        let mut busy = false;
        for s in &list {
            if !s.broken.load(Ordering::Relaxed) {
                busy |= s.poll();
            }
        }
        drop(list);
        if busy {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        match idle {
            0..64 => std::thread::yield_now(),
            64..2000 => std::thread::sleep(Duration::from_micros(50)),
            _ => std::thread::sleep(Duration::from_micros(500)),
        }
    }
}

impl Server {
    /// Serves every pending port once; whether any was pending.
    fn poll(&self) -> bool {
        let mut cell = self.process.lock();
        let mut start = 0;
        let mut any = false;
        while let Some(mut port) = cell.0.try_open(self.lanes, start) {
            any = true;
            start = port.index + 1;
            let op = port.opcode();
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.handle(&mut port))) {
                Ok(Ok(status)) => {
                    port.close();
                    if status != RPC_SUCCESS {
                        crate::base::diag::report(&format!(
                            "RPC server, device {}: unhandled or invalid RPC opcode {op:#010x}{} (status {status:#x}): no handler knows it; the port was handed back unanswered",
                            self.dev.id,
                            describe(op)
                        ));
                    }
                }
                Ok(Err(stall)) => {
                    self.broken.store(true, Ordering::Relaxed);
                    let why = match stall {
                        Stall::Timeout(t) => format!("the device stopped answering for {:.1} s", t.as_secs_f64()),
                        Stall::Corrupt(w) => format!("the mailbox is corrupt ({w})"),
                    };
                    crate::base::diag::report(&format!(
                        "RPC server, device {}: opcode {op:#010x}{} on port {}: {why}; this image is no longer served",
                        self.dev.id,
                        describe(op),
                        port.index
                    ));
                    return true;
                }
                Err(_) => {
                    self.broken.store(true, Ordering::Relaxed);
                    crate::base::diag::report(&format!(
                        "RPC server, device {}: serving opcode {op:#010x} failed; this image is no longer served",
                        self.dev.id
                    ));
                    return true;
                }
            }
        }
        any
    }

    /// Serves one call: registered handlers first (in order), then ours.
    fn handle(&self, port: &mut Port) -> std::result::Result<u32, Stall> {
        for h in handlers(self.dev.plugin.name()) {
            // SAFETY: `port` has LLVM's `rpc::Port<true>` layout and lives for the call; the handler was registered to receive exactly this.
            let status = unsafe { h(port as *mut Port as *mut c_void, self.lanes) };
            if status != RPC_UNHANDLED_OPCODE {
                return Ok(status);
            }
        }
        let op = port.opcode();
        match op {
            opcode::NOOP => port.recv(|_, _| {}).map(|_| RPC_SUCCESS),
            opcode::WRITE_TO_STDOUT | opcode::WRITE_TO_STDERR | opcode::WRITE_TO_STREAM | opcode::WRITE_TO_STDOUT_NEWLINE => {
                self.write(port, op)
            }
            opcode::PRINTF_TO_STDOUT
            | opcode::PRINTF_TO_STDERR
            | opcode::PRINTF_TO_STREAM
            | opcode::PRINTF_TO_STDOUT_PACKED
            | opcode::PRINTF_TO_STDERR_PACKED
            | opcode::PRINTF_TO_STREAM_PACKED => self.printf(port, op),
            opcode::FFLUSH => port
                .recv_and_send(|_, b| {
                    b.data[0] = match stream(b.data[0]) {
                        Some(s) => crate::base::cstream::c_flush(s) as u64,
                        None => (-1i64) as u64,
                    }
                })
                .map(|_| RPC_SUCCESS),
            opcode::MALLOC => self.malloc(port).map(|_| RPC_SUCCESS),
            opcode::FREE => self.free(port).map(|_| RPC_SUCCESS),
            opcode::EXIT => {
                port.recv_and_send(|_, _| {})?;
                let mut status = 0i32;
                port.recv(|_, b| status = b.data[0] as u32 as i32)?;
                crate::debug!("rpc: device {}: the kernel called exit({status})", self.dev.id);
                crate::base::cstream::c_flush_all();
                // SAFETY: ends the process at once, as LLVM's server does (quick_exit); the C streams were flushed just above.
                unsafe { libc::_exit(status) }
            }
            opcode::ABORT => {
                port.recv_and_send(|_, _| {})?;
                port.recv(|_, _| {})?;
                crate::base::diag::report(&format!("device {} called abort()", self.dev.id));
                crate::base::cstream::c_flush_all();
                std::process::abort()
            }
            _ => Ok(RPC_UNHANDLED_OPCODE),
        }
    }

    fn write(&self, port: &mut Port, op: u32) -> std::result::Result<u32, Stall> {
        let mut files = [None; 64];
        if op == opcode::WRITE_TO_STREAM {
            port.recv(|l, b| files[l as usize] = stream(b.data[0]))?;
        } else {
            let s = if op == opcode::WRITE_TO_STDERR { CStream::Stderr } else { CStream::Stdout };
            files = [Some(s); 64];
        }
        let (mut strs, too_big) = port.recv_n(MAX_TRANSFER)?;
        if let Some(n) = too_big {
            crate::base::diag::report(&format!(
                "RPC server, device {}: a write of {n} bytes was dropped (over {MAX_TRANSFER})",
                self.dev.id
            ));
        }
        let newline = op == opcode::WRITE_TO_STDOUT_NEWLINE;
        port.send(|l, b| {
            let s = &mut strs[l as usize];
            b.data[0] = match files[l as usize] {
                Some(f) => {
                    let len = s.len();
                    if newline {
                        s.push(b'\n');
                    }
                    let n = crate::base::cstream::c_write_bytes(f, s);
                    if newline && n == len + 1 { n as u64 } else { n.min(len) as u64 }
                }
                None => 0,
            };
        })?;
        Ok(RPC_SUCCESS)
    }

    fn printf(&self, port: &mut Port, op: u32) -> std::result::Result<u32, Stall> {
        use opcode::*;
        let packed = matches!(op, PRINTF_TO_STDOUT_PACKED | PRINTF_TO_STDERR_PACKED | PRINTF_TO_STREAM_PACKED);
        let mut files = [None; 64];
        if matches!(op, PRINTF_TO_STREAM | PRINTF_TO_STREAM_PACKED) {
            port.recv(|l, b| files[l as usize] = stream(b.data[0]))?;
        } else {
            let s = if matches!(op, PRINTF_TO_STDERR | PRINTF_TO_STDERR_PACKED) { CStream::Stderr } else { CStream::Stdout };
            files = [Some(s); 64];
        }
        let (fmts, _) = port.recv_n(MAX_TRANSFER)?;
        let sizes: Vec<u64> = fmts.iter().map(|f| printf::args_size(cstr(f), packed)).collect();
        port.send(|l, b| b.data[0] = sizes[l as usize])?;
        let (args, _) = port.recv_n(MAX_TRANSFER)?;
        let mut pending: Vec<std::collections::VecDeque<u64>> =
            fmts.iter().zip(&args).map(|(f, a)| printf::string_pointers(cstr(f), a, packed).into()).collect();
        let mut strings: Vec<Vec<Vec<u8>>> = vec![Vec::new(); fmts.len()];
        while port.lanes().any(|l| !pending[l as usize].is_empty()) {
            let mut asked = [false; 64];
            port.send(|l, b| {
                let p = pending[l as usize].pop_front();
                asked[l as usize] = p.is_some();
                b.data[1] = p.unwrap_or(0);
            })?;
            let (got, _) = port.recv_n(MAX_TRANSFER)?;
            for l in port.lanes() {
                if asked[l as usize] {
                    strings[l as usize].push(got[l as usize].clone());
                }
            }
        }
        let mut results = [0u64; 64];
        for l in port.lanes() {
            let l = l as usize;
            let text = printf::format(cstr(&fmts[l]), &args[l], packed, &strings[l]);
            results[l] = match files[l] {
                Some(f) => crate::base::cstream::c_write_bytes(f, &text) as u64,
                None => 0,
            };
        }
        port.send(|l, b| {
            b.data[0] = results[l as usize];
            b.data[1] = 0;
        })?;
        Ok(RPC_SUCCESS)
    }

    fn malloc(&self, port: &mut Port) -> std::result::Result<(), Stall> {
        let (p, d) = (self.dev.plugin, self.dev.plugin_device);
        let limit = self.dev.properties().global_memory;
        port.recv_and_send(|_, b| {
            let size = b.data[0];
            let ptr = if size == 0 || (limit != 0 && size > limit) { 0 } else { p.alloc(d, size, AllocKind::Device).unwrap_or(0) };
            if ptr != 0 {
                self.allocations.lock().insert(ptr);
            }
            b.data[0] = ptr;
        })
    }

    fn free(&self, port: &mut Port) -> std::result::Result<(), Stall> {
        let (p, d) = (self.dev.plugin, self.dev.plugin_device);
        let mut bad = Vec::new();
        port.recv(|_, b: &Buffer| {
            let ptr = b.data[0];
            if ptr == 0 {
                return;
            }
            if self.allocations.lock().remove(&ptr) {
                let _ = p.free(d, ptr, AllocKind::Device);
            } else {
                bad.push(ptr);
            }
        })?;
        for ptr in bad {
            crate::base::diag::report(&format!(
                "RPC server, device {}: free({ptr:#x}): not a pointer the device's malloc returned; ignored",
                self.dev.id
            ));
        }
        Ok(())
    }
}

/// A stream the device names: the encoded standard streams of LLVM's GPU
/// libc (`2` stdout, `3` stderr in the low bits) or the host's own
/// `stdout`/`stderr`; any other `FILE *` is not trusted.
fn stream(v: u64) -> Option<CStream> {
    match v & 3 {
        2 if v >> 2 == 0 => return Some(CStream::Stdout),
        3 if v >> 2 == 0 => return Some(CStream::Stderr),
        _ => {}
    }
    crate::base::cstream::which(v as usize)
}

/// The bytes before the first NUL.
fn cstr(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// `" ('c' 30)"` for libc opcodes, `" ('USER')"` for printable user ones.
fn describe(op: u32) -> String {
    let b = op.to_be_bytes();
    if b[0] == b'c' && op & 0x00ff_ff00 == 0 {
        format!(" (libc opcode {})", op & 0xff)
    } else if b.iter().all(|c| c.is_ascii_graphic()) {
        format!(" ('{}')", String::from_utf8_lossy(&b))
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "C" fn one(_: *mut c_void, lanes: u32) -> u32 {
        lanes
    }

    unsafe extern "C" fn two(_: *mut c_void, _: u32) -> u32 {
        2
    }

    #[test]
    fn handlers_are_kept_per_plugin_in_order_once() {
        register("rpc-test-plugin", one);
        register("rpc-test-plugin", two);
        register("rpc-test-plugin", one);
        let h = handlers("rpc-test-plugin");
        assert_eq!(h.len(), 2);
        // SAFETY: the test's own handlers, which ignore the port.
        assert_eq!(unsafe { h[0](std::ptr::null_mut(), 32) }, 32);
        // SAFETY: as above.
        assert_eq!(unsafe { h[1](std::ptr::null_mut(), 32) }, 2);
        assert!(handlers("rpc-test-other").is_empty());
    }
}
