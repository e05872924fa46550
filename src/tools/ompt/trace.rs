//! OMPT device tracing: the entry points a tool looks up with the
//! function `device_initialize` hands it, for devices whose plugin has a
//! device clock ([`Plugin::device_clock`]: the CUDA and AMDGPU plugins; the
//! host plugin has none, and its lookup answers NULL for every tracing name,
//! as 22.1's does).
//!
//! A tool enables record types with `ompt_set_trace_ompt` (target,
//! target_data_op, target_submit, by their callback codes, EMI or not; 0 for
//! all), then `ompt_start_trace` with its buffer-request and buffer-complete
//! callbacks. Records (`ompt_record_ompt_t`, 104 bytes, omp-tools.h's
//! layout) are written into the tool's buffer; a full buffer, a flush, a
//! stop and the runtime's shutdown hand it back with buffer-complete
//! (`buffer_owned` = 1: the tool frees it). Native records are not
//! supported (`ompt_set_trace_native` answers `ompt_set_never`).
//!
//! Times are the device's clock in ns: CUDA events (the elapsed time since a
//! base event), the HSA system timestamp. An operation is timed from its
//! begin to its end; queued work is waited for before its end is read while
//! its device is traced. `ompt_translate_time` maps a device time to
//! `omp_get_wtime`'s scale through the pair (device time, host time) read at
//! `ompt_start_trace`.
//!
//! Cost: none without a tool; with one, one relaxed load ([`any`]) per data
//! operation until some device is traced.
//!
//! [`Plugin::device_clock`]: crate::plugins::Plugin::device_clock

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;

/// `ompt_record_ompt_t` (omp-tools.h): 104 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Record {
    pub kind: c_int,
    pub time: u64,
    pub thread_id: u64,
    pub target_id: u64,
    pub body: Body,
}

/// The part of `ompt_record_ompt_t`'s union this runtime writes.
#[repr(C)]
#[derive(Clone, Copy)]
pub union Body {
    pub target: TargetRec,
    pub data_op: DataOpRec,
    pub kernel: KernelRec,
    /// The union's size in omp-tools.h (its largest member).
    raw: [u64; 9],
}

/// `ompt_record_target_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TargetRec {
    pub kind: c_int,
    pub endpoint: c_int,
    pub device_num: c_int,
    pub task_id: u64,
    pub target_id: u64,
    pub codeptr_ra: *const c_void,
}

/// `ompt_record_target_data_op_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DataOpRec {
    pub host_op_id: u64,
    pub optype: c_int,
    pub src_addr: *mut c_void,
    pub src_device_num: c_int,
    pub dest_addr: *mut c_void,
    pub dest_device_num: c_int,
    pub bytes: usize,
    pub end_time: u64,
    pub codeptr_ra: *const c_void,
}

/// `ompt_record_target_kernel_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KernelRec {
    pub host_op_id: u64,
    pub requested_num_teams: c_uint,
    pub granted_num_teams: c_uint,
    pub end_time: u64,
}

const REC: usize = std::mem::size_of::<Record>();
const _: () = assert!(REC == 104);

// Record types (`ompt_callbacks_t` codes, the non-EMI ones name records).
pub const TARGET: c_int = 8;
pub const DATA_OP: c_int = 9;
pub const SUBMIT: c_int = 10;
const EMI_OFFSET: c_uint = 25; // target_emi = 33 = target + 25, and so on.

// `ompt_set_result_t`.
const SET_ERROR: c_int = 0;
const SET_NEVER: c_int = 1;
const SET_ALWAYS: c_int = 5;
// `ompt_record_t`.
const RECORD_OMPT: c_int = 1;
const RECORD_INVALID: c_int = 3;

type Buffer = *mut c_void;
type Request = unsafe extern "C" fn(c_int, *mut Buffer, *mut usize);
type Complete = unsafe extern "C" fn(c_int, Buffer, usize, u64, c_int);

