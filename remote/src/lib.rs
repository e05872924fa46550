//! The client side of remote devices over MPI, as a C-ABI
//! library (`libomptarget_rs_remote.so`) that the runtime's remote plugin
//! (`src/plugins/remote/`) loads on rank 0 of an MPI job whose other
//! application contexts are `omptarget-rs-device` servers.
//!
//! Every export returns 0 on success or -1 with a message for
//! [`omptarget_rs_remote_error`] (per thread), catches panics, and never
//! waits forever: a server that does not answer a ping within the timeout
//! (`OMPTARGET_RS_REMOTE_TIMEOUT`, seconds, default 10) is marked dead and
//! every later request to it fails at once naming its rank.

pub mod wire;

use mpi::ffi;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::c_int;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wire::{Request, WireResult, op};

/// One server rank.
struct Server {
    rank: c_int,
    /// Why it is unusable, once it is.
    dead: Mutex<Option<String>>,
    /// Hashes of the images it has received.
    images: Mutex<HashSet<u64>>,
    /// Serialises image transfers (each image is sent once).
    sending_image: Mutex<()>,
    /// Requests of this process to this server in flight now.
    in_flight: AtomicUsize,
    /// Queued requests to this server not completed yet.
    queued: AtomicUsize,
}

/// Counts a request in flight while it lives.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One remote device: its server and the server's number for it; its
/// description from the HELLO reply.
struct RemoteDevice {
    server: usize,
    device: u64,
    words: [u64; 23],
    strings: [String; 8],
}

struct Client {
    servers: Vec<Server>,
    devices: Vec<RemoteDevice>,
    timeout: Duration,
    ping_every: Duration,
    next_tag: AtomicI32,
    shut_down: AtomicBool,
    /// Copies between servers go through this rank (`OMPTARGET_RS_REMOTE_RELAY=1`).
    relay_copies: bool,
}

static CLIENT: OnceLock<Client> = OnceLock::new();
/// The MPI universe while the client is up (dropped by shutdown: MPI_Finalize).
static UNIVERSE: Mutex<Option<mpi::environment::Universe>> = Mutex::new(None);

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_error(e: String) -> c_int {
    LAST_ERROR.with(|l| *l.borrow_mut() = e);
    -1
}

/// Runs `f`, turning errors and panics into -1 with a message.
fn plain_guard(f: impl FnOnce() -> Result<(), String>) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => set_error(e),
        Err(_) => set_error("remote devices: internal error (panic)".into()),
    }
}

/// Threads inside an export that may use MPI (counted by [`guard`]), so
/// that shutdown finalises MPI only once none is.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Set by shutdown: exports that use MPI fail from then on.
static CLOSING: AtomicBool = AtomicBool::new(false);

/// [`plain_guard`] for an export that may use MPI: counted in [`ACTIVE`]
/// while it runs, refused once shutdown has begun (MPI is finalised then).
fn guard(f: impl FnOnce() -> Result<(), String>) -> c_int {
    // Counted before CLOSING is read (both SeqCst): shutdown sets CLOSING,
    // then waits for the count, so no call it missed can still be using MPI.
    ACTIVE.fetch_add(1, Ordering::SeqCst);
    let _counted = InFlight(&ACTIVE);
    if CLOSING.load(Ordering::SeqCst) {
        return set_error("remote devices were shut down: the process is exiting".into());
    }
    plain_guard(f)
}

/// Waits until no thread is inside an export that uses MPI, at most
/// `limit`; with `settle`, until none has been for that long (work of
/// several calls in a row, such as a `nowait` region's, finishes).
fn wait_idle(limit: Duration, settle: Duration) -> bool {
    let start = Instant::now();
    let mut idle_since: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if ACTIVE.load(Ordering::SeqCst) == 0 {
            let since = *idle_since.get_or_insert(now);
            if now.duration_since(since) >= settle {
                return true;
            }
        } else {
            idle_since = None;
        }
        if now.duration_since(start) >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn client() -> Result<&'static Client, String> {
    CLIENT.get().ok_or_else(|| "remote devices are not initialised".to_string())
}

impl Client {
    fn tag(&self) -> c_int {
        let span = wire::TAG_LAST - wire::TAG_FIRST + 1;
        wire::TAG_FIRST + self.next_tag.fetch_add(1, Ordering::Relaxed).rem_euclid(span)
    }

    fn device(&self, d: u32) -> Result<(&Server, &RemoteDevice), String> {
        let rd = self.devices.get(d as usize).ok_or_else(|| format!("no remote device {d}"))?;
        Ok((&self.servers[rd.server], rd))
    }

    /// Waits for `req`, pinging `server` while it takes long; gives up
    /// (marking the server dead) when a ping stays unanswered for the
    /// timeout.
    fn wait(&self, server: &Server, req: &mut Request, what: &str) -> WireResult<()> {
        let mut backoff = wire::Backoff::new();
        let mut last_life = Instant::now();
        let mut ping: Option<Ping> = None;
        loop {
            if req.test()? {
                if let Some(p) = ping.take() {
                    // Its answer must not stay behind for a later request
                    // that gets the same tag: wait for it too.
                    p.finish(self.timeout);
                }
                return Ok(());
            }
            if let Some(e) = server.dead.lock().clone() {
                return Err(e);
            }
            let now = Instant::now();
            match &mut ping {
                None if now.duration_since(last_life) >= self.ping_every => {
                    ping = Some(Ping::start(self.tag(), server.rank)?);
                }
                Some(p) => {
                    if p.recv.test()? {
                        last_life = now;
                        if let Some(p) = ping.take() {
                            p.finish(self.timeout);
                        }
                    } else if now.duration_since(p.started) >= self.timeout {
                        let e = format!(
                            "remote device server rank {} did not answer for {} s during {what}: it died or its MPI link broke (its devices are unusable now)",
                            server.rank,
                            self.timeout.as_secs()
                        );
                        *server.dead.lock() = Some(e.clone());
                        if let Some(p) = ping.take() {
                            p.finish(Duration::ZERO);
                        }
                        return Err(e);
                    }
                }
                None => {}
            }
            backoff.snooze();
        }
    }

