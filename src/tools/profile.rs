//! `LIBOMPTARGET_PROFILE=file.json`: a Chrome-trace / Perfetto timeline.
//!
//! 22.1 writes LLVM's time-trace format: complete (`"ph":"X"`) events with
//! its scope names ("Runtime: target exe", "Runtime: Data Copy",
//! "HostToDev", "DevToHost", "Kernel Target", "Runtime: synchronize") on the
//! host thread that ran them, events shorter than
//! `LIBOMPTARGET_PROFILE_GRANULARITY` microseconds (default 500) left out,
//! and one "Total <name>" event per name at the end. We write the same and
//! add one track per device with every copy (direction, bytes, variable,
//! GB/s) and every kernel (name, grid, duration), plus totals per kernel and
//! per variable. The file is written when the runtime shuts down (the last
//! library unregistered), as 22.1 does.
//!
//! Device-track times ([`DeviceEvent`]): on plugins with device timing (CUDA
//! events, HSA profiling timestamps: [`Plugin::timing_start`]) an operation
//! is timed on the device and its event is written once its queue completed,
//! with the device's start and end mapped onto the host's `CLOCK_MONOTONIC`
//! (`"clock":"device"` in its args); elsewhere, or when the device gave no
//! times, the host's issue times (`"clock":"host"`).
//!
//! Cost when off: one relaxed flag load per hook.
//!
//! [`Plugin::timing_start`]: crate::plugins::Plugin::timing_start

use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static ON: AtomicBool = AtomicBool::new(false);

struct Event {
    name: String,
    tid: u64,
    ts: u64,
    dur: u64,
    /// Extra `args` members, already JSON (`"k":v,...`), or empty.
    args: String,
}

#[derive(Default)]
struct Total {
    count: u64,
    dur: u64,
    bytes: u64,
}

impl Total {
    fn add(&mut self, dur: u64, bytes: u64) {
        self.count += 1;
        self.dur += dur;
        self.bytes += bytes;
    }
}

struct State {
    file: String,
    granularity: u64,
    /// `CLOCK_MONOTONIC` at start, ns: the file's time 0 (device times are
    /// mapped onto this clock by the plugins).
    start_ns: u64,
    epoch_us: u64,
    events: Mutex<Vec<Event>>,
    /// Per scope name (22.1's totals), per kernel, per variable.
    totals: Mutex<BTreeMap<&'static str, Total>>,
    kernels: Mutex<BTreeMap<String, Total>>,
    vars: Mutex<BTreeMap<String, Total>>,
    /// Device tracks seen: user number → label.
    devices: Mutex<BTreeMap<usize, String>>,
}

static STATE: OnceLock<State> = OnceLock::new();

/// Fork safety (runtime/fork.rs): the recorded profile's locks, once a
/// profile is recorded.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    let Some(s) = STATE.get() else { return true };
    held.mutex(&s.events) && held.mutex(&s.totals) && held.mutex(&s.kernels) && held.mutex(&s.vars) && held.mutex(&s.devices)
}

/// Device tracks get thread ids from here up (no real thread has them).
const DEVICE_TID_BASE: u64 = 0x7fff_0000;

/// Reads `LIBOMPTARGET_PROFILE` once (at runtime start).
pub fn init() {
    STATE.get_or_init(|| {
        let file = std::env::var("LIBOMPTARGET_PROFILE").unwrap_or_default();
        let granularity = std::env::var("LIBOMPTARGET_PROFILE_GRANULARITY").ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(500);
        let epoch_us = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0);
        if !file.is_empty() {
            ON.store(true, Ordering::Release);
            super::hooks::set_hooks();
        }
        State {
            file,
            granularity,
            start_ns: monotonic_ns(),
            epoch_us,
            events: Mutex::new(Vec::new()),
            totals: Mutex::new(BTreeMap::new()),
            kernels: Mutex::new(BTreeMap::new()),
            vars: Mutex::new(BTreeMap::new()),
            devices: Mutex::new(BTreeMap::new()),
        }
    });
}

/// Whether a profile is being recorded.
#[inline(always)]
pub fn on() -> bool {
    if cfg!(feature = "bench-no-hooks") {
        return false;
    }
    ON.load(Ordering::Relaxed)
}

fn state() -> Option<&'static State> {
    STATE.get()
}

pub use crate::base::clock::monotonic_ns;

fn now_us(s: &State) -> u64 {
    monotonic_ns().saturating_sub(s.start_ns) / 1000
}

