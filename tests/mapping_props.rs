//! Property tests for the mapping table and the data operations
//! (abi-reference §6.3–§6.10), checked against a deliberately simple model:
//! a list of host intervals with dynamic/hold counts and a byte-for-byte copy
//! of what the device and the host should hold.
//!
//! The runtime functions are called directly (`runtime::data::data_begin`,
//! `data_end` + `finish_end`, `data_update`) on a real host-plugin device, so
//! an error comes back as `Err` instead of the abort the exported entry points
//! would raise under the default policy. Every test works inside its own host
//! buffer and only looks at table entries inside it, so tests may share the
//! process-wide runtime and run in parallel.
//!
//! The long randomized run executes in a child process (this binary
//! re-executed) so that the runtime's diagnostics do not flood the terminal;
//! the parent checks the child's stderr for exactly one "explicit extension
//! not allowed" message per rejection the model predicted. Replay a run with
//! `OMPTARGET_RS_SEED=<seed printed by the test>`.

mod common;

use common::Rng;
use omptarget_rs::abi::MapType;
use omptarget_rs::c_api::openmp::device_api::{
    omp_get_mapped_ptr, omp_target_alloc, omp_target_associate_ptr, omp_target_disassociate_ptr, omp_target_free, omp_target_is_present,
};
use omptarget_rs::openmp::async_info::AsyncInfo;
use omptarget_rs::openmp::data::{self, BeginState, MapArg};
use omptarget_rs::openmp::device::OmpDevice as Device;
use omptarget_rs::openmp::mapping::{INF, Lookup, MapEntry, MappingTable};

const TO: u64 = MapType::TO;
const FROM: u64 = MapType::FROM;
const ALWAYS: u64 = MapType::ALWAYS;
const DELETE: u64 = MapType::DELETE;
const IMPLICIT: u64 = MapType::IMPLICIT;
const PRESENT: u64 = MapType::PRESENT;
const HOLD: u64 = MapType::OMPX_HOLD;

// ---------------------------------------------------------------------------
// MappingTable and MapEntry alone (no device).
// ---------------------------------------------------------------------------

/// `lookupMapping` (§6.4) written as plainly as possible over a list of
/// `(host_base, begin, end)` intervals: `Some((begin, contained))`.
fn model_lookup(entries: &[(usize, usize, usize)], hp: usize, size: usize) -> Option<(usize, bool)> {
    let prev = entries.iter().filter(|e| e.1 <= hp).max_by_key(|e| e.1);
    let next = entries.iter().filter(|e| e.1 > hp).min_by_key(|e| e.1);
    if size == 0 {
        if let Some(p) = prev
            && hp < p.2
        {
            return Some((p.1, true));
        }
        if let Some(n) = next
            && hp >= n.0
        {
            return Some((n.1, true));
        }
        return None;
    }
    if let Some(p) = prev
        && hp < p.2
    {
        return Some((p.1, hp + size <= p.2));
    }
    if let Some(n) = next
        && hp + size > n.1
    {
        return Some((n.1, false));
    }
    None
}

fn classify(l: &Lookup) -> Option<(usize, bool)> {
    match l {
        Lookup::Contained(e) => Some((e.host_begin, true)),
        Lookup::Extends(e) => Some((e.host_begin, false)),
        Lookup::NotFound => None,
    }
}

#[test]
fn table_lookup_matches_interval_model() {
    let seed = common::seed_from_env("OMPTARGET_RS_SEED");
    let mut rng = Rng::new(seed);
    for round in 0..200 {
        let table = MappingTable::default();
        let mut model: Vec<(usize, usize, usize)> = Vec::new();
        // Non-overlapping intervals in [1000, 2000), some with a base below the begin.
        let mut at = 1000 + rng.below(8);
        while at < 1900 {
            let len = rng.range(1, 40);
            let base = at - rng.below(at - 999).min(12);
            table.insert(MapEntry::new(base, at, len as u64, 0x10_0000 + at as u64, 0x10_0000 + at as u64, 0, rng.chance(1, 4)));
            model.push((base, at, at + len));
            at += len + rng.below(20);
        }
        assert_eq!(table.len(), model.len());
        let snap = table.snapshot();
        assert!(snap.windows(2).all(|w| w[0].host_end <= w[1].host_begin), "snapshot not ordered/non-overlapping");
        for _ in 0..400 {
            let hp = rng.range(990, 2010);
            let size = if rng.chance(1, 5) { 0 } else { rng.range(1, 60) };
            let got = classify(&table.lookup(hp, size as u64));
            let want = model_lookup(&model, hp, size);
            assert_eq!(got, want, "round {round}: lookup({hp}, {size}) over {model:?} (seed {seed:#x})");
        }
        // Entries leave only when unused.
        for e in table.snapshot() {
            assert!(!table.remove_if_unused(&e), "entry with count {} removed", e.total());
            while e.dec(false).is_some() {}
            e.dec(true);
            assert_eq!(e.total(), 0);
            assert!(table.remove_if_unused(&e));
            assert!(!table.remove_if_unused(&e), "removed twice");
        }
        assert!(table.is_empty());
    }
}

