//! The wire between the program rank (rank 0) and the device servers: the
//! message layout both sides share and the non-blocking MPI calls with the
//! waits that never hang (a peer that stops answering becomes an error).
//!
//! One request is a header of [`HEADER_WORDS`] little-endian `u64`s sent
//! on [`TAG_REQUEST`]: the operation, the tag of this request, the server's
//! device, then the operation's arguments. Everything else of the request
//! (payload from the client, the reply, data from the server) travels on
//! the request's own tag, so any number of client threads can have requests
//! in flight at once (MPI keeps messages of one source and tag in order).

use mpi::ffi;
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

/// Tag of request headers (server side: received by its main thread).
pub const TAG_REQUEST: c_int = 1;
/// Tag of pings (server side: answered by a thread of their own, also
/// while the main thread runs a request).
pub const TAG_PING: c_int = 2;
/// First and last per-request tag (MPI guarantees tags up to 32767).
pub const TAG_FIRST: c_int = 64;
pub const TAG_LAST: c_int = 32000;
/// Words of a request header.
pub const HEADER_WORDS: usize = 8;
/// Largest reply message (status, value, text or device descriptions).
pub const REPLY_MAX: usize = 1 << 16;
/// Largest piece one MPI message carries. Copies travel in pieces of this
/// size, so that a server staging through host memory (GPU devices) copies
/// one piece to or from the device while the next one is on the wire; both
/// sides cut a transfer at the same offsets.
pub const CHUNK: usize = 8 << 20;
/// Largest image a server accepts.
pub const IMAGE_MAX: u64 = 1 << 32;
/// Most launch arguments (host kernels take pointer-sized ones).
pub const ARGS_MAX: u64 = 4096;
/// Longest symbol name.
pub const NAME_MAX: u64 = 1 << 16;
/// First word of the HELLO reply (protocol version 2: queued requests and
/// copies between servers).
pub const MAGIC: u64 = 0x6f6d_7074_7273_0002;
/// The last header word of a queued request: this bit and the queue's
/// handle (the server runs each queue's requests in order, on a thread of
/// the queue's own).
pub const QUEUED: u64 = 1 << 63;
/// With [`QUEUED`]: nothing of the program but this queue is in flight to
/// this server (it may run the request at once on its main thread when the
/// queue's thread has nothing left to run).
pub const ALONE: u64 = 1 << 62;
/// Most queues a program has at once (servers keep a thread per queue).
pub const QUEUES_MAX: usize = 1024;

/// Operations.
pub mod op {
    pub const HELLO: u64 = 1;
    pub const PING: u64 = 2;
    pub const SHUTDOWN: u64 = 3;
    pub const ALLOC: u64 = 4;
    pub const FREE: u64 = 5;
    pub const SUBMIT: u64 = 6;
    pub const RETRIEVE: u64 = 7;
    pub const MEMSET: u64 = 8;
    /// An image the server keeps by its hash (args: hash, length).
    pub const IMAGE: u64 = 9;
    /// Loads a kept image on a device (args: hash).
    pub const LOAD: u64 = 10;
    pub const UNLOAD: u64 = 11;
    pub const FUNCTION: u64 = 12;
    pub const GLOBAL: u64 = 13;
    pub const LAUNCH: u64 = 14;
    /// Device to device within one server.
    pub const EXCHANGE: u64 = 15;
    /// Device to device across two servers, the sending half: the server
    /// sends a range of its device's memory straight to another server
    /// rank (args: source, size, peer rank, peer tag, time limit in ms).
    pub const SEND_TO: u64 = 16;
    /// The receiving half (args: destination, size, peer rank, peer tag,
    /// time limit in ms).
    pub const RECV_FROM: u64 = 17;
    /// Holds a queue until another queue of the program has run a number
    /// of requests on this server (args: that queue's handle, the number).
    pub const WAIT: u64 = 18;

