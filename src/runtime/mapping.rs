//! The per-device mapping table (abi-reference §6.3–§6.5): host ranges mapped
//! to device addresses with dynamic and hold reference counts.
//!
//! Invariants: entries never overlap; an entry is removed only under the write
//! lock and only when its total count is zero; `INF` counts never change.
//! A lookup hit takes only this device's read lock and updates counts with
//! atomics, so concurrent regions on present data do not serialise.

use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The "infinite" count of declare-target globals and associated pointers.
pub const INF: u64 = u64::MAX;

/// A pointer inside a mapped entry that was attached to a device pointee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shadow {
    pub host_ptr_addr: usize,
    pub host_ptr_value: u64,
    pub tgt_ptr_addr: u64,
    pub tgt_ptr_value: u64,
}

/// One mapping.
#[derive(Debug)]
pub struct MapEntry {
    pub host_base: usize,
    pub host_begin: usize,
    pub host_end: usize,
    pub tgt_alloc: u64,
    pub tgt_begin: u64,
    /// `map_var_info_t` of the mapping (0 when unnamed), for diagnostics.
    pub name: usize,
    dyn_ref: AtomicU64,
    hold_ref: AtomicU64,
    pub shadows: Mutex<Vec<Shadow>>,
}

impl MapEntry {
    /// A new entry with the counts of a fresh mapping (`hold` selects which).
    pub fn new(host_base: usize, host_begin: usize, size: u64, tgt_alloc: u64, tgt_begin: u64, name: usize, hold: bool) -> Self {
        MapEntry {
            host_base,
            host_begin,
            host_end: host_begin + size as usize,
            tgt_alloc,
            tgt_begin,
            name,
            dyn_ref: AtomicU64::new(if hold { 0 } else { 1 }),
            hold_ref: AtomicU64::new(if hold { 1 } else { 0 }),
            shadows: Mutex::new(Vec::new()),
        }
    }
    /// An entry whose dynamic count is INF (globals, associated pointers).
    pub fn new_permanent(host_begin: usize, size: u64, tgt_begin: u64, name: usize) -> Self {
        let e = Self::new(host_begin, host_begin, size, tgt_begin, tgt_begin, name, false);
        e.dyn_ref.store(INF, Ordering::Relaxed);
        e
    }
    pub fn size(&self) -> u64 {
        (self.host_end - self.host_begin) as u64
    }
    pub fn dyn_count(&self) -> u64 {
        self.dyn_ref.load(Ordering::Acquire)
    }
    pub fn hold_count(&self) -> u64 {
        self.hold_ref.load(Ordering::Acquire)
    }
    fn counter(&self, hold: bool) -> &AtomicU64 {
        if hold { &self.hold_ref } else { &self.dyn_ref }
    }
    /// Total reference count (`INF` when the dynamic count is).
    pub fn total(&self) -> u64 {
        let d = self.dyn_count();
        if d == INF { INF } else { d.saturating_add(self.hold_count()) }
    }
    /// Increments the selected count unless it is INF.
    pub fn inc(&self, hold: bool) {
        let _ = self.counter(hold).fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| (c != INF).then(|| c + 1));
    }
    /// Decrements the selected count unless it is INF or 0. Returns the new
    /// value when it changed.
    pub fn dec(&self, hold: bool) -> Option<u64> {
        self.counter(hold).fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| (c != INF && c != 0).then(|| c - 1)).ok().map(|old| old - 1)
    }

    /// Releases one reference (`delete` first resets the count to 1) and says
    /// whether this call brought the total to zero, atomically with respect
    /// to other releases of the same count: exactly one releaser sees `true`.
    pub fn release(&self, hold: bool, force_delete: bool) -> bool {
        if force_delete {
            self.reset(hold);
        }
        self.dec(hold) == Some(0) && self.counter(!hold).load(Ordering::Acquire) == 0
    }
    /// `reset` for `delete`: the selected count becomes 1 unless INF.
    pub fn reset(&self, hold: bool) {
        let _ = self.counter(hold).fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| (c != INF).then_some(1));
    }
    /// Would decrementing the selected count remove the entry
    /// (`decShouldRemove`)?
    pub fn dec_should_remove(&self, hold: bool, after_reset: bool) -> bool {
        let other = self.counter(!hold).load(Ordering::Acquire);
        if other != 0 {
            return false;
        }
        let this = self.counter(hold).load(Ordering::Acquire);
        if after_reset { this != INF } else { this == 1 }
    }
    /// Device address of host address `hp` inside this entry.
    pub fn tgt_of(&self, hp: usize) -> u64 {
        // `hp` may lie below the begin (zero-length sections between base
        // and begin, implicit overlaps): wrap like the C arithmetic does.
        self.tgt_begin.wrapping_add((hp as u64).wrapping_sub(self.host_begin as u64))
    }
    pub fn contains(&self, hp: usize) -> bool {
        hp >= self.host_begin && hp < self.host_end
    }
}