    /// One request: header, optional payload, reply; `data_in` receives
    /// the data that follows a successful reply. Returns the reply value.
    ///
    /// # Safety
    /// `payload` must be readable and `data_in` writable for the call.
    unsafe fn call(
        &self,
        server: &Server,
        code: u64,
        device: u64,
        args: [u64; 5],
        payload: Option<(*const u8, usize)>,
        data_in: Option<(*mut u8, usize)>,
    ) -> Result<(u64, Vec<u8>), String> {
        if self.shut_down.load(Ordering::Acquire) {
            return Err("remote devices were shut down (process exit)".into());
        }
        let what = op::name(code);
        let fail = |e: String| {
            if e.starts_with("remote device server rank") { e } else { format!("remote device server rank {}: {what}: {e}", server.rank) }
        };
        if let Some(e) = server.dead.lock().clone() {
            return Err(fail(format!("not attempted: {e}")));
        }
        let tag = self.tag();
        // A launch while other requests to this server are in flight runs
        // on a server worker (concurrently); alone, on its main thread.
        let others = server.in_flight.fetch_add(1, Ordering::AcqRel);
        let _counted = InFlight(&server.in_flight);
        let mut args = args;
        if code == op::LAUNCH {
            args[4] = u64::from(others > 0);
        }
        let mut reply = vec![0u8; wire::REPLY_MAX];
        // SAFETY: `reply` outlives the receive (waited for or cancelled below).
        let mut r = unsafe { Request::recv(reply.as_mut_ptr(), reply.len(), server.rank, tag) }.map_err(fail)?;
        let h = wire::header(code, tag, device, args);
        let mut wait = |q: &mut Request| self.wait(server, q, what);
        let hb = Box::new(h);
        // SAFETY: the header lives until the send completes; on a failed wait the server is dead and the header is leaked for the abandoned send.
        let sent = unsafe { wire::send_all(hb.as_ptr(), hb.len(), server.rank, wire::TAG_REQUEST, &mut wait) };
        if let Err(e) = sent {
            std::mem::forget(hb);
            r.abandon();
            return Err(fail(e));
        }
        drop(hb);
        if let Some((p, n)) = payload {
            // SAFETY: the caller keeps the payload readable.
            if let Err(e) = unsafe { wire::send_all(p, n, server.rank, tag, &mut wait) } {
                r.abandon();
                return Err(fail(e));
            }
        }
        if let Err(e) = self.wait(server, &mut r, what) {
            r.abandon();
            return Err(fail(e));
        }
        let status = wire::word(&reply[..r.received], 0).ok_or_else(|| fail("short reply".into()))?;
        let value = wire::word(&reply[..r.received], 1).unwrap_or(0);
        reply.truncate(r.received);
        let rest = reply.split_off(16.min(reply.len()));
        if status != wire::OK {
            return Err(format!("remote device server rank {}: {what} failed: {}", server.rank, String::from_utf8_lossy(&rest)));
        }
        if let Some((p, n)) = data_in {
            // SAFETY: the caller keeps the buffer writable.
            unsafe { wire::recv_all(p, n, server.rank, tag, &mut wait) }.map_err(fail)?;
        }
        Ok((value, rest))
    }
}

/// A ping in flight: its header (sent on the ping tag) and the receive of
/// its answer.
struct Ping {
    send: Request,
    recv: Request,
    started: Instant,
    header: Box<[u8; wire::HEADER_WORDS * 8]>,
    answer: Box<[u8; 64]>,
}

impl Ping {
    fn start(tag: c_int, rank: c_int) -> WireResult<Ping> {
        let header = Box::new(wire::header(op::PING, tag, 0, [0; 5]));
        let mut answer = Box::new([0u8; 64]);
        // SAFETY: the box moves into the Ping (its heap block stays put) and lives until the receive completes, or is leaked (finish).
        let recv = unsafe { Request::recv(answer.as_mut_ptr(), answer.len(), rank, tag)? };
        // SAFETY: as for the answer.
        let send = match unsafe { Request::send(header.as_ptr(), header.len(), rank, wire::TAG_PING) } {
            Ok(s) => s,
            Err(e) => {
                recv.abandon();
                std::mem::forget(answer);
                return Err(e);
            }
        };
        Ok(Ping { send, recv, started: Instant::now(), header, answer })
    }

    /// Waits up to `limit` (from the ping's start) for the answer and the
    /// send; what has not completed then is cancelled or left to MPI, with
    /// its buffer leaked.
    fn finish(self, limit: Duration) {
        let Ping { mut send, mut recv, started, header, answer } = self;
        let mut b = wire::Backoff::new();
        loop {
            let done = recv.test().unwrap_or(true) & send.test().unwrap_or(true);
            if done {
                return;
            }
            if started.elapsed() >= limit {
                break;
            }
            b.snooze();
        }
        recv.abandon();
        send.abandon();
        std::mem::forget(header);
        std::mem::forget(answer);
    }
}