fn tid() -> u64 {
    // SAFETY: gettid has no preconditions.
    (unsafe { libc::gettid() }) as u64
}

/// Escapes a string for JSON.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// One host-thread scope with 22.1's name; recorded when dropped.
pub struct Scope {
    name: &'static str,
    detail: String,
    ts: u64,
}

/// Opens a scope when profiling (`detail` is only built then).
#[inline(always)]
pub fn scope(name: &'static str, detail: impl FnOnce() -> String) -> Option<Scope> {
    if !on() {
        return None;
    }
    Some(open(name, detail()))
}

#[cold]
#[inline(never)]
fn open(name: &'static str, detail: String) -> Scope {
    let ts = state().map_or(0, now_us);
    Scope { name, detail, ts }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let Some(s) = state() else { return };
        let dur = now_us(s).saturating_sub(self.ts);
        s.totals.lock().entry(self.name).or_default().add(dur, 0);
        if dur >= s.granularity {
            let args = format!("\"detail\":\"{}\"", esc(&self.detail));
            s.events.lock().push(Event { name: self.name.to_owned(), tid: tid(), ts: self.ts, dur, args });
        }
    }
}

thread_local! {
    /// Scopes opened by [`begin`] on this thread, innermost last.
    static OPEN: std::cell::RefCell<Vec<Scope>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Opens a scope closed by [`end`] (for callers that keep no guard).
#[cold]
#[inline(never)]
pub fn begin(name: &'static str, detail: &dyn Fn() -> String) {
    if on() {
        let sc = open(name, detail());
        // After this thread's locals are gone (a construct in an `atexit`
        // handler), the scope closes at once: its event has no duration.
        let _ = OPEN.try_with(|o| o.borrow_mut().push(sc));
    }
}

/// Closes the innermost scope [`begin`] opened on this thread.
#[cold]
#[inline(never)]
pub fn end() {
    if let Ok(Some(sc)) = OPEN.try_with(|o| o.borrow_mut().pop()) {
        drop(sc);
    }
}

/// 22.1's detail prefix: the construct's `psource` fields.
pub fn source_detail(loc: &crate::abi::ptr::SourceLoc) -> String {
    format!(";{};{};{};{};;", loc.file, loc.function, loc.line, loc.column)
}

thread_local! {
    /// The map-list item name of the copy about to run (a `;name;...` string address, or 0).
    static VAR: Cell<usize> = const { Cell::new(0) };
}

/// Names the variable of the next copy on this thread. Out of line: an
/// inlined thread-local access gets its address computed on the fast path.
#[cold]
#[inline(never)]
pub fn set_var(name: usize) {
    VAR.with(|v| v.set(name));
}

fn device_track(s: &State, device: usize, label: impl FnOnce() -> String) -> u64 {
    s.devices.lock().entry(device).or_insert_with(label);
    DEVICE_TID_BASE + device as u64
}

/// What a device-track event shows.
enum What {
    Copy { to_device: bool, bytes: u64, var: String },
    Kernel { name: String, grid: Option<([u32; 3], [u32; 3])>, num_teams: [u32; 3], thread_limit: [u32; 3] },
}

/// A device-track event (a copy or a kernel) whose times may come from the
/// device once its queued work completed: [`DeviceEvent::commit`] writes it.
pub struct DeviceEvent {
    device: usize,
    plugin: &'static str,
    what: What,
    /// Host times around the issue (µs on the file's scale), used when the
    /// device gives none.
    host_ts: u64,
    host_dur: u64,
}

impl std::fmt::Debug for DeviceEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.what {
            What::Copy { var, bytes, .. } => format!("copy {var} ({bytes} B)"),
            What::Kernel { name, .. } => format!("kernel {name}"),
        };
        write!(f, "DeviceEvent(device {}: {what})", self.device)
    }
}