    /// Name for messages.
    pub fn name(op: u64) -> &'static str {
        match op {
            HELLO => "hello",
            PING => "ping",
            SHUTDOWN => "shutdown",
            ALLOC => "alloc",
            FREE => "free",
            SUBMIT => "copy to device",
            RETRIEVE => "copy from device",
            MEMSET => "memset",
            IMAGE => "image transfer",
            LOAD => "image load",
            UNLOAD => "image unload",
            FUNCTION => "kernel look-up",
            GLOBAL => "global look-up",
            LAUNCH => "launch",
            EXCHANGE => "device-to-device copy",
            SEND_TO => "device-to-device copy to another server",
            RECV_FROM => "device-to-device copy from another server",
            WAIT => "wait for an event",
            _ => "unknown operation",
        }
    }
}

/// Reply status words.
pub const OK: u64 = 0;
pub const FAILED: u64 = 1;

/// An MPI failure or a peer that stopped answering.
pub type WireResult<T> = Result<T, String>;

/// `MPI_COMM_WORLD`.
pub fn world() -> ffi::MPI_Comm {
    // SAFETY: a constant rsmpi's C shim exports; read after MPI_Init.
    unsafe { ffi::RSMPI_COMM_WORLD }
}

fn bytes_type() -> ffi::MPI_Datatype {
    // SAFETY: as for `world`.
    unsafe { ffi::RSMPI_UINT8_T }
}

/// MPI's text for an error code.
pub fn error_text(code: c_int) -> String {
    let mut buf = vec![0u8; 512];
    let mut len: c_int = 0;
    // SAFETY: buf holds MPI_MAX_ERROR_STRING (256 in Open MPI) bytes and more; len is written.
    let rc = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len) };
    if rc != 0 {
        return format!("MPI error {code}");
    }
    buf.truncate(len.clamp(0, 512) as usize);
    format!("{} (MPI error {code})", String::from_utf8_lossy(&buf))
}

fn check(rc: c_int, what: &str) -> WireResult<()> {
    if rc == 0 { Ok(()) } else { Err(format!("{what}: {}", error_text(rc))) }
}

/// One non-blocking send or receive in flight.
pub struct Request {
    raw: ffi::MPI_Request,
    done: bool,
    /// Bytes received (receives).
    pub received: usize,
}

// SAFETY: an MPI request handle may be tested, cancelled and freed from any
// thread under MPI_THREAD_MULTIPLE (which both sides require at start); a
// Request is used by one thread at a time (it is owned, or behind a lock).
unsafe impl Send for Request {}

impl Request {
    /// Starts sending `len` bytes at `ptr` (≤ [`CHUNK`]).
    ///
    /// # Safety
    /// `[ptr, ptr+len)` must stay readable until the request completes or
    /// is abandoned with [`Request::abandon`] (then for the process).
    pub unsafe fn send(ptr: *const u8, len: usize, rank: c_int, tag: c_int) -> WireResult<Request> {
        let mut raw = ffi::MPI_Request(std::ptr::null_mut());
        let count = c_int::try_from(len).map_err(|_| format!("message of {len} bytes is too large"))?;
        // SAFETY: the caller keeps the buffer readable; raw is written by MPI.
        let rc = unsafe { ffi::MPI_Isend(ptr as *const c_void as *mut c_void, count, bytes_type(), rank, tag, world(), &mut raw) };
        check(rc, "MPI_Isend")?;
        Ok(Request { raw, done: false, received: 0 })
    }

    /// Starts receiving up to `len` bytes into `ptr`.
    ///
    /// # Safety
    /// `[ptr, ptr+len)` must stay writable and unused until the request
    /// completes or is cancelled with [`Request::abandon`].
    pub unsafe fn recv(ptr: *mut u8, len: usize, rank: c_int, tag: c_int) -> WireResult<Request> {
        let mut raw = ffi::MPI_Request(std::ptr::null_mut());
        let count = c_int::try_from(len).map_err(|_| format!("message of {len} bytes is too large"))?;
        // SAFETY: the caller keeps the buffer writable; raw is written by MPI.
        let rc = unsafe { ffi::MPI_Irecv(ptr as *mut c_void, count, bytes_type(), rank, tag, world(), &mut raw) };
        check(rc, "MPI_Irecv")?;
        Ok(Request { raw, done: false, received: 0 })
    }