/// Reference counts (§6.3) against a two-counter model: INF never changes,
/// counts never underflow, "is last" as `decShouldRemove` defines it, and
/// `release` (reset for `delete`, then decrement) reports "last" exactly when
/// that rule says so.
#[test]
fn entry_counts_match_model() {
    let seed = common::seed_from_env("OMPTARGET_RS_SEED");
    let mut rng = Rng::new(seed);
    for _ in 0..300 {
        let permanent = rng.chance(1, 5);
        let hold0 = rng.chance(1, 2);
        let e = if permanent { MapEntry::new_permanent(64, 8, 0x1000, 0) } else { MapEntry::new(64, 64, 8, 0x1000, 0x1000, 0, hold0) };
        let mut c = if permanent {
            [INF, 0]
        } else if hold0 {
            [0, 1]
        } else {
            [1, 0]
        }; // [dyn, hold]
        for _ in 0..40 {
            let h = rng.chance(1, 2);
            let (sel, oth) = if h { (1, 0) } else { (0, 1) };
            let dec = |c: &mut [u64; 2]| {
                if c[sel] != INF && c[sel] != 0 {
                    c[sel] -= 1;
                    Some(c[sel])
                } else {
                    None
                }
            };
            match rng.below(4) {
                0 => {
                    e.inc(h);
                    if c[sel] != INF {
                        c[sel] += 1;
                    }
                }
                1 => {
                    let delete = rng.chance(1, 3);
                    if delete && c[sel] != INF {
                        c[sel] = 1;
                    }
                    let last = c[oth] == 0 && if delete { c[sel] != INF } else { c[sel] == 1 };
                    if delete {
                        e.reset(h);
                    }
                    assert_eq!(e.dec_should_remove(h, delete), last, "decShouldRemove (seed {seed:#x})");
                    assert_eq!(e.dec(h), dec(&mut c), "seed {seed:#x}");
                }
                2 => {
                    let delete = rng.chance(1, 3);
                    if delete && c[sel] != INF {
                        c[sel] = 1;
                    }
                    let last = c[oth] == 0 && if delete { c[sel] != INF } else { c[sel] == 1 };
                    dec(&mut c);
                    assert_eq!(e.release(h, delete), last, "release(hold={h}, delete={delete}) (seed {seed:#x})");
                }
                _ => assert_eq!(e.dec(h), dec(&mut c), "seed {seed:#x}"),
            }
            assert_eq!([e.dyn_count(), e.hold_count()], c, "seed {seed:#x}");
            assert_eq!(e.total(), if c[0] == INF { INF } else { c[0] + c[1] });
        }
    }
}

// ---------------------------------------------------------------------------
// Data operations on a host-plugin device.
// ---------------------------------------------------------------------------

fn device(id: i64) -> &'static Device {
    common::init_runtime();
    omptarget_rs::openmp::get().device(id).expect("host-plugin device")
}

/// A zero-initialised host buffer owned by one test; addressed only through
/// raw pointers because the runtime writes into it.
struct HostBuf {
    mem: Box<[u8]>,
}

impl HostBuf {
    fn new(len: usize) -> Self {
        HostBuf { mem: vec![0u8; len].into_boxed_slice() }
    }
    fn addr(&self) -> usize {
        self.mem.as_ptr() as usize
    }
    fn len(&self) -> usize {
        self.mem.len()
    }
    fn read(&self) -> Vec<u8> {
        // SAFETY: the buffer is live; the runtime only writes to it during calls.
        unsafe { std::slice::from_raw_parts(self.addr() as *const u8, self.len()) }.to_vec()
    }
    fn write(&self, off: usize, bytes: &[u8]) {
        assert!(off + bytes.len() <= self.len());
        // SAFETY: in bounds of the live buffer; no reference to it is held.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (self.addr() + off) as *mut u8, bytes.len()) };
    }
}

fn arg(buf: &HostBuf, off: usize, size: usize, ty: u64) -> MapArg {
    MapArg::new(buf.addr() + off, buf.addr() + off, size as i64, MapType(ty), 0, 0)
}

/// Runs one runtime operation; a panic inside it becomes `Err("PANIC: ..")`.
fn catching(f: impl FnOnce() -> omptarget_rs::base::error::Result<()>) -> Result<(), String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|e| e.to_string()),
        Err(p) => {
            let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
            Err(format!("PANIC: {}", msg.unwrap_or_default()))
        }
    }
}

fn begin(dev: &'static Device, args: &[MapArg]) -> Result<(), String> {
    let mut args = args.to_vec();
    let mut st = BeginState::default();
    catching(|| {
        let mut q = AsyncInfo::new(dev);
        data::data_begin(omptarget_rs::openmp::get(), dev, &mut args, false, &mut st, &mut q)?;
        data::process_attach(dev, &st, &mut q)?;
        q.finish(false)
    })
}

fn end(dev: &'static Device, args: &[MapArg]) -> Result<(), String> {
    catching(|| {
        let mut q = AsyncInfo::new(dev);
        let mut post = data::EndQueue::new();
        data::data_end(dev, args, false, &mut post, &mut q)?;
        data::finish_end_queue(&mut q, &mut post)?;
        q.finish(false)
    })
}

fn update(dev: &'static Device, args: &[MapArg]) -> Result<(), String> {
    catching(|| {
        let mut q = AsyncInfo::new(dev);
        data::data_update(dev, args, false, &mut q)?;
        q.finish(false)
    })
}

/// `(begin offset, end offset, dyn, hold)` of the entries inside `buf`.
fn entries_in(dev: &Device, buf: &HostBuf) -> Vec<(usize, usize, u64, u64)> {
    let lo = buf.addr();
    let hi = lo + buf.len();
    dev.table
        .snapshot()
        .iter()
        .filter(|e| e.host_begin >= lo && e.host_begin < hi)
        .map(|e| (e.host_begin - lo, e.host_end - lo, e.dyn_count(), e.hold_count()))
        .collect()
}

fn device_bytes(dev: &Device, buf: &HostBuf, off: usize, len: usize) -> Vec<u8> {
    let Lookup::Contained(e) = dev.table.lookup(buf.addr() + off, len as u64) else { panic!("[{off}, +{len}) not mapped") };
    let mut out = vec![0u8; len];
    // SAFETY: `out` is a live buffer of `len` bytes; the source lies inside a mapping.
    unsafe { dev.retrieve(out.as_mut_ptr() as usize, e.tgt_of(buf.addr() + off), len as u64) }.expect("retrieve");
    out
}

fn write_device(dev: &Device, buf: &HostBuf, off: usize, bytes: &[u8]) {
    let Lookup::Contained(e) = dev.table.lookup(buf.addr() + off, bytes.len() as u64) else {
        panic!("[{off}, +{}) not mapped", bytes.len())
    };
    // SAFETY: `bytes` is readable; the destination lies inside a mapping.
    unsafe { dev.submit(e.tgt_of(buf.addr() + off), bytes.as_ptr() as usize, bytes.len() as u64) }.expect("submit");
}