/// Reads a length-prefixed string at `*at`.
fn take_str(b: &[u8], at: &mut usize) -> Option<String> {
    let n = u32::from_le_bytes(b.get(*at..*at + 4)?.try_into().ok()?) as usize;
    let s = b.get(*at + 4..*at + 4 + n)?;
    *at += 4 + n;
    Some(String::from_utf8_lossy(s).into_owned())
}

/// Parses a HELLO reply's text: magic, count, then the devices.
fn describe(server: usize, b: &[u8]) -> Option<Vec<RemoteDevice>> {
    if wire::word(b, 0)? != wire::MAGIC {
        return None;
    }
    let n = wire::word(b, 1)?;
    if n > 256 {
        return None;
    }
    let mut at = 16;
    let mut out = Vec::new();
    for device in 0..n {
        let mut words = [0u64; 23];
        for w in words.iter_mut() {
            *w = u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?);
            at += 8;
        }
        let mut strings: [String; 8] = Default::default();
        for s in strings.iter_mut() {
            *s = take_str(b, &mut at)?;
        }
        out.push(RemoteDevice { server, device, words, strings });
    }
    Some(out)
}

/// The server ranks: every rank after the program's application context
/// (Open MPI's `OMPI_APP_CTX_NUM_PROCS`, "1 2" for `-np 1 prog : -np 2 server`).
fn server_ranks(size: c_int) -> Vec<c_int> {
    let first = std::env::var("OMPI_APP_CTX_NUM_PROCS")
        .ok()
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse::<c_int>().ok()))
        .unwrap_or(1)
        .max(1);
    (first..size).collect()
}

fn env_secs(name: &str, default: f64) -> Duration {
    let v = std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok()).filter(|v| *v > 0.0).unwrap_or(default);
    Duration::from_secs_f64(v)
}

/// Starts MPI (MPI_THREAD_MULTIPLE), greets every server rank and writes
/// the number of remote devices. Idempotent.
///
/// # Safety
/// `devices` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_init(devices: *mut u32) -> c_int {
    guard(|| {
        if devices.is_null() {
            return Err("null device count".into());
        }
        if CLIENT.get().is_none() {
            let c = start()?;
            let _ = CLIENT.set(c);
        }
        let n = client()?.devices.len() as u32;
        // SAFETY: checked non-null; the caller passes a writable u32.
        unsafe { *devices = n };
        Ok(())
    })
}

fn start() -> Result<Client, String> {
    use mpi::topology::Communicator;
    let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or("MPI was initialised by the program already (remote devices need to initialise it)")?;
    if threading != mpi::Threading::Multiple {
        return Err("the MPI library does not provide MPI_THREAD_MULTIPLE".into());
    }
    // SAFETY: MPI is initialised; MPI_ERRORS_RETURN is a constant of rsmpi's shim.
    unsafe { ffi::MPI_Comm_set_errhandler(wire::world(), ffi::RSMPI_ERRORS_RETURN) };
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    *UNIVERSE.lock() = Some(universe);
    if rank != 0 {
        return Err(format!("this process is rank {rank}, not the program rank 0"));
    }
    let servers: Vec<Server> = server_ranks(size)
        .into_iter()
        .map(|rank| Server {
            rank,
            dead: Mutex::new(None),
            images: Mutex::new(HashSet::new()),
            sending_image: Mutex::new(()),
            in_flight: AtomicUsize::new(0),
            queued: AtomicUsize::new(0),
        })
        .collect();
    let mut c = Client {
        servers,
        devices: Vec::new(),
        timeout: env_secs("OMPTARGET_RS_REMOTE_TIMEOUT", 10.0),
        ping_every: env_secs("OMPTARGET_RS_REMOTE_PING", 1.0),
        next_tag: AtomicI32::new(0),
        shut_down: AtomicBool::new(false),
        relay_copies: std::env::var("OMPTARGET_RS_REMOTE_RELAY").is_ok_and(|v| v == "1"),
    };
    let mut devices = Vec::new();
    for (i, s) in c.servers.iter().enumerate() {
        // SAFETY: no payload, no data.
        match unsafe { c.call(s, op::HELLO, 0, [0; 5], None, None) } {
            Ok((_, text)) => match describe(i, &text) {
                Some(d) => devices.extend(d),
                None => {
                    let e = format!("rank {} is not an omptarget-rs-device server (bad greeting)", s.rank);
                    eprintln!("omptarget-rs: remote devices: {e}");
                    *s.dead.lock() = Some(e);
                }
            },
            Err(e) => eprintln!("omptarget-rs: remote devices: {e}"),
        }
    }
    c.devices = devices;
    Ok(c)
}

/// Copies the thread's last error message into `buf` (NUL-terminated,
/// truncated) and returns its full length.
///
/// # Safety
/// `buf` must be writable for `len` bytes (or null with `len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_error(buf: *mut u8, len: usize) -> usize {
    LAST_ERROR.with(|l| {
        let s = l.borrow();
        if !buf.is_null() && len > 0 {
            let n = s.len().min(len - 1);
            // SAFETY: the caller gives len writable bytes; n + 1 <= len.
            unsafe {
                std::ptr::copy_nonoverlapping(s.as_ptr(), buf, n);
                *buf.add(n) = 0;
            }
        }
        s.len()
    })
}