    /// Whether it completed (then `received` is set).
    pub fn test(&mut self) -> WireResult<bool> {
        if self.done {
            return Ok(true);
        }
        let mut flag: c_int = 0;
        // SAFETY: MPI_Status is plain data that MPI_Test fills.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        // SAFETY: raw is a live request of ours; flag and status are written.
        let rc = unsafe { ffi::MPI_Test(&mut self.raw, &mut flag, &mut status) };
        check(rc, "MPI_Test")?;
        if flag != 0 {
            self.done = true;
            let mut count: c_int = 0;
            // SAFETY: status was filled by the completed test.
            if unsafe { ffi::MPI_Get_count(&status, bytes_type(), &mut count) } == 0 {
                self.received = count.max(0) as usize;
            }
        }
        Ok(self.done)
    }

    /// Gives up on a request that will not complete (its peer is gone):
    /// a receive is cancelled, a send is left to MPI (its buffer must stay
    /// valid, see [`Request::send`]).
    pub fn abandon(mut self) {
        if !self.done {
            // SAFETY: raw is a live request; cancelling and freeing it is allowed for pending requests.
            unsafe {
                ffi::MPI_Cancel(&mut self.raw);
                ffi::MPI_Request_free(&mut self.raw);
            }
            self.done = true;
        }
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if !self.done {
            // Never reached by the code paths here (every request is waited
            // for or abandoned); freeing keeps MPI's table clean if it is.
            // SAFETY: raw is a live request of ours.
            unsafe { ffi::MPI_Request_free(&mut self.raw) };
        }
    }
}