#[test]
fn explicit_extension_is_rejected_and_leaves_table_unchanged() {
    // Reference (§6.5 step 3): an explicit map that extends an existing entry
    // is an error ("explicit extension not allowed"); nothing changes.
    let dev = device(1);
    let buf = HostBuf::new(256);
    begin(dev, &[arg(&buf, 64, 32, TO)]).unwrap();
    let before = entries_in(dev, &buf);
    for (off, len) in [(48, 32), (80, 32), (32, 128), (95, 2)] {
        for extra in [0, TO, TO | FROM | ALWAYS, HOLD, PRESENT] {
            let r = begin(dev, &[arg(&buf, off, len, extra)]);
            assert!(r.is_err(), "explicit extension [{off}, +{len}) type {extra:#x} accepted");
            assert_eq!(entries_in(dev, &buf), before, "rejected extension changed the table");
        }
    }
    end(dev, &[arg(&buf, 64, 32, 0)]).unwrap();
    assert!(entries_in(dev, &buf).is_empty());
}

#[test]
fn implicit_extension_after_entry_reuses_it() {
    // Reference (§6.5 step 2): an implicit map that only partially overlaps
    // is served silently from the existing entry (count incremented).
    let dev = device(1);
    let buf = HostBuf::new(256);
    begin(dev, &[arg(&buf, 64, 32, TO)]).unwrap();
    begin(dev, &[arg(&buf, 80, 64, TO | IMPLICIT)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(64, 96, 2, 0)]);
    end(dev, &[arg(&buf, 80, 64, IMPLICIT)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(64, 96, 1, 0)]);
    end(dev, &[arg(&buf, 64, 32, 0)]).unwrap();
    assert!(entries_in(dev, &buf).is_empty());
}

#[test]
fn implicit_extension_before_entry_reuses_it() {
    // Reference (§6.5 step 2, §6.4): "extends before" counts like "extends
    // after": an implicit map is served from the entry (count incremented),
    // and an implicit exit (`must_contain` false) decrements it.
    let dev = device(1);
    let buf = HostBuf::new(256);
    begin(dev, &[arg(&buf, 64, 32, TO)]).unwrap();
    begin(dev, &[arg(&buf, 48, 32, IMPLICIT)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(64, 96, 2, 0)]);
    end(dev, &[arg(&buf, 48, 32, IMPLICIT)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(64, 96, 1, 0)]);
    end(dev, &[arg(&buf, 64, 32, 0)]).unwrap();
    assert!(entries_in(dev, &buf).is_empty());
}

#[test]
fn zero_length_section_between_base_and_begin_is_contained() {
    // Reference (§6.4): with size 0, an address in [HstPtrBase, HstPtrBegin)
    // of the next entry counts as contained (`p[0:0]` while `p[5:10]` is
    // mapped); it is present at the corresponding device address and its
    // count goes up and down like any other hit.
    let dev = device(2);
    let buf = HostBuf::new(256);
    let mapped = MapArg::new(buf.addr() + 48, buf.addr() + 64, 32, MapType(TO), 0, 0);
    begin(dev, &[mapped]).unwrap();
    let zero = MapArg::new(buf.addr() + 48, buf.addr() + 56, 0, MapType(TO), 0, 0);
    begin(dev, &[zero]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(64, 96, 2, 0)]);
    let r = data::get_tgt_ptr_begin(dev, buf.addr() + 56, 0, false, false, true, false);
    let e = r.entry.expect("zero-length section inside [base, begin) is present");
    assert_eq!(r.tgt, e.tgt_begin.wrapping_sub(8), "device address of the base-relative position");
    end(dev, &[zero]).unwrap();
    end(dev, &[mapped]).unwrap();
    assert!(entries_in(dev, &buf).is_empty());
}

#[test]
fn copy_back_only_when_last_or_always() {
    // Reference (§6.9): FROM copies back when the count drops to zero, or
    // with ALWAYS; DELETE forces the removal (and the copy with FROM).
    let dev = device(2);
    let buf = HostBuf::new(64);
    buf.write(0, &[1; 16]);
    let a = |ty| arg(&buf, 0, 16, ty);
    begin(dev, &[a(TO)]).unwrap();
    begin(dev, &[a(TO)]).unwrap(); // count 2, no second copy
    write_device(dev, &buf, 0, &[2; 16]);
    end(dev, &[a(FROM)]).unwrap(); // 2 -> 1: not last, no copy
    assert_eq!(buf.read()[..16], [1; 16]);
    end(dev, &[a(FROM | ALWAYS)]).unwrap_or_else(|e| panic!("{e}")); // 1 -> 0 anyway; copies
    assert_eq!(buf.read()[..16], [2; 16]);
    assert!(entries_in(dev, &buf).is_empty());

    begin(dev, &[a(TO)]).unwrap();
    begin(dev, &[a(TO)]).unwrap();
    write_device(dev, &buf, 0, &[3; 16]);
    end(dev, &[a(FROM | ALWAYS)]).unwrap(); // 2 -> 1 with ALWAYS: copies, stays
    assert_eq!(buf.read()[..16], [3; 16]);
    assert_eq!(entries_in(dev, &buf), vec![(0, 16, 1, 0)]);
    begin(dev, &[a(TO)]).unwrap(); // 1 -> 2
    write_device(dev, &buf, 0, &[4; 16]);
    end(dev, &[a(FROM | DELETE)]).unwrap(); // reset to 1, then 0: copies and removes
    assert_eq!(buf.read()[..16], [4; 16]);
    assert!(entries_in(dev, &buf).is_empty());
}