/// One device's tracing state.
struct Trace {
    /// Enabled record types, bit = callback code.
    events: u64,
    running: bool,
    paused: bool,
    request: Option<Request>,
    complete: Option<Complete>,
    buf: Buffer,
    cap: usize,
    used: usize,
}

// SAFETY: `buf` is the tool's buffer, only touched under the state's lock.
unsafe impl Send for Trace {}

impl Default for Trace {
    fn default() -> Self {
        Trace { events: 0, running: false, paused: false, request: None, complete: None, buf: std::ptr::null_mut(), cap: 0, used: 0 }
    }
}

/// Set once some device's trace was started: the one test a hook makes.
static ANY: AtomicBool = AtomicBool::new(false);
static STATE: Mutex<Option<HashMap<usize, Trace>>> = Mutex::new(None);
/// Per device: (device ns, `omp_get_wtime` s) read together at start; apart
/// from STATE so `ompt_translate_time` works inside buffer-complete.
static SYNC: Mutex<Vec<(usize, u64, f64)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static NEXT_THREAD: AtomicU64 = AtomicU64::new(1);

/// Fork safety (runtime/fork.rs): the device traces and their time bases.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&STATE) && held.mutex(&SYNC)
}

thread_local! {
    /// Set while a buffer callback of the tool runs on this thread: a
    /// start/flush/stop from inside it fails instead of deadlocking.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
    static THREAD_ID: Cell<u64> = const { Cell::new(0) };
    /// The begin time of the operation in progress on this thread.
    static OP_BEGIN: Cell<u64> = const { Cell::new(0) };
    /// The target id of the construct in progress (records' `target_id`).
    static TARGET_ID: Cell<u64> = const { Cell::new(0) };
}

/// Whether some device is traced (hooks test this before anything else).
#[inline(always)]
pub fn any() -> bool {
    if cfg!(feature = "bench-no-hooks") {
        return false;
    }
    ANY.load(Ordering::Relaxed)
}

fn with<R>(device: usize, f: impl FnOnce(&mut Trace) -> R) -> R {
    let mut g = STATE.lock();
    f(g.get_or_insert_with(HashMap::new).entry(device).or_default())
}

/// Whether `device` records `kind` now.
pub fn enabled(device: usize, kind: c_int) -> bool {
    enabled_any(device, 1 << kind)
}

/// Whether `device` records one of the record types in `kinds` (bit = callback code) now.
pub fn enabled_any(device: usize, kinds: u64) -> bool {
    any() && with(device, |t| t.running && !t.paused && t.events & kinds != 0)
}

/// The device clock of runtime device `device` (0: none).
pub fn clock(device: usize) -> u64 {
    super::device_entry(device).and_then(|e| e.plugin.device_clock(e.plugin_device)).unwrap_or(0)
}