/// Device description: `words` gets 23 property words (see the server's
/// `hello`); `which` 0..8 of the strings (name, product, vendor, driver
/// version, uid, info text, compute-unit kind, server plugin) are copied
/// like [`omptarget_rs_remote_error`]; returns the server rank or -1.
///
/// # Safety
/// `words` must be writable for 23 `u64`s or null; `buf` for `len` bytes or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_describe(device: u32, words: *mut u64, which: u32, buf: *mut u8, len: usize) -> c_int {
    let mut rank = -1;
    let rc = plain_guard(|| {
        let c = client()?;
        let (s, d) = c.device(device)?;
        rank = s.rank;
        if !words.is_null() {
            // SAFETY: the caller gives 23 writable words.
            unsafe { std::ptr::copy_nonoverlapping(d.words.as_ptr(), words, 23) };
        }
        if let Some(text) = d.strings.get(which as usize)
            && !buf.is_null()
            && len > 0
        {
            let n = text.len().min(len - 1);
            // SAFETY: len writable bytes; n + 1 <= len.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr(), buf, n);
                *buf.add(n) = 0;
            }
        }
        Ok(())
    });
    if rc == 0 { rank } else { -1 }
}

/// Runs one request on device `device`'s server.
///
/// # Safety
/// As for [`Client::call`].
unsafe fn on_device(
    device: u32,
    code: u64,
    args: [u64; 5],
    payload: Option<(*const u8, usize)>,
    data_in: Option<(*mut u8, usize)>,
) -> Result<u64, String> {
    let c = client()?;
    let (s, d) = c.device(device)?;
    // SAFETY: forwarded.
    unsafe { c.call(s, code, d.device, args, payload, data_in) }.map(|(v, _)| v)
}

fn out(p: *mut u64, v: u64) -> Result<(), String> {
    if p.is_null() {
        return Err("null result pointer".into());
    }
    // SAFETY: non-null; the caller passes a writable u64.
    unsafe { *p = v };
    Ok(())
}

/// Allocates `size` bytes of kind `kind` (0 device, 1 host, 2 shared, 3 default).
///
/// # Safety
/// `ptr` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_alloc(device: u32, size: u64, kind: u32, ptr: *mut u64) -> c_int {
    // SAFETY: no buffers.
    guard(|| out(ptr, unsafe { on_device(device, op::ALLOC, [size, kind.into(), 0, 0, 0], None, None) }?))
}

/// Frees an allocation.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_free(device: u32, ptr: u64, kind: u32) -> c_int {
    // SAFETY: no buffers.
    guard(|| unsafe { on_device(device, op::FREE, [ptr, kind.into(), 0, 0, 0], None, None) }.map(drop))
}

/// Copies `size` bytes from host `src` to device `dst`.
///
/// # Safety
/// `[src, src+size)` must be readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_submit(device: u32, dst: u64, src: *const u8, size: u64) -> c_int {
    guard(|| {
        let n = usize::try_from(size).map_err(|_| "size too large")?;
        // SAFETY: the caller's readable range.
        unsafe { on_device(device, op::SUBMIT, [dst, size, 0, 0, 0], Some((src, n)), None) }.map(drop)
    })
}

/// Copies `size` bytes from device `src` to host `dst`.
///
/// # Safety
/// `[dst, dst+size)` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_retrieve(device: u32, dst: *mut u8, src: u64, size: u64) -> c_int {
    guard(|| {
        let n = usize::try_from(size).map_err(|_| "size too large")?;
        // SAFETY: the caller's writable range.
        unsafe { on_device(device, op::RETRIEVE, [src, size, 0, 0, 0], None, Some((dst, n))) }.map(drop)
    })
}

/// Fills device memory.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_memset(device: u32, ptr: u64, value: u8, size: u64) -> c_int {
    // SAFETY: no buffers.
    guard(|| unsafe { on_device(device, op::MEMSET, [ptr, value.into(), size, 0, 0], None, None) }.map(drop))
}

/// Copies between two remote devices: within one server by the server
/// itself; across servers straight from one server to the other (the
/// receiving half is sent first, then the sending half; this rank only
/// waits for both answers), or through this rank with
/// `OMPTARGET_RS_REMOTE_RELAY=1`.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_exchange(src_device: u32, src: u64, dst_device: u32, dst: u64, size: u64) -> c_int {
    guard(|| {
        let c = client()?;
        let (ss, sd) = c.device(src_device)?;
        let (ds, dd) = c.device(dst_device)?;
        if ss.rank == ds.rank {
            // SAFETY: no buffers.
            return unsafe { c.call(ss, op::EXCHANGE, sd.device, [src, dd.device, dst, size, 0], None, None) }.map(drop);
        }
        if !c.relay_copies {
            let peer_tag = u64::try_from(c.tag()).unwrap_or_default();
            let limit_ms = u64::try_from(c.timeout.as_millis()).unwrap_or(u64::MAX);
            let (to_dst, to_src) = ([dst, size, ss.rank as u64, peer_tag, limit_ms], [src, size, ds.rank as u64, peer_tag, limit_ms]);
            // SAFETY: no buffers.
            let receiving = unsafe { c.send_queued(dst_device, op::RECV_FROM, to_dst, None, None, None) }?;
            // SAFETY: no buffers.
            let sending = unsafe { c.send_queued(src_device, op::SEND_TO, to_src, None, None, None) };
            // Both answers are waited for, the sender's first: a receiver
            // whose sender failed answers once its deadline has passed.
            let sent = sending.and_then(|p| c.complete(p));
            let received = c.complete(receiving);
            return sent.and(received);
        }
        let mut buf = vec![0u8; usize::try_from(size).map_err(|_| "size too large")?];
        // SAFETY: buf is size writable, then readable, bytes.
        unsafe {
            c.call(ss, op::RETRIEVE, sd.device, [src, size, 0, 0, 0], None, Some((buf.as_mut_ptr(), buf.len())))?;
            c.call(ds, op::SUBMIT, dd.device, [dst, size, 0, 0, 0], Some((buf.as_ptr(), buf.len())), None)?;
        }
        Ok(())
    })
}