#[test]
fn hold_count_keeps_entry_alive() {
    // Reference (§6.3, §6.9): a dynamic exit cannot remove an entry whose
    // hold count is non-zero; DELETE without hold resets only the dynamic count.
    let dev = device(2);
    let buf = HostBuf::new(64);
    let a = |ty| arg(&buf, 8, 8, ty);
    begin(dev, &[a(TO | HOLD)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(8, 16, 0, 1)]);
    begin(dev, &[a(TO)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(8, 16, 1, 1)]);
    end(dev, &[a(FROM | DELETE)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(8, 16, 0, 1)], "hold count keeps the entry");
    end(dev, &[a(0)]).unwrap();
    assert_eq!(entries_in(dev, &buf), vec![(8, 16, 0, 1)], "dynamic count never underflows");
    end(dev, &[a(HOLD)]).unwrap();
    assert!(entries_in(dev, &buf).is_empty());
}

#[test]
fn missing_present_data_is_an_error_everywhere() {
    // Reference (§6.5 step 5, §6.9, §6.10): the `present` modifier on an
    // unmapped range fails begin, end and update; without it, end and update
    // of unmapped data are silently ignored.
    let dev = device(3);
    let buf = HostBuf::new(64);
    assert!(begin(dev, &[arg(&buf, 0, 8, TO | PRESENT)]).is_err());
    assert!(end(dev, &[arg(&buf, 0, 8, FROM | PRESENT)]).is_err());
    assert!(update(dev, &[arg(&buf, 0, 8, TO | PRESENT)]).is_err());
    assert!(end(dev, &[arg(&buf, 0, 8, FROM)]).is_ok());
    assert!(update(dev, &[arg(&buf, 0, 8, FROM)]).is_ok());
    assert!(entries_in(dev, &buf).is_empty());
}

// ---------------------------------------------------------------------------
// The model for randomized sequences.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Arg {
    base: usize,
    off: usize,
    size: usize,
    ty: u64,
}

#[derive(Debug, Clone)]
enum Op {
    Enter(Vec<Arg>),
    Exit(Vec<Arg>),
    Update(Vec<Arg>),
    RegionBegin(Vec<Arg>),
    RegionEnd,
    HostWrite(usize, Vec<u8>),
    DeviceWrite(usize, Vec<u8>),
    Associate(usize, usize),
    Disassociate(usize),
}

#[derive(Debug, Clone)]
struct ModelEntry {
    base: usize,
    begin: usize,
    end: usize,
    dyn_: u64,
    hold: u64,
    /// Expected device bytes; `None` until known (fresh allocations hold garbage).
    dev: Vec<Option<u8>>,
    /// Device memory allocated by the test for an associated pointer.
    assoc: Option<usize>,
}

impl ModelEntry {
    fn total(&self) -> u64 {
        if self.dyn_ == INF { INF } else { self.dyn_ + self.hold }
    }
    fn count(&mut self, hold: bool) -> &mut u64 {
        if hold { &mut self.hold } else { &mut self.dyn_ }
    }
}

#[derive(Debug, Default)]
struct Model {
    host: Vec<Option<u8>>,
    entries: Vec<ModelEntry>,
    extensions_rejected: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    Contained(usize),
    Extends(usize),
    None,
}

impl Model {
    fn new(len: usize) -> Self {
        Model { host: vec![Some(0); len], entries: Vec::new(), extensions_rejected: 0 }
    }

    fn lookup(&self, off: usize, size: usize) -> Found {
        let ivs: Vec<(usize, usize, usize)> = self.entries.iter().map(|e| (e.base, e.begin, e.end)).collect();
        match model_lookup(&ivs, off, size) {
            None => Found::None,
            Some((b, contained)) => {
                let i = self.entries.iter().position(|e| e.begin == b).expect("model entry");
                if contained { Found::Contained(i) } else { Found::Extends(i) }
            }
        }
    }

    fn contains(&self, off: usize) -> bool {
        self.entries.iter().any(|e| off >= e.begin && off < e.end)
    }

    /// An implicit map that extends *before* its entry is excluded from the
    /// random runs (see `implicit_extension_before_entry_reuses_it`), and so is
    /// an implicit partial overlap combined with a copy (it would touch bytes
    /// outside the device allocation, in LLVM as here). Such args become explicit.
    fn sanitize(&self, args: &mut [Arg]) {
        // Zero-length sections inside [base, begin) of an entry are excluded
        // too (see `zero_length_section_between_base_and_begin_is_contained`).
        for a in args.iter_mut().filter(|a| a.size == 0) {
            if let Found::Contained(i) = self.lookup(a.off, 0)
                && a.off < self.entries[i].begin
            {
                a.size = 1;
            }
        }
        for a in args.iter_mut().filter(|a| a.ty & IMPLICIT != 0) {
            if let Found::Extends(i) = self.lookup(a.off, a.size)
                && (a.off < self.entries[i].begin || a.ty & (FROM | ALWAYS) != 0)
            {
                a.ty &= !IMPLICIT;
            }
        }
    }

    /// `targetDataBegin` (§6.5, §6.6). Stops at the first failing arg.
    fn begin(&mut self, args: &[Arg]) -> Result<(), ()> {
        for a in args {
            let (hold, to, always) = (a.ty & HOLD != 0, a.ty & TO != 0, a.ty & ALWAYS != 0);
            let (implicit, present) = (a.ty & IMPLICIT != 0, a.ty & PRESENT != 0);
            let (i, is_new) = match self.lookup(a.off, a.size) {
                Found::Contained(i) => (i, false),
                Found::Extends(i) if implicit => {
                    assert!(a.off >= self.entries[i].begin, "generator produced an implicit extends-before");
                    (i, false)
                }
                Found::Extends(_) => {
                    self.extensions_rejected += 1;
                    return Err(());
                }
                Found::None if present => return Err(()),
                Found::None if a.size == 0 => continue,
                Found::None => {
                    let e = ModelEntry {
                        base: a.base,
                        begin: a.off,
                        end: a.off + a.size,
                        dyn_: if hold { 0 } else { 1 },
                        hold: if hold { 1 } else { 0 },
                        dev: vec![None; a.size],
                        assoc: None,
                    };
                    let at = self.entries.partition_point(|x| x.begin < a.off);
                    self.entries.insert(at, e);
                    (at, true)
                }
            };
            if !is_new {
                let c = self.entries[i].count(hold);
                if *c != INF {
                    *c += 1;
                }
            }
            if to && a.size > 0 && (is_new || always) {
                let e = &mut self.entries[i];
                let at = a.off - e.begin;
                e.dev[at..at + a.size].copy_from_slice(&self.host[a.off..a.off + a.size]);
            }
        }
        Ok(())
    }