/// Polls without burning a core for long: spins for a few microseconds
/// (an answer from a rank on another core comes that fast), then yields
/// the core for up to a millisecond (ranks may share cores), then sleeps
/// 100 µs at a time.
pub struct Backoff {
    start: Option<Instant>,
    polls: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    pub fn new() -> Self {
        Backoff { start: None, polls: 0 }
    }
    pub fn snooze(&mut self) {
        self.polls += 1;
        if self.polls < 32 {
            std::hint::spin_loop();
            return;
        }
        let waited = self.start.get_or_insert_with(Instant::now).elapsed();
        if waited < Duration::from_micros(20) {
            std::hint::spin_loop();
        } else if waited < Duration::from_millis(1) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// Waits for a request with no deadline (the server's waits: its client is
/// the program, which ends the job).
pub fn wait_forever(req: &mut Request) -> WireResult<()> {
    let mut b = Backoff::new();
    while !req.test()? {
        b.snooze();
    }
    Ok(())
}

/// Waits for a request until `deadline`; then gives up with an error
/// naming `peer` and `what` (the request is left for the caller to
/// abandon).
pub fn wait_until(req: &mut Request, deadline: Instant, peer: c_int, what: &str) -> WireResult<()> {
    let mut b = Backoff::new();
    while !req.test()? {
        if Instant::now() >= deadline {
            return Err(format!("rank {peer} did not take part in the {what} in time: it died, or is stuck"));
        }
        b.snooze();
    }
    Ok(())
}

/// The time a transfer of `size` bytes between two server ranks may take:
/// the program's time limit for an answer plus the bytes at 50 MB/s (far
/// below any interconnect), so only a peer that stopped makes it run out.
pub fn peer_deadline(limit_ms: u64, size: u64) -> Instant {
    Instant::now() + Duration::from_millis(limit_ms.clamp(1000, 3_600_000)) + Duration::from_micros(size / 50)
}

/// Pieces of one transfer in flight at once: the next pieces are on the
/// wire while the oldest completes.
pub const WINDOW: usize = 4;

/// Moves `len` bytes at `ptr` in pieces of at most [`CHUNK`], keeping
/// [`WINDOW`] pieces in flight and waiting for each with `wait`. `start`
/// posts one piece (a send or a receive).
///
/// # Safety
/// `[ptr, ptr+len)` must be valid for `start`'s direction, and stay so
/// if a wait gives up (the abandoned pieces may still be in MPI's hands).
unsafe fn move_all(
    ptr: *mut u8,
    len: usize,
    receiving: bool,
    start: &mut dyn FnMut(*mut u8, usize) -> WireResult<Request>,
    wait: &mut dyn FnMut(&mut Request) -> WireResult<()>,
) -> WireResult<()> {
    let mut flying: std::collections::VecDeque<(Request, usize)> = std::collections::VecDeque::new();
    let mut at = 0;
    let give_up = |flying: std::collections::VecDeque<(Request, usize)>| {
        for (r, _) in flying {
            r.abandon();
        }
    };
    // Nothing moves for nothing (the peer posts nothing either).
    while at < len || !flying.is_empty() {
        while at < len && flying.len() < WINDOW {
            let n = (len - at).min(CHUNK);
            // SAFETY: within the caller's range.
            match start(unsafe { ptr.add(at) }, n) {
                Ok(r) => flying.push_back((r, n)),
                Err(e) => {
                    give_up(flying);
                    return Err(e);
                }
            }
            at += n;
        }
        let Some((mut r, n)) = flying.pop_front() else { break };
        if let Err(e) = wait(&mut r) {
            r.abandon();
            give_up(flying);
            return Err(e);
        }
        if receiving && r.received != n {
            give_up(flying);
            return Err(format!("expected {n} bytes, received {}", r.received));
        }
    }
    Ok(())
}

/// Sends `len` bytes at `ptr` in pieces of at most [`CHUNK`], several in
/// flight, waiting for each with `wait`.
///
/// # Safety
/// `[ptr, ptr+len)` must be readable (and stay so if a wait gives up).
pub unsafe fn send_all(
    ptr: *const u8,
    len: usize,
    rank: c_int,
    tag: c_int,
    wait: &mut dyn FnMut(&mut Request) -> WireResult<()>,
) -> WireResult<()> {
    // SAFETY: each piece lies in the caller's readable range.
    let mut start = |p: *mut u8, n: usize| unsafe { Request::send(p, n, rank, tag) };
    // SAFETY: the caller's contract; sends only read.
    unsafe { move_all(ptr.cast_mut(), len, false, &mut start, wait) }
}

/// Receives exactly `len` bytes into `ptr` in pieces of at most [`CHUNK`],
/// several posted at once.
///
/// # Safety
/// `[ptr, ptr+len)` must be writable.
pub unsafe fn recv_all(
    ptr: *mut u8,
    len: usize,
    rank: c_int,
    tag: c_int,
    wait: &mut dyn FnMut(&mut Request) -> WireResult<()>,
) -> WireResult<()> {
    // SAFETY: each piece lies in the caller's writable range.
    let mut start = |p: *mut u8, n: usize| unsafe { Request::recv(p, n, rank, tag) };
    // SAFETY: the caller's contract.
    unsafe { move_all(ptr, len, true, &mut start, wait) }
}

/// Encodes a header.
pub fn header(op: u64, tag: c_int, device: u64, args: [u64; 5]) -> [u8; HEADER_WORDS * 8] {
    let words = [op, tag as u64, device, args[0], args[1], args[2], args[3], args[4]];
    let mut out = [0u8; HEADER_WORDS * 8];
    for (i, w) in words.iter().enumerate() {
        out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Decodes a header.
pub fn parse_header(bytes: &[u8]) -> Option<[u64; HEADER_WORDS]> {
    if bytes.len() != HEADER_WORDS * 8 {
        return None;
    }
    let mut w = [0u64; HEADER_WORDS];
    for (i, x) in w.iter_mut().enumerate() {
        *x = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().ok()?);
    }
    Some(w)
}

/// Little-endian `u64` at word `i` of `bytes`, if there.
pub fn word(bytes: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(i * 8..i * 8 + 8)?.try_into().ok()?))
}

/// A deadline helper.
pub fn since(t: Instant) -> Duration {
    t.elapsed()
}