fn thread_id() -> u64 {
    THREAD_ID.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_THREAD.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

/// Begin of a traced data operation or kernel: remembers its start time.
pub fn op_begin(device: usize, kind: c_int) {
    if enabled(device, kind) {
        OP_BEGIN.with(|b| b.set(clock(device)));
    }
}

/// Begin of a construct: a new target id for its records.
pub fn construct_begin(device: i64, kind: c_int, endpoint: c_int, codeptr: *const c_void) {
    TARGET_ID.with(|t| t.set(NEXT_ID.fetch_add(1, Ordering::Relaxed)));
    construct_point(device, kind, endpoint, codeptr);
}

/// A target record (begin or end of a construct).
pub fn construct_point(device: i64, kind: c_int, endpoint: c_int, codeptr: *const c_void) {
    let Ok(device) = usize::try_from(device) else { return };
    if !enabled(device, TARGET) {
        return;
    }
    let target_id = TARGET_ID.with(|t| t.get());
    let body = Body { target: TargetRec { kind, endpoint, device_num: device as c_int, task_id: 0, target_id, codeptr_ra: codeptr } };
    push(device, TARGET, clock(device), body);
}

/// End of a traced data operation: one record with its start and end times.
#[allow(clippy::too_many_arguments)] // The record's own fields.
pub fn data_op_end(device: usize, op: c_int, src: usize, src_dev: i64, dst: usize, dst_dev: i64, bytes: u64, codeptr: *const c_void) {
    if !enabled(device, DATA_OP) {
        return;
    }
    let end = clock(device);
    let begin = OP_BEGIN.with(|b| b.replace(0));
    let body = Body {
        data_op: DataOpRec {
            host_op_id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            optype: op,
            src_addr: src as *mut c_void,
            src_device_num: src_dev as c_int,
            dest_addr: dst as *mut c_void,
            dest_device_num: dst_dev as c_int,
            bytes: bytes as usize,
            end_time: end,
            codeptr_ra: codeptr,
        },
    };
    push(device, DATA_OP, if begin == 0 { end } else { begin }, body);
}

/// End of a traced kernel: one record with its start and end times.
pub fn submit_end(device: usize, teams: u32) {
    if !enabled(device, SUBMIT) {
        return;
    }
    let end = clock(device);
    let begin = OP_BEGIN.with(|b| b.replace(0));
    let body = Body {
        kernel: KernelRec {
            host_op_id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            requested_num_teams: teams,
            granted_num_teams: teams,
            end_time: end,
        },
    };
    push(device, SUBMIT, if begin == 0 { end } else { begin }, body);
}

/// Runs a buffer callback of the tool with the reentrancy guard set.
fn callback(f: impl FnOnce()) {
    IN_CALLBACK.with(|c| c.set(true));
    f();
    IN_CALLBACK.with(|c| c.set(false));
}

fn in_callback() -> bool {
    IN_CALLBACK.with(|c| c.get())
}

/// Hands the buffer back to the tool (if it holds records, or `always`).
fn deliver(device: usize, t: &mut Trace, always: bool) {
    if t.buf.is_null() || (t.used == 0 && !always) {
        return;
    }
    let (buf, used) = (t.buf, t.used);
    t.buf = std::ptr::null_mut();
    (t.cap, t.used) = (0, 0);
    if let Some(f) = t.complete {
        // SAFETY: the tool's callback with its own buffer; `used` bytes hold records from cursor 0; the tool owns it now.
        callback(|| unsafe { f(device as c_int, buf, used, 0, 1) });
    }
}

fn push(device: usize, kind: c_int, time: u64, body: Body) {
    let rec = Record { kind, time, thread_id: thread_id(), target_id: TARGET_ID.with(|t| t.get()), body };
    let mut g = STATE.lock();
    let Some(t) = g.get_or_insert_with(HashMap::new).get_mut(&device) else { return };
    if !t.running {
        return;
    }
    if !t.buf.is_null() && t.used + REC > t.cap {
        deliver(device, t, false);
    }
    if t.buf.is_null() {
        let (mut buf, mut bytes): (Buffer, usize) = (std::ptr::null_mut(), 0);
        if let Some(f) = t.request {
            // SAFETY: the tool's callback with two live out-parameters.
            callback(|| unsafe { f(device as c_int, &mut buf, &mut bytes) });
        }
        if buf.is_null() || bytes < REC {
            crate::debug!("OMPT trace: device {device}: the tool gave no buffer ({bytes} bytes); record dropped");
            return;
        }
        (t.buf, t.cap, t.used) = (buf, bytes, 0);
    }
    // SAFETY: `[buf, buf+cap)` is the tool's buffer (its request said so); `used + REC <= cap`; unaligned write.
    unsafe { t.buf.cast::<u8>().add(t.used).cast::<Record>().write_unaligned(rec) };
    t.used += REC;
}

/// Flushes and stops every device's trace (the runtime's shutdown).
pub fn shutdown() {
    if !any() {
        return;
    }
    let mut g = STATE.lock();
    for (&d, t) in g.get_or_insert_with(HashMap::new).iter_mut() {
        if t.running {
            deliver(d, t, true);
            t.running = false;
        }
    }
}

// ------------------------------------------------------------ entry points ---

/// The runtime device an `ompt_device_t *` names (the pointer
/// `device_initialize` gave), if it is one and its plugin traces.
fn device_of(dev: *mut c_void) -> Option<usize> {
    if dev.is_null() {
        return None;
    }
    super::device_by_handle(dev as usize).filter(|&d| super::device_entry(d).is_some_and(|e| e.plugin.traceable()))
}

unsafe extern "C" fn set_trace_ompt(dev: *mut c_void, enable: c_uint, etype: c_uint) -> c_int {
    entry("ompt_set_trace_ompt", SET_ERROR, || {
        let Some(d) = device_of(dev).filter(|_| !in_callback()) else { return SET_ERROR };
        let bits: u64 = match etype {
            0 => (1 << TARGET) | (1 << DATA_OP) | (1 << SUBMIT),
            8..=10 => 1 << etype,
            33..=35 => 1 << (etype - EMI_OFFSET),
            _ => return SET_NEVER,
        };
        with(d, |t| if enable != 0 { t.events |= bits } else { t.events &= !bits });
        SET_ALWAYS
    })
}

unsafe extern "C" fn set_trace_native(_dev: *mut c_void, _enable: c_int, _flags: c_int) -> c_int {
    SET_NEVER
}

unsafe extern "C" fn start_trace(dev: *mut c_void, request: Option<Request>, complete: Option<Complete>) -> c_int {
    entry("ompt_start_trace", 0, || {
        let (Some(d), Some(request), Some(complete)) = (device_of(dev), request, complete) else { return 0 };
        if in_callback() {
            return 0;
        }
        let (dev_t, host_t) = (clock(d), wtime());
        {
            let mut s = SYNC.lock();
            s.retain(|e| e.0 != d);
            s.push((d, dev_t, host_t));
        }
        with(d, |t| {
            if t.running {
                deliver(d, t, true);
            }
            (t.request, t.complete, t.running, t.paused) = (Some(request), Some(complete), true, false);
        });
        ANY.store(true, Ordering::Release);
        1
    })
}

unsafe extern "C" fn pause_trace(dev: *mut c_void, begin_pause: c_int) -> c_int {
    entry("ompt_pause_trace", 0, || {
        let Some(d) = device_of(dev).filter(|_| !in_callback()) else { return 0 };
        with(d, |t| {
            t.paused = begin_pause != 0;
            t.running as c_int
        })
    })
}

unsafe extern "C" fn flush_trace(dev: *mut c_void) -> c_int {
    hand_back("ompt_flush_trace", dev, false)
}

unsafe extern "C" fn stop_trace(dev: *mut c_void) -> c_int {
    hand_back("ompt_stop_trace", dev, true)
}

/// Flush (the buffer back if it holds records) or, with `stop`, stop (the
/// buffer back in any case, the trace ended): 1 if the trace was running.
fn hand_back(name: &'static str, dev: *mut c_void, stop: bool) -> c_int {
    entry(name, 0, || {
        let Some(d) = device_of(dev).filter(|_| !in_callback()) else { return 0 };
        with(d, |t| {
            if !t.running {
                return 0;
            }
            deliver(d, t, stop);
            t.running = !stop;
            1
        })
    })
}

unsafe extern "C" fn advance_buffer_cursor(_dev: *mut c_void, buffer: Buffer, size: usize, current: u64, next: *mut u64) -> c_int {
    if buffer.is_null() || next.is_null() {
        return 0;
    }
    let n = current.saturating_add(REC as u64);
    // SAFETY: `next` is the tool's non-NULL out-parameter.
    unsafe { next.write(n) };
    (n.saturating_add(REC as u64) <= size as u64) as c_int
}

unsafe extern "C" fn get_record_type(buffer: Buffer, current: u64) -> c_int {
    if buffer.is_null() || !current.is_multiple_of(REC as u64) { RECORD_INVALID } else { RECORD_OMPT }
}

unsafe extern "C" fn get_record_ompt(buffer: Buffer, current: u64) -> *mut Record {
    if buffer.is_null() || !current.is_multiple_of(REC as u64) {
        return std::ptr::null_mut();
    }
    // The cursor is a byte offset into the tool's buffer (records are 104 bytes from 0).
    buffer.cast::<u8>().wrapping_add(current as usize).cast()
}

unsafe extern "C" fn get_record_native(_buffer: Buffer, _current: u64, host_op_id: *mut u64) -> *mut c_void {
    if !host_op_id.is_null() {
        // SAFETY: the tool's non-NULL out-parameter.
        unsafe { host_op_id.write(0) };
    }
    std::ptr::null_mut()
}

unsafe extern "C" fn get_record_abstract(_native: *mut c_void) -> *mut c_void {
    std::ptr::null_mut()
}

unsafe extern "C" fn get_device_time(dev: *mut c_void) -> u64 {
    entry("ompt_get_device_time", 0, || device_of(dev).map_or(0, clock))
}

unsafe extern "C" fn translate_time(dev: *mut c_void, time: u64) -> f64 {
    entry("ompt_translate_time", 0.0, || {
        let Some(d) = device_of(dev) else { return 0.0 };
        let Some((_, dev_t, host_t)) = SYNC.lock().iter().find(|e| e.0 == d).copied() else { return 0.0 };
        host_t + (time as f64 - dev_t as f64) * 1e-9
    })
}

/// Runs an entry point's body; a panic is reported and gives `fallback`.
fn entry<T: Copy>(name: &'static str, fallback: T, f: impl FnOnce() -> T) -> T {
    crate::base::guard::value_entry(name, fallback, || Ok(f()))
}

/// `omp_get_wtime` of libomp (the host scale `ompt_translate_time` maps to).
fn wtime() -> f64 {
    // SAFETY: dlsym with a NUL-terminated name; NULL or libomp's `double omp_get_wtime(void)`.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"omp_get_wtime".as_ptr()) };
    if f.is_null() {
        return 0.0;
    }
    // SAFETY: as above.
    let f: unsafe extern "C" fn() -> f64 = unsafe { std::mem::transmute(f) };
    // SAFETY: takes no arguments.
    unsafe { f() }
}

/// The lookup a traced device's `device_initialize` gets: the tracing entry points by name.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string (libomp's lookup convention).
pub unsafe extern "C" fn lookup(name: *const c_char) -> *mut c_void {
    if name.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: libomp's convention: a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) };
    macro_rules! table {
        ($($n:literal => $f:expr),* $(,)?) => {
            match name.to_bytes() {
                $($n => $f as *mut c_void,)*
                _ => std::ptr::null_mut(),
            }
        };
    }
    table! {
        b"ompt_set_trace_ompt" => set_trace_ompt as unsafe extern "C" fn(_, _, _) -> _,
        b"ompt_set_trace_native" => set_trace_native as unsafe extern "C" fn(_, _, _) -> _,
        b"ompt_start_trace" => start_trace as unsafe extern "C" fn(_, _, _) -> _,
        b"ompt_pause_trace" => pause_trace as unsafe extern "C" fn(_, _) -> _,
        b"ompt_flush_trace" => flush_trace as unsafe extern "C" fn(_) -> _,
        b"ompt_stop_trace" => stop_trace as unsafe extern "C" fn(_) -> _,
        b"ompt_advance_buffer_cursor" => advance_buffer_cursor as unsafe extern "C" fn(_, _, _, _, _) -> _,
        b"ompt_get_record_type" => get_record_type as unsafe extern "C" fn(_, _) -> _,
        b"ompt_get_record_ompt" => get_record_ompt as unsafe extern "C" fn(_, _) -> _,
        b"ompt_get_record_native" => get_record_native as unsafe extern "C" fn(_, _, _) -> _,
        b"ompt_get_record_abstract" => get_record_abstract as unsafe extern "C" fn(_) -> _,
        b"ompt_get_device_time" => get_device_time as unsafe extern "C" fn(_) -> _,
        b"ompt_translate_time" => translate_time as unsafe extern "C" fn(_, _) -> _,
    }
}