    /// `targetDataEnd` + post-processing (§6.9): reverse order, copies during
    /// the loop, removals of entries whose total reached zero afterwards.
    fn end(&mut self, args: &[Arg]) -> Result<(), ()> {
        let mut touched = Vec::new();
        for a in args.iter().rev() {
            let (hold, delete) = (a.ty & HOLD != 0, a.ty & DELETE != 0);
            let i = match self.lookup(a.off, a.size) {
                Found::Contained(i) => i,
                Found::Extends(i) if a.ty & IMPLICIT != 0 => i,
                _ if a.ty & PRESENT != 0 => return Err(()),
                _ => continue,
            };
            let e = &mut self.entries[i];
            if delete && *e.count(hold) != INF {
                *e.count(hold) = 1;
            }
            let this = *e.count(hold);
            let other = *e.count(!hold);
            let is_last = other == 0 && if delete { this != INF } else { this == 1 };
            let c = e.count(hold);
            if *c != INF && *c != 0 {
                *c -= 1;
            }
            if a.ty & FROM != 0 && (a.ty & ALWAYS != 0 || is_last) && a.size != 0 {
                let at = a.off - e.begin;
                let bytes = e.dev[at..at + a.size].to_vec();
                self.host[a.off..a.off + a.size].copy_from_slice(&bytes);
            }
            touched.push(e.begin);
        }
        self.entries.retain(|e| !(touched.contains(&e.begin) && e.total() == 0));
        Ok(())
    }

    /// `targetDataUpdate` (§6.10): contained ranges only.
    fn update(&mut self, args: &[Arg]) -> Result<(), ()> {
        for a in args {
            let i = match self.lookup(a.off, a.size) {
                Found::Contained(i) => i,
                _ if a.ty & PRESENT != 0 => return Err(()),
                _ => continue,
            };
            let e = &mut self.entries[i];
            let at = a.off - e.begin;
            if a.ty & TO != 0 {
                e.dev[at..at + a.size].copy_from_slice(&self.host[a.off..a.off + a.size]);
            }
            if a.ty & FROM != 0 {
                let bytes = e.dev[at..at + a.size].to_vec();
                self.host[a.off..a.off + a.size].copy_from_slice(&bytes);
            }
        }
        Ok(())
    }
}

/// Drives the model and the runtime side by side, checking after every op.
struct Harness {
    dev: &'static Device,
    dev_id: i32,
    buf: HostBuf,
    model: Model,
    regions: Vec<Vec<Arg>>,
    rng: Rng,
    log: Vec<String>,
}

impl Harness {
    fn new(dev_id: i32, len: usize, rng: Rng) -> Self {
        Harness {
            dev: device(dev_id as i64),
            dev_id,
            buf: HostBuf::new(len),
            model: Model::new(len),
            regions: Vec::new(),
            rng,
            log: Vec::new(),
        }
    }

    fn map_args(&self, args: &[Arg]) -> Vec<MapArg> {
        let a0 = self.buf.addr();
        args.iter().map(|a| MapArg::new(a0 + a.base, a0 + a.off, a.size as i64, MapType(a.ty), 0, 0)).collect()
    }

    fn fail(&self, what: String) -> ! {
        let tail: Vec<&String> = self.log.iter().rev().take(12).collect();
        panic!("{what}\nlast ops (newest first):\n{tail:#?}");
    }