fn hash(bytes: &[u8]) -> u64 {
    // FNV-1a, 64 bit: images are compared by content and length.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h ^ (bytes.len() as u64).rotate_left(32)
}

/// Loads an image on a device; the bytes go to each server once.
///
/// # Safety
/// `[image, image+len)` must be readable; `handle` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_load(device: u32, image: *const u8, len: usize, handle: *mut u64) -> c_int {
    guard(|| {
        if image.is_null() {
            return Err("null image".into());
        }
        // SAFETY: the caller's readable range.
        let bytes = unsafe { std::slice::from_raw_parts(image, len) };
        let c = client()?;
        let (s, d) = c.device(device)?;
        let h = hash(bytes);
        {
            let _one = s.sending_image.lock();
            if !s.images.lock().contains(&h) {
                // SAFETY: bytes are readable for the call.
                unsafe { c.call(s, op::IMAGE, 0, [h, len as u64, 0, 0, 0], Some((image, len)), None)? };
                s.images.lock().insert(h);
            }
        }
        // SAFETY: no buffers.
        out(handle, unsafe { c.call(s, op::LOAD, d.device, [h, 0, 0, 0, 0], None, None) }?.0)
    })
}

/// Unloads an image.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_unload(device: u32, image: u64) -> c_int {
    // SAFETY: no buffers.
    guard(|| unsafe { on_device(device, op::UNLOAD, [image, 0, 0, 0, 0], None, None) }.map(drop))
}

/// Looks up a kernel (`global` 0) or a global of `size` bytes (`global` 1).
///
/// # Safety
/// `[name, name+len)` must be readable; `result` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_symbol(
    device: u32,
    image: u64,
    name: *const u8,
    len: usize,
    global: u32,
    size: u64,
    result: *mut u64,
) -> c_int {
    guard(|| {
        let code = if global != 0 { op::GLOBAL } else { op::FUNCTION };
        // SAFETY: the caller's readable name.
        let v = unsafe { on_device(device, code, [image, len as u64, size, 0, 0], Some((name, len)), None) }?;
        out(result, v)
    })
}

/// Launches a kernel with `n` pointer-sized arguments and waits for it.
///
/// # Safety
/// `args` must be readable for `n` `u64`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_launch(
    device: u32,
    kernel: u64,
    args: *const u64,
    n: u32,
    teams: u32,
    threads: u32,
    tripcount: u64,
) -> c_int {
    guard(|| {
        if n > 0 && args.is_null() {
            return Err("null arguments".into());
        }
        let dims = u64::from(teams) | (u64::from(threads) << 32);
        // SAFETY: n readable u64s (as bytes, little-endian on x86-64 like the wire).
        unsafe { on_device(device, op::LAUNCH, [kernel, n.into(), dims, tripcount, 0], Some((args.cast(), n as usize * 8)), None) }
            .map(drop)
    })
}

/// Ends the servers (SHUTDOWN to each live one), then MPI_Finalize. Later
/// calls fail. Idempotent.
///
/// At exit other threads may still offload (`nowait` regions on libomp's
/// helper threads, `ol*` queue threads): work in flight is given until
/// no export has been busy for 50 ms (at most the timeout) to finish, then
/// exports are refused, and MPI is finalised only once no thread is left
/// inside one (a call after MPI_Finalize makes Open MPI abort the process).
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_shutdown() -> c_int {
    plain_guard(|| {
        let Some(c) = CLIENT.get() else {
            drop(UNIVERSE.lock().take());
            return Ok(());
        };
        if CLOSING.load(Ordering::SeqCst) {
            return Ok(());
        }
        wait_idle(c.timeout, Duration::from_millis(50));
        CLOSING.store(true, Ordering::SeqCst);
        let quiet = wait_idle(c.timeout, Duration::ZERO);
        if !quiet {
            eprintln!(
                "omptarget-rs: remote devices: a thread was still using them {} s after exit began; MPI is left unfinalised",
                c.timeout.as_secs()
            );
        }
        // With a dead rank, or a thread still inside MPI here, MPI_Finalize
        // (which waits for every rank) could wait for ever or abort: the
        // servers are told to skip it too.
        let skip_finalize = !quiet || c.servers.iter().any(|s| s.dead.lock().is_some());
        for s in &c.servers {
            if s.dead.lock().is_none() {
                // SAFETY: no buffers.
                if let Err(e) = unsafe { c.call(s, op::SHUTDOWN, 0, [u64::from(skip_finalize), 0, 0, 0, 0], None, None) } {
                    eprintln!("omptarget-rs: {e}");
                }
            }
        }
        c.shut_down.store(true, Ordering::Release);
        if skip_finalize || c.servers.iter().any(|s| s.dead.lock().is_some()) {
            std::mem::forget(UNIVERSE.lock().take());
            return Ok(());
        }
        drop(UNIVERSE.lock().take());
        Ok(())
    })
}

// ---- Queues: requests sent without waiting for their replies. A queue is a list of requests in flight, in the order they
// were sent; the server runs requests in arrival order (a queued launch is
// never handed to a worker), so the queue's order holds on the server.
// Synchronising waits for every reply (and the data of copies back) with
// the same liveness checks as synchronous requests.

/// Largest reply of a queued request (status, value, an error text).
const QUEUED_REPLY_MAX: usize = 4096;