/// Result of [`MappingTable::lookup`].
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The range lies inside this entry.
    Contained(Arc<MapEntry>),
    /// The range overlaps this entry but is not contained in it.
    Extends(Arc<MapEntry>),
    NotFound,
}

impl Lookup {
    pub fn entry(&self) -> Option<&Arc<MapEntry>> {
        match self {
            Lookup::Contained(e) | Lookup::Extends(e) => Some(e),
            Lookup::NotFound => None,
        }
    }
}

/// One device's mapping table.
#[derive(Debug, Default)]
pub struct MappingTable {
    map: RwLock<BTreeMap<usize, Arc<MapEntry>>>,
    /// Bumped under the write lock by every change of the map, so a writer
    /// can tell that nothing changed since its read-locked lookup.
    version: AtomicU64,
}

/// The lookup rule of `lookupMapping` on an already-locked map.
pub fn lookup_in(map: &BTreeMap<usize, Arc<MapEntry>>, hp: usize, size: u64) -> Lookup {
    let prev = || map.range(..=hp).next_back().map(|(_, e)| e);
    let next = || map.range(hp.saturating_add(1)..).next().map(|(_, e)| e);
    if size == 0 {
        let prev = prev();
        if let Some(p) = prev
            && hp < p.host_end
        {
            return Lookup::Contained(p.clone());
        }
        // A zero-length section between an entry's base and its begin counts.
        if let Some(n) = next()
            && hp >= n.host_base
        {
            return Lookup::Contained(n.clone());
        }
        return Lookup::NotFound;
    }
    let end = hp.saturating_add(size as usize);
    // Fast path, one tree descent: the last entry starting before the end of
    // the range decides hits and misses; only overlaps that are not
    // containment (error paths) need the reference's prev/next analysis.
    match map.range(..end).next_back().map(|(_, e)| e) {
        None => return Lookup::NotFound,
        Some(e) if e.host_end <= hp => return Lookup::NotFound,
        Some(e) if e.host_begin <= hp && end <= e.host_end => return Lookup::Contained(e.clone()),
        Some(_) => {}
    }
    if let Some(p) = prev()
        && hp < p.host_end
    {
        return if end <= p.host_end { Lookup::Contained(p.clone()) } else { Lookup::Extends(p.clone()) };
    }
    if let Some(n) = next()
        && end > n.host_begin
    {
        return Lookup::Extends(n.clone());
    }
    Lookup::NotFound
}

impl MappingTable {
    /// Finds the entry for `[hp, hp+size)` (read lock only).
    pub fn lookup(&self, hp: usize, size: u64) -> Lookup {
        lookup_in(&self.map.read(), hp, size)
    }

    /// Finds the entry and runs `f` on the result while the read lock is
    /// held, so count changes made by `f` cannot race with a removal (which
    /// needs the write lock and re-checks the count).
    pub fn lookup_then<R>(&self, hp: usize, size: u64, f: impl FnOnce(&Lookup) -> R) -> (Lookup, R) {
        let (l, r, _) = self.lookup_then_versioned(hp, size, f);
        (l, r)
    }

    /// [`MappingTable::lookup_then`], also returning the table's version
    /// at the time of the lookup (for [`MappingTable::with_write_since`]).
    pub fn lookup_then_versioned<R>(&self, hp: usize, size: u64, f: impl FnOnce(&Lookup) -> R) -> (Lookup, R, u64) {
        let map = self.map.read();
        let version = self.version.load(Ordering::Acquire);
        let l = lookup_in(&map, hp, size);
        let r = f(&l);
        (l, r, version)
    }

    /// Runs `f` under the write lock; its second argument says whether the
    /// map is unchanged since version `seen` (so a lookup done then still holds).
    pub fn with_write_since<R>(&self, seen: u64, f: impl FnOnce(&mut BTreeMap<usize, Arc<MapEntry>>, bool) -> R) -> R {
        let mut map = self.map.write();
        let unchanged = self.version.load(Ordering::Acquire) == seen;
        let r = f(&mut map, unchanged);
        self.version.fetch_add(1, Ordering::AcqRel);
        r
    }