    fn apply(&mut self, op: Op) {
        let mut op = op;
        let is_region = matches!(op, Op::RegionBegin(_));
        match &mut op {
            Op::Enter(a) | Op::Exit(a) | Op::Update(a) | Op::RegionBegin(a) => self.model.sanitize(a),
            _ => {}
        }
        self.log.push(format!("{op:?}"));
        let before = entries_in(self.dev, &self.buf);
        match op {
            Op::Enter(args) | Op::RegionBegin(args) => {
                let want = self.model.begin(&args);
                let got = begin(self.dev, &self.map_args(&args));
                if want.is_ok() != got.is_ok() || got.as_ref().is_err_and(|e| e.starts_with("PANIC")) {
                    self.fail(format!("begin: model says {want:?}, runtime says {got:?}"));
                }
                if got.is_err() && args.len() == 1 && entries_in(self.dev, &self.buf) != before {
                    self.fail("a rejected map changed the table".into());
                }
                if is_region {
                    // A region whose begin failed would have aborted; keep it balanced anyway.
                    self.regions.push(args);
                }
            }
            Op::Exit(args) => {
                let want = self.model.end(&args);
                let got = end(self.dev, &self.map_args(&args));
                if want.is_ok() != got.is_ok() || got.as_ref().is_err_and(|e| e.starts_with("PANIC")) {
                    self.fail(format!("end: model says {want:?}, runtime says {got:?}"));
                }
            }
            Op::RegionEnd => {
                let mut args = self.regions.pop().expect("open region");
                self.model.sanitize(&mut args);
                let want = self.model.end(&args);
                let got = end(self.dev, &self.map_args(&args));
                if want.is_ok() != got.is_ok() || got.as_ref().is_err_and(|e| e.starts_with("PANIC")) {
                    self.fail(format!("region end: model says {want:?}, runtime says {got:?}"));
                }
            }
            Op::Update(args) => {
                let want = self.model.update(&args);
                let got = update(self.dev, &self.map_args(&args));
                if want.is_ok() != got.is_ok() || got.as_ref().is_err_and(|e| e.starts_with("PANIC")) {
                    self.fail(format!("update: model says {want:?}, runtime says {got:?}"));
                }
            }
            Op::HostWrite(off, bytes) => {
                self.buf.write(off, &bytes);
                for (k, b) in bytes.iter().enumerate() {
                    self.model.host[off + k] = Some(*b);
                }
            }
            Op::DeviceWrite(off, bytes) => {
                write_device(self.dev, &self.buf, off, &bytes);
                let Found::Contained(i) = self.model.lookup(off, bytes.len()) else { self.fail("device write outside the model".into()) };
                let e = &mut self.model.entries[i];
                for (k, b) in bytes.iter().enumerate() {
                    e.dev[off - e.begin + k] = Some(*b);
                }
            }
            Op::Associate(off, size) => {
                let p = omp_target_alloc(size, self.dev_id);
                assert!(!p.is_null());
                let rc = omp_target_associate_ptr((self.buf.addr() + off) as *const _, p, size, 0, self.dev_id);
                let want = match self.model.lookup(off, size) {
                    Found::None => {
                        let at = self.model.entries.partition_point(|x| x.begin < off);
                        let e = ModelEntry {
                            base: off,
                            begin: off,
                            end: off + size,
                            dyn_: INF,
                            hold: 0,
                            dev: vec![None; size],
                            assoc: Some(p as usize),
                        };
                        self.model.entries.insert(at, e);
                        0
                    }
                    _ => -1,
                };
                if rc != want {
                    self.fail(format!("omp_target_associate_ptr returned {rc}, model says {want}"));
                }
                if rc != 0 {
                    // SAFETY: allocated above for this device and not associated.
                    unsafe { omp_target_free(p, self.dev_id) };
                }
            }
            Op::Disassociate(off) => {
                let rc = omp_target_disassociate_ptr((self.buf.addr() + off) as *const _, self.dev_id);
                let (want, freed) = match self.model.lookup(off, 0) {
                    Found::Contained(i) if self.model.entries[i].begin == off => {
                        let e = &self.model.entries[i];
                        if e.hold != 0 || e.dyn_ != INF {
                            (-1, None)
                        } else {
                            let p = e.assoc;
                            self.model.entries.remove(i);
                            (0, p)
                        }
                    }
                    _ => (-1, None),
                };
                if rc != want {
                    self.fail(format!("omp_target_disassociate_ptr returned {rc}, model says {want}"));
                }
                if let Some(p) = freed {
                    // SAFETY: the device memory of the association just removed.
                    unsafe { omp_target_free(p as *mut _, self.dev_id) };
                }
            }
        }
        self.check();
    }

    /// Compares the runtime with the model and adopts bytes the model could
    /// not know (fresh device allocations).
    fn check(&mut self) {
        let real = entries_in(self.dev, &self.buf);
        let want: Vec<_> = self.model.entries.iter().map(|e| (e.begin, e.end, e.dyn_, e.hold)).collect();
        if real != want {
            self.fail(format!("table differs from model:\n runtime {real:?}\n model   {want:?}"));
        }
        // Whole table: ordered and never overlapping; no count wrapped around.
        let all = self.dev.table.snapshot();
        if let Some(w) = all.windows(2).find(|w| w[0].host_end > w[1].host_begin) {
            self.fail(format!(
                "overlapping entries [{:#x}, {:#x}) and [{:#x}, {:#x})",
                w[0].host_begin, w[0].host_end, w[1].host_begin, w[1].host_end
            ));
        }
        for e in &all {
            let (d, h) = (e.dyn_count(), e.hold_count());
            if (d != INF && d > 1 << 32) || h > 1 << 32 {
                self.fail(format!("count underflow: DynRefCount={d:#x}, HoldRefCount={h:#x}"));
            }
        }
        let host = self.buf.read();
        for (k, (want, got)) in self.model.host.iter_mut().zip(&host).enumerate() {
            match want {
                Some(w) if *w != *got => {
                    let w = *w;
                    self.fail(format!("host byte {k} is {got:#04x}, model says {w:#04x}"));
                }
                Some(_) => {}
                None => *want = Some(*got),
            }
        }
        for i in 0..self.model.entries.len() {
            let (b, n) = (self.model.entries[i].begin, self.model.entries[i].end - self.model.entries[i].begin);
            let bytes = device_bytes(self.dev, &self.buf, b, n);
            for (k, got) in bytes.iter().enumerate() {
                match self.model.entries[i].dev[k] {
                    Some(w) if w != *got => self.fail(format!("device byte {} of entry at {b} is {got:#04x}, model says {w:#04x}", k)),
                    Some(_) => {}
                    None => self.model.entries[i].dev[k] = Some(*got),
                }
            }
        }
        // omp_target_is_present / omp_get_mapped_ptr agree with the model.
        for _ in 0..4 {
            let off = self.rng.below(self.buf.len());
            let p = (self.buf.addr() + off) as *const core::ffi::c_void;
            let present = omp_target_is_present(p, self.dev_id) == 1;
            let mapped = !omp_get_mapped_ptr(p, self.dev_id).is_null();
            if present != self.model.contains(off) || mapped != present {
                self.fail(format!("offset {off}: is_present {present}, mapped {mapped}, model {}", self.model.contains(off)));
            }
        }
    }

    // ----- generation -----

    /// A range biased towards existing entries: inside one, extending one, or fresh.
    fn pick_range(&mut self) -> (usize, usize) {
        let len = self.buf.len();
        let n = self.model.entries.len();
        let r = self.rng.below(10);
        if n > 0 && r < 5 {
            let e = &self.model.entries[self.rng.below(n)];
            let (b, l) = (e.begin, e.end - e.begin);
            if self.rng.chance(1, 2) {
                return (b, l);
            }
            let off = b + self.rng.below(l);
            let lo = if self.rng.chance(1, 8) { 0 } else { 1 };
            return (off, self.rng.range(lo, b + l - off));
        }
        if n > 0 && r < 7 {
            let e = &self.model.entries[self.rng.below(n)];
            let (b, end) = (e.begin, e.end);
            if self.rng.chance(1, 2) && end < len {
                let off = self.rng.range(b, end - 1);
                return (off, self.rng.range(end - off + 1, (end - off + 24).min(len - off)));
            }
            if b > 0 {
                let off = b - self.rng.range(1, b.min(24));
                return (off, self.rng.range(b - off + 1, end - off));
            }
        }
        let size = if self.rng.chance(1, 10) { 0 } else { self.rng.range(1, 48) };
        (self.rng.below(len - size.max(1) + 1), size)
    }