impl DeviceEvent {
    /// Writes the event on its device's track. `device_ns`: the operation's
    /// start and end measured on the device, on the host's `CLOCK_MONOTONIC`
    /// (ns); `None`: the host's issue times are used (`"clock":"host"`).
    #[cold]
    #[inline(never)]
    pub fn commit(self, device_ns: Option<(u64, u64)>) {
        let Some(s) = state() else { return };
        let (ts, dur, clock) = match device_ns {
            // Rounded to the file's µs: the start down, the end up.
            Some((a, b)) if b >= a && a >= s.start_ns => {
                let ts = (a - s.start_ns) / 1000;
                (ts, (b - s.start_ns).div_ceil(1000).saturating_sub(ts), "device")
            }
            _ => (self.host_ts, self.host_dur, "host"),
        };
        let track = device_track(s, self.device, || format!("device {} ({})", self.device, self.plugin));
        let ev = match self.what {
            What::Copy { to_device, bytes, var } => {
                s.vars.lock().entry(var.clone()).or_default().add(dur, bytes);
                let gbps = if dur == 0 { 0.0 } else { bytes as f64 / (dur as f64 * 1000.0) };
                let (dir, var) = (if to_device { "host to device" } else { "device to host" }, esc(&var));
                Event {
                    name: format!("{} {var}", if to_device { "copy to device" } else { "copy from device" }),
                    tid: track,
                    ts,
                    dur,
                    args: format!(
                        "\"direction\":\"{dir}\",\"bytes\":{bytes},\"variable\":\"{var}\",\"GB/s\":{gbps:.3},\"clock\":\"{clock}\""
                    ),
                }
            }
            What::Kernel { name, grid, num_teams: nt, thread_limit: tl } => {
                s.kernels.lock().entry(name.clone()).or_default().add(dur, 0);
                let name = esc(&name);
                // The grid launched (teams and threads per team, x/y/z), and what the construct asked for.
                let (teams, threads) = grid.unwrap_or((nt, tl));
                Event {
                    name: format!("kernel {name}"),
                    tid: track,
                    ts,
                    dur,
                    args: format!(
                        "\"kernel\":\"{name}\",\"teams\":[{},{},{}],\"threads\":[{},{},{}],\"num_teams\":[{},{},{}],\"thread_limit\":[{},{},{}],\"duration_us\":{dur},\"clock\":\"{clock}\"",
                        teams[0], teams[1], teams[2], threads[0], threads[1], threads[2], nt[0], nt[1], nt[2], tl[0], tl[1], tl[2]
                    ),
                }
            }
        };
        s.events.lock().push(ev);
    }
}

/// A copy between host and device: 22.1's host event now, and our
/// device-track event to [`DeviceEvent::commit`] (with the device's times
/// once the copy completed, where the plugin times it).
#[cold]
#[inline(never)]
pub fn copy(device: usize, plugin: &'static str, to_device: bool, bytes: u64, ts: u64) -> Option<DeviceEvent> {
    let s = state()?;
    let dur = now_us(s).saturating_sub(ts);
    let name = if to_device { "HostToDev" } else { "DevToHost" };
    let var = VAR.with(|v| v.replace(0));
    let var = if var == 0 {
        "(runtime)".to_owned()
    } else {
        // SAFETY: names are compiler-emitted static strings.
        let (n, _) = unsafe { crate::abi::ptr::var_info(var) };
        n
    };
    s.totals.lock().entry(name).or_default().add(dur, 0);
    if dur >= s.granularity {
        s.events.lock().push(Event { name: name.to_owned(), tid: tid(), ts, dur, args: format!("\"detail\":\";Size={bytes}B\"") });
    }
    Some(DeviceEvent { device, plugin, what: What::Copy { to_device, bytes, var }, host_ts: ts, host_dur: dur })
}

/// Start time of an operation (for [`copy`] and [`kernel`]); 0 without a
/// profile (a tool alone needs no host clock read).
#[inline]
pub fn start() -> u64 {
    if on() { state().map_or(0, now_us) } else { 0 }
}

/// What [`kernel`] shows of a launch.
pub struct Launch<'a> {
    pub name: &'a str,
    /// The clauses' values (`num_teams`, `thread_limit`; 0: not given).
    pub num_teams: [u32; 3],
    pub thread_limit: [u32; 3],
    /// The grid the plugin launches (teams, threads per team), if it says.
    pub grid: Option<([u32; 3], [u32; 3])>,
    pub nargs: usize,
    pub tripcount: u64,
}

/// A kernel launch: 22.1's "Kernel Target" host event now, and our
/// device-track event to [`DeviceEvent::commit`].
#[cold]
#[inline(never)]
pub fn kernel(device: usize, plugin: &'static str, l: &Launch<'_>, ts: u64) -> Option<DeviceEvent> {
    let s = state()?;
    let dur = now_us(s).saturating_sub(ts);
    s.totals.lock().entry("Kernel Target").or_default().add(dur, 0);
    if dur >= s.granularity {
        s.events.lock().push(Event {
            name: "Kernel Target".into(),
            tid: tid(),
            ts,
            dur,
            args: format!("\"detail\":\";NumArguments={};NumTeams={};TripCount={}\"", l.nargs, l.num_teams[0], l.tripcount),
        });
    }
    let what = What::Kernel { name: l.name.to_owned(), grid: l.grid, num_teams: l.num_teams, thread_limit: l.thread_limit };
    Some(DeviceEvent { device, plugin, what, host_ts: ts, host_dur: dur })
}