/// One request in flight on a queue; owns every buffer MPI still uses.
struct Pending {
    server: usize,
    what: &'static str,
    reply: Box<[u8]>,
    recv: Request,
    header: Box<[u8; wire::HEADER_WORDS * 8]>,
    sends: Vec<Request>,
    /// Launch arguments (the caller's are copied).
    _owned: Option<Box<[u8]>>,
    /// Data receives of a copy back (posted up front; MPI keeps one
    /// source's messages of one tag in order: the reply comes first).
    data: Vec<(Request, usize)>,
    /// Counted in its server's `queued` until completed.
    counted: bool,
}

/// One queue: its requests in flight, in order, numbered.
#[derive(Default)]
struct QueueState {
    pending: std::collections::VecDeque<(u64, Pending)>,
    /// Number of the next request.
    next: u64,
    /// The first failure of a request completed by an event's wait, for the
    /// queue's next synchronisation.
    failed: Option<String>,
    /// Requests of this queue sent to each server, ever (servers count
    /// what they ran per queue handle the same way; a handle's counts
    /// outlive its queue and go on with the next queue of that handle).
    sent: std::collections::HashMap<usize, u64>,
    /// Whether a queue holds this handle now.
    in_use: bool,
}

impl QueueState {
    /// Completes the requests numbered up to `last`, keeping the first
    /// failure for the next synchronisation.
    fn complete_through(&mut self, c: &Client, last: u64) {
        while self.pending.front().is_some_and(|(n, _)| *n <= last) {
            let Some((_, p)) = self.pending.pop_front() else { break };
            if let Err(e) = c.complete(p)
                && self.failed.is_none()
            {
                self.failed = Some(e);
            }
        }
    }
}

type QueueRef = std::sync::Arc<Mutex<QueueState>>;

/// Queues by handle (index + 1); a destroyed queue's state stays for the
/// next queue of its handle.
static QUEUES: Mutex<Vec<QueueRef>> = Mutex::new(Vec::new());

fn queue(handle: u64) -> Result<QueueRef, String> {
    let qs = QUEUES.lock();
    usize::try_from(handle)
        .ok()
        .and_then(|h| h.checked_sub(1))
        .and_then(|i| qs.get(i).cloned())
        .filter(|q| q.lock().in_use)
        .ok_or_else(|| format!("no remote queue {handle}"))
}

/// Creates a queue and writes its handle.
///
/// # Safety
/// `handle` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_queue_create(handle: *mut u64) -> c_int {
    guard(|| {
        let mut qs = QUEUES.lock();
        let i = match qs.iter().position(|q| !q.lock().in_use) {
            Some(i) => i,
            None => {
                if qs.len() >= wire::QUEUES_MAX {
                    return Err(format!("more than {} remote queues at once", wire::QUEUES_MAX));
                }
                qs.push(QueueRef::default());
                qs.len() - 1
            }
        };
        qs[i].lock().in_use = true;
        out(handle, i as u64 + 1)
    })
}

/// Destroys a synchronised queue.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_queue_destroy(handle: u64) -> c_int {
    guard(|| {
        let q = queue(handle)?;
        let mut q = q.lock();
        if !q.pending.is_empty() {
            return Err("remote queue destroyed with work in flight".into());
        }
        q.in_use = false;
        q.failed = None;
        Ok(())
    })
}

impl Client {
    /// Sends one request without waiting: header, payload, and the
    /// receives of its reply and data.
    ///
    /// # Safety
    /// `payload` must stay readable and `data_in` writable until the queue
    /// is synchronised.
    unsafe fn send_queued(
        &self,
        device: u32,
        code: u64,
        args: [u64; 5],
        payload: Option<(*const u8, usize)>,
        owned: Option<Box<[u8]>>,
        data_in: Option<(*mut u8, usize)>,
    ) -> Result<Pending, String> {
        if self.shut_down.load(Ordering::Acquire) {
            return Err("remote devices were shut down (process exit)".into());
        }
        let (server, d) = self.device(device)?;
        let si = self.devices[device as usize].server;
        let what = op::name(code);
        if let Some(e) = server.dead.lock().clone() {
            return Err(format!("remote device server rank {}: {what}: not attempted: {e}", server.rank));
        }
        let fail = |e: String| format!("remote device server rank {}: {what}: {e}", server.rank);
        let tag = self.tag();
        let mut reply = vec![0u8; QUEUED_REPLY_MAX].into_boxed_slice();
        // SAFETY: the reply box moves into the Pending (its heap block stays put) and lives until the receive completes or is cancelled.
        let recv = unsafe { Request::recv(reply.as_mut_ptr(), reply.len(), server.rank, tag) }.map_err(fail)?;
        let mut p = Pending {
            server: si,
            what,
            header: Box::new(wire::header(code, tag, d.device, args)),
            reply,
            recv,
            sends: Vec::new(),
            _owned: None,
            data: Vec::new(),
            counted: false,
        };
        // SAFETY: the header box lives in the Pending.
        let h = unsafe { Request::send(p.header.as_ptr(), p.header.len(), server.rank, wire::TAG_REQUEST) };
        match h {
            Ok(r) => p.sends.push(r),
            Err(e) => {
                p.abandon();
                return Err(fail(e));
            }
        }
        let payload = match &owned {
            Some(b) => Some((b.as_ptr(), b.len())),
            None => payload,
        };
        p._owned = owned;
        let mut posted = Ok(());
        if let Some((ptr, len)) = payload {
            let mut at = 0;
            while at < len && posted.is_ok() {
                let n = (len - at).min(wire::CHUNK);
                // SAFETY: the caller keeps the payload readable until the queue is synchronised (or it is owned by the Pending).
                posted = unsafe { Request::send(ptr.add(at), n, server.rank, tag) }.map(|r| p.sends.push(r));
                at += n;
            }
        }
        if let Some((ptr, len)) = data_in {
            let mut at = 0;
            while at < len && posted.is_ok() {
                let n = (len - at).min(wire::CHUNK);
                // SAFETY: the caller keeps the buffer writable until the queue is synchronised.
                posted = unsafe { Request::recv(ptr.add(at), n, server.rank, tag) }.map(|r| p.data.push((r, n)));
                at += n;
            }
        }
        if let Err(e) = posted {
            p.abandon();
            return Err(fail(e));
        }
        Ok(p)
    }