    /// 1–3 pairwise disjoint args with types from `types`.
    fn pick_args(&mut self, types: &[u64], extra: &[(u64, usize)], max: usize) -> Vec<Arg> {
        let mut args: Vec<Arg> = Vec::new();
        for _ in 0..self.rng.range(1, max) {
            let (off, size) = self.pick_range();
            let base = if self.rng.chance(1, 4) { off - self.rng.below(off.min(16) + 1) } else { off };
            // Footprints [base, end) are disjoint, so no arg lands in the
            // zero-length "base gap" of an entry an earlier arg creates.
            if args.iter().any(|a| base < a.off + a.size.max(1) && a.base < off + size.max(1)) {
                continue;
            }
            let mut ty = self.rng.pick(types);
            for &(bit, one_in) in extra {
                if self.rng.chance(1, one_in) {
                    ty |= bit;
                }
            }
            args.push(Arg { base, off, size, ty });
        }
        if args.is_empty() {
            let (off, size) = self.pick_range();
            args.push(Arg { base: off, off, size, ty: types[0] });
        }
        args
    }

    fn random_op(&mut self) -> Op {
        let has_entries = !self.model.entries.is_empty();
        match self.rng.below(100) {
            0..=21 => Op::Enter(self.pick_args(&[0, TO, TO | ALWAYS], &[(HOLD, 10), (IMPLICIT, 8)], 3)),
            22..=23 => Op::Enter(vec![self.pick_args(&[TO], &[], 1)[0].with(PRESENT)]),
            24..=41 => Op::Exit(self.pick_args(&[0, FROM, FROM | ALWAYS, DELETE, FROM | DELETE], &[(HOLD, 10), (IMPLICIT, 8)], 3)),
            42..=43 => Op::Exit(vec![self.pick_args(&[0, FROM], &[], 1)[0].with(PRESENT)]),
            44..=53 => Op::Update(self.pick_args(&[TO, FROM], &[], 2)),
            54..=55 => Op::Update(vec![self.pick_args(&[TO, FROM], &[], 1)[0].with(PRESENT)]),
            56..=65 if self.regions.len() < 4 => Op::RegionBegin(self.pick_args(&[TO | FROM, TO, FROM, 0], &[(HOLD, 3), (IMPLICIT, 8)], 3)),
            66..=73 if !self.regions.is_empty() => Op::RegionEnd,
            74..=81 => {
                let off = self.rng.below(self.buf.len());
                let n = self.rng.range(1, (self.buf.len() - off).min(32));
                Op::HostWrite(off, self.rng.bytes(n))
            }
            82..=93 if has_entries => {
                let e = &self.model.entries[self.rng.below(self.model.entries.len())];
                let (b, end) = (e.begin, e.end);
                let off = self.rng.range(b, end - 1);
                let n = self.rng.range(1, end - off);
                Op::DeviceWrite(off, self.rng.bytes(n))
            }
            94..=96 => {
                let (off, size) = self.pick_range();
                Op::Associate(off, size.max(1))
            }
            97..=99 if has_entries => {
                let e = &self.model.entries[self.rng.below(self.model.entries.len())];
                Op::Disassociate(if self.rng.chance(3, 4) { e.begin } else { e.begin + (e.end - e.begin) / 2 })
            }
            _ => Op::HostWrite(0, self.rng.bytes(1)),
        }
    }

    /// Closes open regions and releases every remaining reference; the
    /// table must then hold nothing inside the buffer.
    fn drain(&mut self) {
        while !self.regions.is_empty() {
            self.apply(Op::RegionEnd);
        }
        while let Some(e) = self.model.entries.first().cloned() {
            let a = Arg { base: e.begin, off: e.begin, size: e.end - e.begin, ty: 0 };
            if e.hold > 0 {
                self.apply(Op::Exit(vec![a.with(HOLD)]));
            } else if e.dyn_ == INF {
                self.apply(Op::Disassociate(e.begin));
            } else {
                self.apply(Op::Exit(vec![a.with(FROM)]));
            }
        }
        let left = entries_in(self.dev, &self.buf);
        if !left.is_empty() {
            self.fail(format!("balanced sequence left entries: {left:?}"));
        }
    }
}

impl Arg {
    fn with(mut self, bits: u64) -> Arg {
        self.ty |= bits;
        self
    }
}

fn run_sequences(seed: u64, sequences: usize, ops: usize) -> (usize, usize) {
    let mut rng = Rng::new(seed);
    let mut rejected = 0;
    let mut total_ops = 0;
    for s in 0..sequences {
        let sub = rng.next_u64();
        let mut h = Harness::new((s % 4) as i32, 256 + rng.below(256), Rng::new(sub));
        for _ in 0..ops {
            let op = h.random_op();
            h.apply(op);
            total_ops += 1;
        }
        h.drain();
        rejected += h.model.extensions_rejected;
    }
    (rejected, total_ops)
}