/// Writes the file (once, at shutdown).
pub fn write() {
    if !on() {
        return;
    }
    ON.store(false, Ordering::Release);
    let Some(s) = state() else { return };
    let pid = std::process::id();
    let mut out = String::from("{\"traceEvents\":[\n");
    let mut first = true;
    let mut push = |out: &mut String, line: String| {
        if !first {
            out.push_str(",\n");
        }
        first = false;
        out.push_str(&line);
    };
    for e in s.events.lock().iter() {
        let args = if e.args.is_empty() { String::new() } else { format!(",\"args\":{{{}}}", e.args) };
        push(
            &mut out,
            format!(
                "{{\"pid\":{pid},\"tid\":{},\"ts\":{},\"ph\":\"X\",\"dur\":{},\"name\":\"{}\"{args}}}",
                e.tid,
                e.ts,
                e.dur,
                esc(&e.name)
            ),
        );
    }
    // Totals, each on its own track as 22.1 writes them: scopes, then ours.
    let mut total_tid = DEVICE_TID_BASE + 0x8000;
    let mut totals: Vec<(String, Total)> =
        std::mem::take(&mut *s.totals.lock()).into_iter().map(|(k, v)| (format!("Total {k}"), v)).collect();
    totals.sort_by(|a, b| b.1.dur.cmp(&a.1.dur).then(a.0.cmp(&b.0)));
    for (name, t) in totals {
        total_tid += 1;
        let avg = t.dur / t.count.max(1) / 1000;
        push(
            &mut out,
            format!(
                "{{\"pid\":{pid},\"tid\":{total_tid},\"ph\":\"X\",\"ts\":0,\"dur\":{},\"name\":\"{}\",\"args\":{{\"count\":{},\"avg ms\":{avg}}}}}",
                t.dur,
                esc(&name),
                t.count
            ),
        );
    }
    for (name, t) in s.kernels.lock().iter() {
        total_tid += 1;
        push(
            &mut out,
            format!(
                "{{\"pid\":{pid},\"tid\":{total_tid},\"ph\":\"X\",\"ts\":0,\"dur\":{},\"name\":\"Total kernel {}\",\"args\":{{\"count\":{},\"total_us\":{}}}}}",
                t.dur,
                esc(name),
                t.count,
                t.dur
            ),
        );
    }
    for (name, t) in s.vars.lock().iter() {
        total_tid += 1;
        let gbps = if t.dur == 0 { 0.0 } else { t.bytes as f64 / (t.dur as f64 * 1000.0) };
        push(
            &mut out,
            format!(
                "{{\"pid\":{pid},\"tid\":{total_tid},\"ph\":\"X\",\"ts\":0,\"dur\":{},\"name\":\"Total variable {}\",\"args\":{{\"count\":{},\"bytes\":{},\"GB/s\":{gbps:.3}}}}}",
                t.dur,
                esc(name),
                t.count,
                t.bytes
            ),
        );
    }
    push(
        &mut out,
        format!(
            "{{\"cat\":\"\",\"pid\":{pid},\"tid\":{pid},\"ts\":0,\"ph\":\"M\",\"name\":\"process_name\",\"args\":{{\"name\":\"libomptarget\"}}}}"
        ),
    );
    let exe = std::env::current_exe().ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_default();
    push(
        &mut out,
        format!(
            "{{\"cat\":\"\",\"pid\":{pid},\"tid\":{pid},\"ts\":0,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{{\"name\":\"{}\"}}}}",
            esc(&exe)
        ),
    );
    for (dev, label) in s.devices.lock().iter() {
        push(
            &mut out,
            format!(
                "{{\"cat\":\"\",\"pid\":{pid},\"tid\":{},\"ts\":0,\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{{\"name\":\"{}\"}}}}",
                DEVICE_TID_BASE + *dev as u64,
                esc(label)
            ),
        );
    }
    let _ = write!(out, "\n],\n\"beginningOfTime\":{}}}\n", s.epoch_us);
    let path = if s.file == "-" { None } else { Some(&s.file) };
    match path {
        Some(p) => {
            if let Err(e) = std::fs::write(p, out) {
                crate::base::diag::report(&format!("LIBOMPTARGET_PROFILE: cannot write {p}: {e}"));
            }
        }
        None => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(out.as_bytes());
        }
    }
}