    /// Waits for a queued request to complete; its error, if any.
    fn complete(&self, p: Pending) -> Result<(), String> {
        let (server, counted) = (p.server, p.counted);
        let r = self.complete_pending(p);
        if counted {
            self.servers[server].queued.fetch_sub(1, Ordering::AcqRel);
        }
        r
    }

    fn complete_pending(&self, mut p: Pending) -> Result<(), String> {
        let server = &self.servers[p.server];
        let what = p.what;
        if let Err(e) = self.wait(server, &mut p.recv, what) {
            p.abandon();
            return Err(e);
        }
        let got = &p.reply[..p.recv.received];
        let status = wire::word(got, 0);
        let failed = status != Some(wire::OK);
        let text = String::from_utf8_lossy(got.get(16..).unwrap_or_default()).into_owned();
        let mut result = Ok(());
        if failed {
            // No data follows a failure: cancel its receives.
            for (r, _) in p.data.drain(..) {
                r.abandon();
            }
            result = Err(format!("remote device server rank {}: {what} failed: {text}", server.rank));
        }
        while let Some((mut r, n)) = (!p.data.is_empty()).then(|| p.data.remove(0)) {
            if let Err(e) = self.wait(server, &mut r, what) {
                r.abandon();
                p.abandon();
                return Err(e);
            }
            if r.received != n && result.is_ok() {
                result = Err(format!("remote device server rank {}: {what}: expected {n} bytes, received {}", server.rank, r.received));
            }
        }
        while let Some(mut s) = p.sends.pop() {
            if let Err(e) = self.wait(server, &mut s, what) {
                s.abandon();
                p.abandon();
                return Err(e);
            }
        }
        result
    }
}

impl Pending {
    /// Gives up on everything still in flight; buffers MPI may still use
    /// are leaked.
    fn abandon(self) {
        let Pending { reply, recv, header, sends, _owned, data, .. } = self;
        recv.abandon();
        for s in sends {
            s.abandon();
        }
        for (r, _) in data {
            r.abandon();
        }
        std::mem::forget(reply);
        std::mem::forget(header);
        std::mem::forget(_owned);
    }
}

/// Sends a request for remote device `device` on queue `handle`: `make`
/// gets the header word that marks it as the queue's (servers run each
/// queue's requests in order, on a thread per queue, or at once on their
/// main thread when the word says nothing of this process but this queue
/// is in flight to that server: no thread hand-off for a lone construct) and
/// sends it. The queue stays locked meanwhile, so its requests reach each
/// server in the order they are numbered.
fn enqueue(handle: u64, device: u32, make: impl FnOnce(&Client, u64) -> Result<Pending, String>) -> Result<(), String> {
    let c = client()?;
    let q = queue(handle)?;
    let mut q = q.lock();
    let si = c.device(device)?.1.server;
    let server = &c.servers[si];
    let mine = q.pending.iter().filter(|(_, p)| p.server == si).count();
    let alone = server.in_flight.load(Ordering::Acquire) == 0 && server.queued.load(Ordering::Acquire) == mine;
    let word = wire::QUEUED | handle | if alone { wire::ALONE } else { 0 };
    let mut p = make(c, word)?;
    p.counted = true;
    server.queued.fetch_add(1, Ordering::AcqRel);
    *q.sent.entry(p.server).or_default() += 1;
    let n = q.next;
    q.next += 1;
    q.pending.push_back((n, p));
    Ok(())
}

/// Queues a host → device copy.
///
/// # Safety
/// `[src, src+size)` must stay readable until the queue is synchronised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_submit_async(device: u32, dst: u64, src: *const u8, size: u64, q: u64) -> c_int {
    guard(|| {
        let n = usize::try_from(size).map_err(|_| "size too large")?;
        // SAFETY: the caller's contract.
        enqueue(q, device, |c, tagged| unsafe { c.send_queued(device, op::SUBMIT, [dst, size, 0, 0, tagged], Some((src, n)), None, None) })
    })
}

/// Queues a device → host copy.
///
/// # Safety
/// `[dst, dst+size)` must stay writable until the queue is synchronised.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_retrieve_async(device: u32, dst: *mut u8, src: u64, size: u64, q: u64) -> c_int {
    guard(|| {
        let n = usize::try_from(size).map_err(|_| "size too large")?;
        // SAFETY: the caller's contract.
        enqueue(q, device, |c, tagged| unsafe {
            c.send_queued(device, op::RETRIEVE, [src, size, 0, 0, tagged], None, None, Some((dst, n)))
        })
    })
}