/// Random enter/exit/update/region sequences over overlapping ranges agree
/// with the model op by op, and leave no entry behind once balanced.
#[test]
fn random_sequences_match_model() {
    const NAME: &str = "random_sequences_match_model";
    if common::child_case().as_deref() == Some(NAME) {
        let seed = common::seed_from_env("OMPTARGET_RS_SEED");
        let t = std::time::Instant::now();
        let (rejected, ops) = run_sequences(seed, 300, 80);
        println!("RESULT seed={seed:#x} ops={ops} rejected_extensions={rejected} in {:?}", t.elapsed());
        return;
    }
    let out = common::run_child(NAME, NAME, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: String = stderr.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(out.status.success(), "child run failed ({:?})\n--- stdout ---\n{stdout}\n--- stderr (tail) ---\n{tail}", out.status);
    let result = stdout.lines().find(|l| l.starts_with("RESULT ")).expect("child prints a RESULT line");
    println!("{result}");
    let rejected: usize = result
        .split_whitespace()
        .find_map(|f| f.strip_prefix("rejected_extensions="))
        .and_then(|v| v.parse().ok())
        .expect("rejected_extensions=N");
    // Reference (§6.14): each rejected explicit extension prints this line once.
    let messages = stderr.lines().filter(|l| l.starts_with("omptarget message: explicit extension not allowed")).count();
    assert_eq!(messages, rejected, "one 'explicit extension not allowed' message per rejected extension\n{result}");
    assert!(!stderr.contains("panic"), "a panic inside the runtime:\n{tail}");
}

// ---------------------------------------------------------------------------
// Concurrent map/unmap of one address.
// ---------------------------------------------------------------------------

/// Adds 1 to the device copy of the u64 at `host` (a "kernel"; the caller
/// holds a reference, so the entry cannot go).
fn device_increment(dev: &Device, host: usize) {
    let e = dev.table.lookup(host, 8).entry().cloned().expect("mapped while a reference is held");
    let tgt = e.tgt_of(host) as usize;
    assert!(tgt.is_multiple_of(8), "device copy of a u64 is aligned");
    // SAFETY: host-plugin device memory is host memory; the entry is mapped (we hold a reference) and other threads touch it only atomically.
    let cell = unsafe { &*(tgt as *const std::sync::atomic::AtomicU64) };
    cell.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
}

/// Threads that each map one shared u64 `tofrom`, increment its device copy
/// and unmap it again (sometimes keeping an extra reference across several
/// iterations) lose no increment: the releasing thread's copy back and
/// removal are ordered with the next thread's mapping of the same address,
/// and the table is empty at the end. `threads * iters` increments.
fn concurrent_one_address(seed: u64, threads: usize, iters: usize) -> Result<(), String> {
    concurrent_one_range(seed, threads, iters, false)
}

/// [`concurrent_one_address`] (the u64 alone), or with `straddle` for a
/// 64-byte range starting with the u64 that crosses a table shard boundary
/// (the table's multi-shard path).
fn concurrent_one_range(seed: u64, threads: usize, iters: usize, straddle: bool) -> Result<(), String> {
    let dev = device(3);
    let whole = HostBuf::new(if straddle { 3 << 20 } else { 8 });
    // 32 bytes before a 1 MiB boundary (the table's granule): the range touches two shards.
    let off = if straddle { (whole.addr() + (1 << 20)).next_multiple_of(1 << 20) - 32 - whole.addr() } else { 0 };
    let len = if straddle { 64 } else { 8 };
    let range = HostRange { buf: &whole, off, len };
    let buf = &range;
    let tofrom = arg(&whole, off, len, TO | FROM);
    let errors: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || -> Result<(), String> {
                    let mut rng = Rng::new(seed ^ (t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    let mut held = 0usize;
                    for _ in 0..iters {
                        if held == 0 && rng.chance(1, 16) {
                            // `target enter data map(to:)`, released a few iterations later.
                            begin(dev, &[arg(buf.buf, buf.off, buf.len, TO)])?;
                            held = rng.range(1, 5);
                        }
                        begin(dev, &[tofrom])?;
                        device_increment(dev, buf.buf.addr() + buf.off);
                        end(dev, &[tofrom])?;
                        if held > 0 {
                            held -= 1;
                            if held == 0 {
                                end(dev, &[arg(buf.buf, buf.off, buf.len, FROM)])?;
                            }
                        }
                    }
                    if held > 0 {
                        end(dev, &[arg(buf.buf, buf.off, buf.len, FROM)])?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())).err()).collect()
    });
    if let Some(e) = errors.first() {
        return Err(e.clone());
    }
    let value = u64::from_ne_bytes(whole.read()[off..off + 8].try_into().unwrap());
    let left = entries_in(dev, &whole);
    if value != (threads * iters) as u64 || !left.is_empty() {
        return Err(format!("seed {seed:#x}: host value {value}, expected {}; entries left {left:?}", threads * iters));
    }
    Ok(())
}

/// A part of a host buffer.
struct HostRange<'a> {
    buf: &'a HostBuf,
    off: usize,
    len: usize,
}

/// The same for a range over two table shards (no lost increment when a
/// mapping skips the second copy because no shard changed since its lookup).
#[test]
fn concurrent_enter_exit_of_a_range_over_two_shards_loses_nothing() {
    let seed = common::seed_from_env("OMPTARGET_RS_SEED");
    for round in 0..20u64 {
        concurrent_one_range(seed.wrapping_add(round), 8, 500, true).unwrap();
    }
}

#[test]
fn concurrent_enter_exit_of_one_address_loses_nothing() {
    let seed = common::seed_from_env("OMPTARGET_RS_SEED");
    for round in 0..20u64 {
        concurrent_one_address(seed.wrapping_add(round), 8, 500).unwrap();
    }
}

/// The same on the host plugin's deferred queues (`OMPTARGET_RS_HOST_QUEUES`),
/// where copies and the removal wait for events of other threads' queues.
#[test]
fn concurrent_enter_exit_of_one_address_loses_nothing_queued() {
    const NAME: &str = "concurrent_enter_exit_of_one_address_loses_nothing_queued";
    if common::child_case().as_deref() == Some(NAME) {
        let seed = common::seed_from_env("OMPTARGET_RS_SEED");
        for round in 0..20u64 {
            if let Err(e) = concurrent_one_address(seed.wrapping_add(round), 8, 300) {
                println!("FAILED {e}");
                std::process::exit(1);
            }
        }
        println!("RESULT ok");
        return;
    }
    let out = common::run_child(NAME, NAME, &[("OMPTARGET_RS_HOST_QUEUES", "2")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("RESULT ok"), "{:?}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
}