    /// Runs `f` with the write lock held (entry creation and removal).
    pub fn with_write<R>(&self, f: impl FnOnce(&mut BTreeMap<usize, Arc<MapEntry>>) -> R) -> R {
        let mut map = self.map.write();
        let r = f(&mut map);
        self.version.fetch_add(1, Ordering::AcqRel);
        r
    }

    /// Inserts an entry that must not overlap any other.
    pub fn insert(&self, entry: MapEntry) -> Arc<MapEntry> {
        let e = Arc::new(entry);
        let mut map = self.map.write();
        map.insert(e.host_begin, e.clone());
        self.version.fetch_add(1, Ordering::AcqRel);
        e
    }

    /// Removes `entry` if it is still in the table and its count is zero.
    /// Returns true when this call removed it.
    pub fn remove_if_unused(&self, entry: &Arc<MapEntry>) -> bool {
        let mut map = self.map.write();
        match map.entry(entry.host_begin) {
            std::collections::btree_map::Entry::Occupied(o) if Arc::ptr_eq(o.get(), entry) && entry.total() == 0 => {
                o.remove();
                self.version.fetch_add(1, Ordering::AcqRel);
                true
            }
            _ => false,
        }
    }

    /// Removes `entry` unconditionally (disassociation).
    pub fn remove(&self, entry: &Arc<MapEntry>) -> bool {
        let mut map = self.map.write();
        match map.get(&entry.host_begin) {
            Some(cur) if Arc::ptr_eq(cur, entry) => {
                self.version.fetch_add(1, Ordering::AcqRel);
                map.remove(&entry.host_begin).is_some()
            }
            _ => false,
        }
    }

    /// A snapshot of all entries in address order.
    pub fn snapshot(&self) -> Vec<Arc<MapEntry>> {
        self.map.read().values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.map.read().len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.read().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(ranges: &[(usize, usize, u64)]) -> MappingTable {
        let t = MappingTable::default();
        for &(base, begin, size) in ranges {
            t.insert(MapEntry::new(base, begin, size, 0x9000 + begin as u64, 0x9000 + begin as u64, 0, false));
        }
        t
    }

    #[test]
    fn lookup_rules() {
        let t = table(&[(100, 120, 40)]);
        assert!(matches!(t.lookup(120, 40), Lookup::Contained(_)));
        assert!(matches!(t.lookup(130, 10), Lookup::Contained(_)));
        assert!(matches!(t.lookup(150, 20), Lookup::Extends(_)));
        assert!(matches!(t.lookup(110, 20), Lookup::Extends(_)));
        assert!(matches!(t.lookup(160, 1), Lookup::NotFound));
        assert!(matches!(t.lookup(100, 10), Lookup::NotFound));
        // Zero-length: inside, or between base and begin.
        assert!(matches!(t.lookup(159, 0), Lookup::Contained(_)));
        assert!(matches!(t.lookup(105, 0), Lookup::Contained(_)));
        assert!(matches!(t.lookup(160, 0), Lookup::NotFound));
        assert!(matches!(t.lookup(99, 0), Lookup::NotFound));
    }

    #[test]
    fn counts() {
        let e = MapEntry::new(0, 0, 8, 0, 0, 0, false);
        assert!(e.dec_should_remove(false, false));
        e.inc(false);
        assert!(!e.dec_should_remove(false, false));
        assert_eq!(e.dec(false), Some(1));
        e.inc(true);
        assert!(!e.dec_should_remove(false, false), "hold count keeps it");
        assert_eq!(e.dec(true), Some(0));
        assert_eq!(e.dec(false), Some(0));
        assert_eq!(e.dec(false), None, "never underflows");
        let g = MapEntry::new_permanent(0, 8, 0, 0);
        g.inc(false);
        assert_eq!(g.dec(false), None);
        assert!(!g.release(false, true), "INF entries are never released");
        g.reset(false);
        assert_eq!(g.total(), INF);
        assert!(!g.dec_should_remove(false, true));
    }

    #[test]
    fn concurrent_releases_see_one_last() {
        let e = std::sync::Arc::new(MapEntry::new(0, 0, 8, 0, 0, 0, false));
        for _ in 0..7 {
            e.inc(false);
        }
        let lasts: usize = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8).map(|_| s.spawn(|| e.release(false, false) as usize)).collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(lasts, 1);
        assert_eq!(e.total(), 0);
    }

    #[test]
    fn removal_only_when_unused() {
        let t = table(&[(0, 0, 8)]);
        let e = t.lookup(0, 8).entry().unwrap().clone();
        assert!(!t.remove_if_unused(&e));
        e.dec(false);
        assert!(t.remove_if_unused(&e));
        assert!(t.is_empty());
    }
}