/// Queues a launch (the arguments are copied).
///
/// # Safety
/// `args` must be readable for `n` `u64`s for the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_launch_async(
    device: u32,
    kernel: u64,
    args: *const u64,
    n: u32,
    teams: u32,
    threads: u32,
    tripcount: u64,
    q: u64,
) -> c_int {
    guard(|| {
        if n > 0 && args.is_null() {
            return Err("null arguments".into());
        }
        let bytes: Box<[u8]> = if n == 0 {
            Box::new([])
        } else {
            // SAFETY: n readable u64s, viewed as bytes for the copy.
            unsafe { std::slice::from_raw_parts(args.cast::<u8>(), n as usize * 8) }.into()
        };
        let dims = u64::from(teams) | (u64::from(threads) << 32);
        // SAFETY: the payload is owned by the request.
        enqueue(q, device, |c, tagged| unsafe {
            c.send_queued(device, op::LAUNCH, [kernel, n.into(), dims, tripcount, tagged], None, Some(bytes), None)
        })
    })
}

/// Waits for everything queued (`wait` 1) or asks whether it completed
/// (`wait` 0, `done` written); returns the first failure of the queued
/// requests. Completed requests leave the queue either way.
///
/// # Safety
/// `done` must be writable or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_queue_sync(q: u64, wait: u32, done: *mut u32) -> c_int {
    guard(|| {
        let c = client()?;
        let queue = queue(q)?;
        let mut q = queue.lock();
        if wait == 0 {
            // Query: done when every reply and data receive has arrived.
            let mut all = true;
            for (_, p) in q.pending.iter_mut() {
                let ready = p.recv.test()? && p.data.iter_mut().all(|(r, _)| r.test().unwrap_or(true));
                if !ready {
                    all = false;
                    break;
                }
            }
            if !done.is_null() {
                // SAFETY: checked non-null; the caller passes a writable u32.
                unsafe { *done = u32::from(all) };
            }
            if !all {
                return Ok(());
            }
        }
        q.complete_through(c, u64::MAX);
        q.failed.take().map_or(Ok(()), Err)
    })
}

// ---- Events: a point in a queue (the number of its last request when
// recorded). Servers run each queue's requests in order on a thread of its
// own, so a queue whose later requests go to the server of all the event's
// requests waits there: a WAIT request on it holds it until the event's
// queue has run that many requests on that server. Any other queue (of
// another server, another rank) waits on this rank until the event's
// requests have completed.

struct EventState {
    queue: QueueRef,
    handle: u64,
    /// The queue's last request when recorded (`None`: nothing was queued).
    last: Option<u64>,
    /// When every request up to `last` went to one server: that server and
    /// how many requests of the queue it had been sent by then.
    server: Option<(usize, u64)>,
}

/// Events by handle (index + 1); `None`: free slot.
static EVENTS: Mutex<Vec<Option<EventState>>> = Mutex::new(Vec::new());

/// Records an event after the requests queued so far on `q` and writes
/// its handle.
///
/// # Safety
/// `handle` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omptarget_rs_remote_event_record(q: u64, handle: *mut u64) -> c_int {
    guard(|| {
        let queue = queue(q)?;
        let (last, server) = {
            let st = queue.lock();
            let last = st.next.checked_sub(1).filter(|_| !st.pending.is_empty());
            let mut servers = st.pending.iter().map(|(_, p)| p.server);
            let first = servers.next();
            let one = first.filter(|f| servers.all(|s| s == *f));
            (last, one.map(|s| (s, st.sent.get(&s).copied().unwrap_or(0))))
        };
        let ev = Some(EventState { queue, handle: q, last, server });
        let mut evs = EVENTS.lock();
        let i = match evs.iter().position(Option::is_none) {
            Some(i) => {
                evs[i] = ev;
                i
            }
            None => {
                evs.push(ev);
                evs.len() - 1
            }
        };
        out(handle, i as u64 + 1)
    })
}

/// Makes work queued on `q` (for remote device `device`) after this call
/// run after the event: on the event's server, by a WAIT request on `q`
/// that holds `q` there; else by waiting here for the event's requests.
/// A failure of one of them is reported by its own queue's
/// synchronisation.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_event_wait(handle: u64, device: u32, q: u64) -> c_int {
    guard(|| {
        let c = client()?;
        let (queue, ev_handle, last, server) = {
            let evs = EVENTS.lock();
            let ev = usize::try_from(handle)
                .ok()
                .and_then(|h| h.checked_sub(1))
                .and_then(|i| evs.get(i))
                .and_then(Option::as_ref)
                .ok_or_else(|| format!("no remote event {handle}"))?;
            (ev.queue.clone(), ev.handle, ev.last, ev.server)
        };
        let Some(last) = last else { return Ok(()) };
        if queue.lock().pending.front().is_none_or(|(n, _)| *n > last) {
            return Ok(()); // completed already
        }
        let waiter = c.devices.get(device as usize).map(|d| d.server);
        if let Some((server, count)) = server
            && waiter == Some(server)
            && ev_handle != q
        {
            // SAFETY: no buffers.
            return enqueue(q, device, |c, tagged| unsafe {
                c.send_queued(device, op::WAIT, [ev_handle, count, 0, 0, tagged], None, None, None)
            });
        }
        if ev_handle == q && waiter == server.map(|s| s.0) {
            return Ok(()); // later work of the same queue on the same server runs after it anyway
        }
        queue.lock().complete_through(c, last);
        Ok(())
    })
}

/// Frees an event.
#[unsafe(no_mangle)]
pub extern "C" fn omptarget_rs_remote_event_release(handle: u64) -> c_int {
    guard(|| {
        let mut evs = EVENTS.lock();
        let slot = usize::try_from(handle)
            .ok()
            .and_then(|h| h.checked_sub(1))
            .and_then(|i| evs.get_mut(i))
            .filter(|e| e.is_some())
            .ok_or_else(|| format!("no remote event {handle}"))?;
        *slot = None;
        Ok(())
    })
}
