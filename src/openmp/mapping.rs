//! The per-device mapping table (abi-reference §6.3–§6.5): host ranges mapped
//! to device addresses with dynamic and hold reference counts.
//!
//! Invariants: entries never overlap; an entry is removed only under the write
//! lock and only when its total count is zero; `INF` counts never change.
//! A lookup hit takes only this device's read lock and updates counts with
//! atomics, so concurrent regions on present data do not serialise.

use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

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
    /// Set (after the push, under the lock) once `shadows` holds a pointer,
    /// so that exits of entries without attached pointers (nearly all) skip
    /// the lock. Never cleared: attached pointers are replaced, not removed.
    has_shadows: std::sync::atomic::AtomicBool,
    /// Plugin event that completes when the last queued copy into this
    /// entry has landed (0 = none in flight or a plugin without queues).
    /// A mutex, not an atomic: a waiter holds it until its wait is queued,
    /// so a replaced event is never released under it.
    pub event: Mutex<u64>,
    /// Copy-back tickets. A release that brings the count to zero takes the
    /// next ticket while the lookup's shard lock is held (so in release
    /// order); a synchronous context copies back when `copies_done` reaches
    /// its ticket and then completes it, a queued one (which takes one on
    /// every last release, copy back or not) completes it once its queue
    /// has drained. Copies back of one entry therefore land in release
    /// order, and the entry is removed (its memory freed) only when no
    /// ticket is outstanding: a re-map racing a release never reads freed
    /// memory, and a later copy back is never overwritten by an earlier one.
    copies_taken: AtomicU32,
    copies_done: AtomicU32,
    /// `target update`s copying into or out of this entry's device memory
    /// right now (see [`MapEntry::pin_live`]): the entry is not removed (its
    /// memory not freed) while one is in flight; the last one to finish
    /// removes it if its count went to zero meanwhile.
    pins: AtomicU32,
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
            has_shadows: std::sync::atomic::AtomicBool::new(false),
            event: Mutex::new(0),
            copies_taken: AtomicU32::new(0),
            copies_done: AtomicU32::new(0),
            pins: AtomicU32::new(0),
        }
    }
    /// The same entry with an in-flight copy event.
    pub fn with_event(mut self, event: u64) -> Self {
        *self.event.get_mut() = event;
        self
    }
    /// An entry whose dynamic count is INF (globals, associated pointers).
    pub fn new_permanent(host_begin: usize, size: u64, tgt_begin: u64, name: usize) -> Self {
        let e = Self::new(host_begin, host_begin, size, tgt_begin, tgt_begin, name, false);
        e.dyn_ref.store(INF, Ordering::Relaxed);
        e
    }
    /// Whether a pointer inside this entry was ever attached (see `shadows`).
    #[inline]
    pub fn has_shadows(&self) -> bool {
        self.has_shadows.load(Ordering::Acquire)
    }
    /// Records that `shadows` now holds a pointer (call after pushing it).
    pub fn mark_shadows(&self) {
        self.has_shadows.store(true, Ordering::Release);
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
        self.counter(hold)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| (c != INF && c != 0).then(|| c - 1))
            .ok()
            .map(|old| old - 1)
    }

    /// Takes (`enter`) or drops one dynamic reference when that is all there
    /// is to do: the count is finite and stays at least 1 (taking one on an
    /// entry whose count is 0, or dropping the last, is the general path's
    /// work). Returns whether the count changed.
    #[inline]
    pub fn step_live_count(&self, enter: bool) -> bool {
        let min = if enter { 1 } else { 2 };
        self.dyn_ref
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| (c != INF && c >= min).then(|| if enter { c + 1 } else { c - 1 }))
            .is_ok()
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
    /// Takes the next copy-back ticket (call while the lookup that found
    /// the entry still holds its shard lock, right after the release).
    #[inline]
    pub fn take_copy_ticket(&self) -> u32 {
        self.copies_taken.fetch_add(1, Ordering::AcqRel)
    }
    /// Waits (holding no lock) until every earlier ticket is complete.
    pub fn wait_copy_turn(&self, ticket: u32) {
        let mut spins = 0u32;
        while self.copies_done.load(Ordering::Acquire) != ticket {
            // Another thread is copying this entry back: a few microseconds.
            if spins < 64 {
                core::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
    /// Completes one ticket: the copy back it stood for has landed.
    #[inline]
    pub fn complete_copy_ticket(&self) {
        self.copies_done.fetch_add(1, Ordering::AcqRel);
    }
    /// Completes all tickets taken and drops all pins (a child after
    /// `fork`, see [`MappingTable::forget_copies_in_flight`]).
    pub fn forget_copies_in_flight(&self) {
        self.copies_done.store(self.copies_taken.load(Ordering::Acquire), Ordering::Release);
        self.pins.store(0, Ordering::Release);
    }
    /// Whether the entry holds a reference: one whose count went to zero is
    /// being released (copied back, then removed) and counts as not present
    /// for a `target update`.
    #[inline]
    pub fn is_live(&self) -> bool {
        self.dyn_ref.load(Ordering::Acquire) != 0 || self.hold_ref.load(Ordering::Acquire) != 0
    }
    /// Pins a live entry for a `target update` whose copies outlive the
    /// look-up's lock, and says whether it did (false: the count is zero,
    /// the update finds nothing). Call while the look-up that found the
    /// entry holds its shard lock, so that no removal (which checks the pins
    /// under the write lock) can run in between; give the pin back with
    /// [`MappingTable::unpin`].
    #[inline]
    pub fn pin_live(&self) -> bool {
        if !self.is_live() {
            return false;
        }
        self.pins.fetch_add(1, Ordering::AcqRel);
        true
    }
    /// Drops a pin without the table's lock, for error paths that cannot
    /// reach the table: the entry is then not removed by this call (a
    /// removal refused meanwhile because of the pin is not retried).
    pub fn unpin_unlocked(&self) {
        self.pins.fetch_sub(1, Ordering::AcqRel);
    }
    /// Whether an update is copying into or out of the entry.
    #[inline]
    pub fn pinned(&self) -> bool {
        self.pins.load(Ordering::Acquire) != 0
    }
    /// Whether a copy back of this entry is still outstanding.
    #[inline]
    pub fn copies_pending(&self) -> bool {
        self.copies_done.load(Ordering::Acquire) != self.copies_taken.load(Ordering::Acquire)
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

/// Granule of the host address space a shard is chosen by (1 MiB).
const GRANULE_BITS: u32 = 20;
/// Number of shards of one device's table.
const SHARDS: usize = 16;

/// One shard: the entries whose host footprint touches the shard's granules.
#[derive(Debug, Default)]
#[repr(align(128))] // Own cache lines: threads on different shards never share a lock word.
struct Shard {
    map: RwLock<BTreeMap<usize, Arc<MapEntry>>>,
    /// Bumped under the write lock by every change of the map, so a writer
    /// can tell that nothing changed since its read-locked lookup.
    version: AtomicU64,
    /// Value slots (inside `map`'s nodes) of entries found lately, one per
    /// [`hint_slot`] of the looked-up address, so that hitting one of a few
    /// entries again (a region mapping several arrays of one shard) skips
    /// the tree search. Cleared by [`Shard::write`] before any change of the
    /// map, stored only while a lock is held: a hint never points to a slot
    /// the map moved or freed. They share the cache lines of the lock word
    /// every lookup writes anyway.
    hints: [AtomicPtr<Arc<MapEntry>>; HINTS],
    /// Bit `i` is set when `hints[i]` may be non-NULL (set under a lock,
    /// cleared under the write lock), so a write clears only those.
    hints_set: AtomicU32,
    /// The allocation of the entry removed last (`Arc::into_raw`, or NULL),
    /// reused by the next insertion once no one else holds it: a region that
    /// maps and unmaps a fresh list item then allocates no entry. Touched
    /// only under the write lock.
    spare: AtomicPtr<MapEntry>,
    /// A stretch of this shard's granule that holds no entry, found by the
    /// last missing [`MappingTable::contains`] query ([`pack_gap`]; 0 =
    /// none), so that asking again about unmapped memory there skips the
    /// tree search. Cleared by [`Shard::write`], stored under a lock, read
    /// without one (see [`MappingTable::contains`]).
    gap: AtomicU64,
    /// The ranges removed last, so that an insertion whose lookup missed can
    /// tell whether a mapping of its range came and went meanwhile (and may
    /// have copied newer data back to the host) rather than refilling on any
    /// change of the shard. Touched only under the write lock.
    removed: RemovedRanges,
}

/// Entries a shard remembers having removed.
const REMOVED: usize = 8;

/// Pages (4 KiB) of evicted removals fold into this many buckets.
const EVICTED_BUCKETS: usize = 64;
/// An evicted removal spanning more pages than this may overlap anything.
const EVICTED_SPAN: usize = 16;

/// A ring of the last [`REMOVED`] removals of a shard: each entry's host
/// range and the shard version its removal made. A removal leaving the ring
/// is folded into per-page buckets (the newest version that left touching
/// such a page), so that removals elsewhere in the shard (another thread's
/// stack variables) do not make an insertion refill. Relaxed atomics: every
/// access holds the write lock.
#[derive(Debug)]
struct RemovedRanges {
    begin: [AtomicUsize; REMOVED],
    end: [AtomicUsize; REMOVED],
    at: [AtomicU64; REMOVED],
    next: AtomicUsize,
    /// Per bucket of pages ([`page_bucket`]): the newest version whose
    /// removal, touching such a page, left the ring.
    evicted: [AtomicU64; EVICTED_BUCKETS],
    /// The newest version whose removal left the ring and spanned more than
    /// [`EVICTED_SPAN`] pages.
    evicted_wide: AtomicU64,
}

impl Default for RemovedRanges {
    fn default() -> Self {
        RemovedRanges {
            begin: Default::default(),
            end: Default::default(),
            at: Default::default(),
            next: AtomicUsize::new(0),
            evicted: core::array::from_fn(|_| AtomicU64::new(0)),
            evicted_wide: AtomicU64::new(0),
        }
    }
}

/// The pages `first..=last` of `[begin, end)` (`end > begin`), or `None`
/// when the range spans more than [`EVICTED_SPAN`] pages.
#[inline]
fn pages(begin: usize, end: usize) -> Option<(usize, usize)> {
    let (first, last) = (begin >> 12, (end - 1) >> 12);
    (last - first < EVICTED_SPAN).then_some((first, last))
}

/// The bucket of page `p`: neighbouring pages get different buckets; the
/// shard's granules fold in.
#[inline]
fn page_bucket(p: usize) -> usize {
    (p ^ (p >> 8)) % EVICTED_BUCKETS
}

impl RemovedRanges {
    /// Records that the removal which made version `at` took `[begin, end)`.
    fn record(&self, begin: usize, end: usize, at: u64) {
        let i = self.next.load(Ordering::Relaxed) % REMOVED;
        self.next.store(i + 1, Ordering::Relaxed);
        // The record leaving the ring goes into the buckets of its pages
        // (a zero-length range overlaps nothing).
        let (old_begin, old_end) = (self.begin[i].load(Ordering::Relaxed), self.end[i].load(Ordering::Relaxed));
        if old_end > old_begin {
            // FIFO over growing versions: the record leaving is the newest
            // that left.
            let old_at = self.at[i].load(Ordering::Relaxed);
            let (first, last) = (old_begin >> 12, (old_end - 1) >> 12);
            if first == last {
                self.evicted[page_bucket(first)].store(old_at, Ordering::Relaxed);
            } else {
                self.evict_pages(first, last, old_at);
            }
        }
        self.begin[i].store(begin, Ordering::Relaxed);
        self.end[i].store(end, Ordering::Relaxed);
        self.at[i].store(at, Ordering::Relaxed);
    }

    /// [`RemovedRanges::record`] for a removal that left the ring and took
    /// the pages `first..=last` (more than one).
    #[cold]
    fn evict_pages(&self, first: usize, last: usize, at: u64) {
        if last - first < EVICTED_SPAN {
            (first..last + 1).for_each(|p| self.evicted[page_bucket(p)].store(at, Ordering::Relaxed));
        } else {
            self.evicted_wide.store(at, Ordering::Relaxed);
        }
    }

    /// Whether a removal after version `since` may have taken part of
    /// `[begin, end)` (`end > begin`; true too when such a removal of the
    /// same pages, or a wide one, left the ring).
    fn since_overlaps(&self, since: u64, begin: usize, end: usize) -> bool {
        let evicted = self.evicted_wide.load(Ordering::Relaxed) > since
            || match pages(begin, end) {
                Some((first, last)) => (first..last + 1).any(|p| self.evicted[page_bucket(p)].load(Ordering::Relaxed) > since),
                None => self.evicted.iter().any(|v| v.load(Ordering::Relaxed) > since),
            };
        evicted
            || (0..REMOVED).any(|i| {
                self.at[i].load(Ordering::Relaxed) > since
                    && self.begin[i].load(Ordering::Relaxed) < end
                    && begin < self.end[i].load(Ordering::Relaxed)
            })
    }
}

impl Drop for Shard {
    fn drop(&mut self) {
        let p = *self.spare.get_mut();
        if !p.is_null() {
            // SAFETY: a non-NULL spare is an `Arc::into_raw` pointer owned by the shard.
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

impl Shard {
    /// An entry holding `make()`, in the spare allocation when nobody holds
    /// that one any more (call under the write lock).
    #[inline]
    fn new_entry(&self, make: impl FnOnce() -> MapEntry) -> Arc<MapEntry> {
        let p = self.spare.swap(core::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // The swap handed the shard's ownership of the spare to us.
            // SAFETY: a non-NULL spare is an `Arc::into_raw` pointer owned by the shard.
            let mut spare = unsafe { Arc::from_raw(p) };
            // Unique: every lookup that could still see the old entry has
            // dropped its reference, so reusing it is invisible.
            if let Some(e) = Arc::get_mut(&mut spare) {
                *e = make();
                return spare;
            }
        }
        Arc::new(make())
    }

    /// Keeps a removed entry's allocation for [`Shard::new_entry`] (call
    /// under the write lock).
    #[inline]
    fn keep_spare(&self, e: Arc<MapEntry>) {
        let old = self.spare.swap(Arc::into_raw(e) as *mut MapEntry, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: as in `new_entry`: the swap handed us the old spare.
            drop(unsafe { Arc::from_raw(old) });
        }
    }

    /// The write lock; the map may change, so the hints go.
    #[inline]
    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<usize, Arc<MapEntry>>> {
        let map = self.map.write();
        // No reader holds the lock now, so no hint is being stored.
        if self.gap.load(Ordering::Relaxed) != 0 {
            self.gap.store(0, Ordering::Relaxed);
        }
        let mut set = self.hints_set.load(Ordering::Relaxed);
        if set != 0 {
            self.hints_set.store(0, Ordering::Relaxed);
            while set != 0 {
                self.hints[set.trailing_zeros() as usize % HINTS].store(core::ptr::null_mut(), Ordering::Relaxed);
                set &= set - 1;
            }
        }
        map
    }

    /// The hinted entry for `hp` if it contains `[hp, hp+size)` (`size > 0`):
    /// then it is exactly what [`lookup_ref`] finds, since entries never
    /// overlap. `map` is the locked map, borrowed from its guard.
    #[inline]
    fn hinted<'a>(&self, map: &'a BTreeMap<usize, Arc<MapEntry>>, hp: usize, size: u64) -> Option<&'a Arc<MapEntry>> {
        let h = self.hints[hint_slot(hp)].load(Ordering::Relaxed);
        if h.is_null() || size == 0 {
            return None;
        }
        let _ = map;
        // A non-NULL hint points to a value slot of this shard's map that was
        // stored while a lock was held and after the last change of the map
        // (every write lock clears the hints first); the caller holds a lock
        // (`map` borrows its guard), so the map cannot change while `e` lives.
        // SAFETY: a live slot of the locked, unchanging map (see above).
        let e = unsafe { &*h };
        let end = hp.saturating_add(size as usize);
        (e.host_begin <= hp && end <= e.host_end).then_some(e)
    }

    /// Stores the gap around the missing range `[hp, end)` (inside one
    /// granule; `map` is the locked map): the stretch between the entries
    /// around it, clipped to the granule, which no entry's [begin, end) meets.
    #[inline(never)]
    fn remember_gap(&self, map: &BTreeMap<usize, Arc<MapEntry>>, hp: usize, end: usize) {
        let g = hp >> GRANULE_BITS;
        let (glo, ghi) = (g << GRANULE_BITS, (g + 1) << GRANULE_BITS);
        let lo = map.range(..=hp).next_back().map_or(glo, |(_, e)| e.host_end.max(glo));
        let hi = map.range(hp.saturating_add(1)..).next().map_or(ghi, |(_, e)| e.host_begin.min(ghi));
        if lo <= hp
            && end <= hi
            && let Some(gap) = pack_gap(g, lo, hi)
        {
            self.gap.store(gap, Ordering::Relaxed);
        }
    }

    /// Remembers a slot of the locked map as the hint for `hp` (a lock must
    /// be held and the map must not change before it is released).
    #[inline]
    fn set_hint(&self, slot: &Arc<MapEntry>, hp: usize) {
        let i = hint_slot(hp);
        let p = slot as *const Arc<MapEntry> as *mut Arc<MapEntry>;
        // Written only when it changes: a hit on the hinted entry stores nothing.
        if self.hints[i].load(Ordering::Relaxed) != p {
            self.hints[i].store(p, Ordering::Relaxed);
            if self.hints_set.load(Ordering::Relaxed) & (1 << i) == 0 {
                self.hints_set.fetch_or(1 << i, Ordering::Relaxed);
            }
        }
    }
}

/// Hint slots per shard.
const HINTS: usize = 16;

/// Packs `[lo, hi)` (a stretch inside granule `g` holding no entry) into one
/// word, so that readers storing gaps concurrently never tear one: valid bit,
/// 27 bits of granule number (user-space addresses), the bounds as 17-bit
/// offsets in 16-byte units, `lo` rounded up and `hi` down (the packed
/// stretch lies inside the real one). `None` for granules beyond 2^27.
#[inline]
fn pack_gap(g: usize, lo: usize, hi: usize) -> Option<u64> {
    if g >= 1 << 27 {
        return None;
    }
    let base = g << GRANULE_BITS;
    let lo_u = (lo - base).div_ceil(16) as u64;
    let hi_u = ((hi - base) / 16) as u64;
    Some(1 << 63 | (g as u64) << 34 | lo_u << 17 | hi_u)
}

/// Whether `[hp, end)` (inside granule `hp >> GRANULE_BITS`) lies inside the
/// packed gap `gap`.
#[inline]
fn in_gap(gap: u64, hp: usize, end: usize) -> bool {
    let g = hp >> GRANULE_BITS;
    // The valid bit and the granule in one compare (0, no gap, never matches).
    if gap >> 34 != (1 << 29 | g) as u64 {
        return false;
    }
    let base = g << GRANULE_BITS;
    let (lo, hi) = ((((gap >> 17) & 0x1_ffff) << 4) as usize, ((gap & 0x1_ffff) << 4) as usize);
    lo <= hp - base && end - base <= hi
}

/// The hint slot of a looked-up address: by its 4 KiB page, so lookups
/// anywhere in one page of an entry share a slot, and entries on any of 16
/// consecutive pages (arrays laid out one after the other) get their own.
#[inline]
fn hint_slot(hp: usize) -> usize {
    (hp >> 12) % HINTS
}

/// One device's mapping table, sharded by host address so that threads
/// mapping unrelated memory (their own stacks, their own buffers) take
/// different locks.
///
/// An entry is stored in every shard whose granules its footprint
/// `[min(base, begin), end)` touches (all shards when it spans as many
/// granules as there are shards). A lookup of `[hp, hp+size)` therefore
/// finds every entry that overlaps the range, or holds `hp` between its
/// base and begin, in the shards of the range's own granules.
#[derive(Debug, Default)]
pub struct MappingTable {
    shards: [Shard; SHARDS],
}

/// The shards (as a bit mask) touched by the host range `[lo, hi)`.
fn shard_mask(lo: usize, hi: usize) -> u32 {
    let first = lo >> GRANULE_BITS;
    let last = hi.max(lo + 1).saturating_sub(1) >> GRANULE_BITS;
    if last - first >= SHARDS - 1 {
        return (1u32 << SHARDS) - 1;
    }
    (first..=last).fold(0, |m, g| m | 1 << (g % SHARDS))
}

fn entry_mask(e: &MapEntry) -> u32 {
    shard_mask(e.host_base.min(e.host_begin), e.host_end)
}

fn query_mask(hp: usize, size: u64) -> u32 {
    shard_mask(hp, hp.saturating_add(size as usize))
}

/// The one shard of `[lo, hi)` when the range lies in one granule (nearly
/// always), without building a mask.
#[inline]
fn single_shard(lo: usize, hi: usize) -> Option<usize> {
    let first = lo >> GRANULE_BITS;
    let last = hi.max(lo + 1).saturating_sub(1) >> GRANULE_BITS;
    (first == last).then_some(first % SHARDS)
}

fn shard_indices(mask: u32) -> impl Iterator<Item = usize> {
    (0..SHARDS).filter(move |i| mask & (1 << i) != 0)
}

/// A shard's read guard.
pub type ShardGuard<'a> = RwLockReadGuard<'a, BTreeMap<usize, Arc<MapEntry>>>;

/// [`MappingTable::visit_in_shard`] for several ranges in a row, holding
/// the read lock of the shard last visited until a visit in another shard
/// or [`ShardReader::release`] (or the reader's end). Holds at most one
/// lock, so it cannot deadlock with other readers or writers; its owner
/// must release it before anything that may take a write lock.
pub struct ShardReader<'a> {
    table: &'a MappingTable,
    /// The shard index and its read guard.
    held: Option<(usize, ShardGuard<'a>)>,
}

impl ShardReader<'_> {
    /// Runs `f` on the entry holding `[hp, hp+size)` as
    /// [`MappingTable::visit_in_shard`] does.
    #[inline(always)]
    pub fn visit<R>(&mut self, hp: usize, size: u64, f: impl FnOnce(&Arc<MapEntry>) -> Option<R>) -> Option<R> {
        let i = single_shard(hp, hp.saturating_add(size as usize)).filter(|_| size > 0)?;
        let shard = &self.table.shards[i];
        let map = match &self.held {
            Some((j, map)) if *j == i => map,
            _ => {
                // The old lock goes before the new one is taken.
                self.held = None;
                &self.held.insert((i, shard.map.read())).1
            }
        };
        let e = match shard.hinted(map, hp, size) {
            Some(e) => e,
            None => match lookup_ref(map, hp, size) {
                Found::Contained(e) => {
                    shard.set_hint(e, hp);
                    e
                }
                _ => return None,
            },
        };
        f(e)
    }

    /// Gives up the lock held, if any.
    #[inline]
    pub fn release(&mut self) {
        self.held = None;
    }
}

/// A lookup result borrowed from a locked shard (no reference-count traffic).
#[derive(Debug, Clone, Copy)]
pub enum Found<'a> {
    /// The range lies inside this entry.
    Contained(&'a Arc<MapEntry>),
    /// The range overlaps this entry but is not contained in it.
    Extends(&'a Arc<MapEntry>),
    NotFound,
}

impl<'a> Found<'a> {
    /// The entry found, contained or overlapping.
    pub fn entry_ref(self) -> Option<&'a Arc<MapEntry>> {
        match self {
            Found::Contained(e) | Found::Extends(e) => Some(e),
            Found::NotFound => None,
        }
    }

    /// The owned form.
    pub fn to_lookup(self) -> Lookup {
        match self {
            Found::Contained(e) => Lookup::Contained(e.clone()),
            Found::Extends(e) => Lookup::Extends(e.clone()),
            Found::NotFound => Lookup::NotFound,
        }
    }
}

impl Lookup {
    /// The borrowed form.
    pub fn as_found(&self) -> Found<'_> {
        match self {
            Lookup::Contained(e) => Found::Contained(e),
            Lookup::Extends(e) => Found::Extends(e),
            Lookup::NotFound => Found::NotFound,
        }
    }
}

/// The lookup rule of `lookupMapping` on an already-locked map.
pub fn lookup_in(map: &BTreeMap<usize, Arc<MapEntry>>, hp: usize, size: u64) -> Lookup {
    lookup_ref(map, hp, size).to_lookup()
}

/// [`lookup_in`] without taking references.
#[inline]
pub fn lookup_ref(map: &BTreeMap<usize, Arc<MapEntry>>, hp: usize, size: u64) -> Found<'_> {
    if size != 0 {
        let end = hp.saturating_add(size as usize);
        // Fast path, one tree descent: the last entry starting before the end of
        // the range decides hits and misses; only overlaps that are not
        // containment (error paths) need the reference's prev/next analysis.
        match map.range(..end).next_back().map(|(_, e)| e) {
            None => return Found::NotFound,
            Some(e) if e.host_end <= hp => return Found::NotFound,
            Some(e) if e.host_begin <= hp && end <= e.host_end => return Found::Contained(e),
            Some(_) => {}
        }
    }
    lookup_ref_slow(map, hp, size)
}

/// The rest of [`lookup_ref`]: zero-length sections and partial overlaps.
#[inline(never)]
fn lookup_ref_slow(map: &BTreeMap<usize, Arc<MapEntry>>, hp: usize, size: u64) -> Found<'_> {
    let prev = || map.range(..=hp).next_back().map(|(_, e)| e);
    let next = || map.range(hp.saturating_add(1)..).next().map(|(_, e)| e);
    if size == 0 {
        let prev = prev();
        if let Some(p) = prev
            && hp < p.host_end
        {
            return Found::Contained(p);
        }
        // A zero-length section between an entry's base and its begin counts.
        if let Some(n) = next()
            && hp >= n.host_base
        {
            return Found::Contained(n);
        }
        return Found::NotFound;
    }
    let end = hp.saturating_add(size as usize);
    if let Some(p) = prev()
        && hp < p.host_end
    {
        return if end <= p.host_end { Found::Contained(p) } else { Found::Extends(p) };
    }
    if let Some(n) = next()
        && end > n.host_begin
    {
        return Found::Extends(n);
    }
    Found::NotFound
}

/// Combines the lookups of several shards (a range over several granules):
/// a containing entry wins, then the overlap found in the shard of `hp`.
fn lookup_shards<'a>(maps: impl Iterator<Item = &'a BTreeMap<usize, Arc<MapEntry>>>, hp: usize, size: u64) -> Lookup {
    let mut result = Lookup::NotFound;
    for map in maps {
        match lookup_in(map, hp, size) {
            l @ Lookup::Contained(_) => return l,
            l @ Lookup::Extends(_) if matches!(result, Lookup::NotFound) => result = l,
            _ => {}
        }
    }
    result
}

/// A version stamp from a read-locked lookup: the shard and its version,
/// when the range lay in one shard; for a range over several shards,
/// `SHARDS + mask` and the sum of their versions (versions only grow, so an
/// equal sum means no shard changed).
#[derive(Debug, Clone, Copy)]
pub struct Seen(Option<(usize, u64)>);

/// Sum of the versions of the shards in `mask` (read while their locks are held).
fn version_sum(shards: &[Shard], mask: u32) -> u64 {
    shard_indices(mask).fold(0u64, |a, i| a.wrapping_add(shards[i].version.load(Ordering::Acquire)))
}

/// Outcome of [`MappingTable::insert_unless_mapped`].
#[derive(Debug)]
pub enum Insert {
    Inserted(Arc<MapEntry>),
    /// The range was mapped meanwhile (or overlaps): the lookup result.
    Found(Lookup),
    /// The refill of a possibly stale device copy failed: nothing inserted.
    Refused,
}

impl MappingTable {
    /// Fork safety (see [`super::fork`]): every shard's lock, then the locks
    /// of every entry in it (an entry in several shards is taken once).
    pub fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        let mut seen = std::collections::HashSet::new();
        for shard in &self.shards {
            if !held.write(&shard.map) {
                return false;
            }
            // SAFETY: the write lock of this map was just taken (and its guard forgotten) by this thread.
            let map = unsafe { &*shard.map.data_ptr() };
            for e in map.values() {
                if seen.insert(Arc::as_ptr(e)) && !(held.mutex_in(e, |e| &e.shadows) && held.mutex_in(e, |e| &e.event)) {
                    return false;
                }
            }
        }
        true
    }

    /// In a child after `fork`: completes every copy-back ticket, since the
    /// parent threads that held them do not exist here (their copies either
    /// landed before the fork or never will), so no release waits for them.
    pub fn forget_copies_in_flight(&self) {
        for shard in &self.shards {
            for e in shard.map.read().values() {
                e.forget_copies_in_flight();
            }
        }
    }

    /// Finds the entry for `[hp, hp+size)` (read locks only).
    pub fn lookup(&self, hp: usize, size: u64) -> Lookup {
        self.lookup_then(hp, size, |_| ()).0
    }

    /// Finds the entry and runs `f` on the result while the read locks are
    /// held, so count changes made by `f` cannot race with a removal (which
    /// needs the write locks and re-checks the count).
    pub fn lookup_then<R>(&self, hp: usize, size: u64, f: impl FnOnce(&Lookup) -> R) -> (Lookup, R) {
        let (l, r, _) = self.lookup_then_versioned(hp, size, f);
        (l, r)
    }

    /// Finds the entry and runs `f` on the borrowed result while the read
    /// locks are held (see [`MappingTable::lookup_then`]); also returns a
    /// version stamp for [`MappingTable::insert_unless_mapped`].
    #[inline]
    pub fn lookup_with<R>(&self, hp: usize, size: u64, f: impl FnOnce(Found<'_>) -> R) -> (R, Seen) {
        if let Some(i) = single_shard(hp, hp.saturating_add(size as usize)) {
            let shard = &self.shards[i];
            let map = shard.map.read();
            let version = shard.version.load(Ordering::Acquire);
            let found = match shard.hinted(&map, hp, size) {
                Some(e) => Found::Contained(e),
                None => {
                    let found = lookup_ref(&map, hp, size);
                    if let Found::Contained(e) = found {
                        shard.set_hint(e, hp);
                    }
                    found
                }
            };
            let r = f(found);
            return (r, Seen(Some((i, version))));
        }
        let (_, r, seen) = self.lookup_then_versioned(hp, size, |l| f(l.as_found()));
        (r, seen)
    }

    /// Whether `[hp, hp+size)` lies inside one entry (`omp_target_is_present`,
    /// which takes no reference): [`MappingTable::lookup_with`]'s answer,
    /// with misses remembered too (the shard's gap), so that asking about
    /// the same unmapped memory again costs what a hit does.
    #[inline(always)] // Hot in omp_target_is_present; a second caller made it out of line (+24 there).
    pub fn contains(&self, hp: usize, size: u64) -> bool {
        let end = hp.saturating_add(size as usize);
        let Some(i) = single_shard(hp, end).filter(|_| size > 0) else {
            return self.lookup_with(hp, size, |l| matches!(l, Found::Contained(_))).0;
        };
        let shard = &self.shards[i];
        // Without the lock: the gap only says what the map held when it was
        // stored, and every writer clears it (holding the write lock) before
        // it changes the map, so a gap this thread can still read was true
        // at some point during this call (after any change that happened
        // before the call: coherence orders the clear before this load).
        if in_gap(shard.gap.load(Ordering::Relaxed), hp, end) {
            return false;
        }
        let map = shard.map.read();
        if shard.hinted(&map, hp, size).is_some() {
            return true;
        }
        match lookup_ref(&map, hp, size) {
            Found::Contained(e) => {
                shard.set_hint(e, hp);
                true
            }
            Found::Extends(_) => false,
            Found::NotFound => {
                shard.remember_gap(&map, hp, end);
                false
            }
        }
    }

    /// Runs `f` on the entry holding `[hp, hp+size)` (non-empty, inside one
    /// shard's granule) while the shard's read lock is held; `None` when no
    /// entry holds the whole range, also for a range over several shards
    /// (the fast paths then take their general path). No reference is taken
    /// unless `f` takes one.
    #[inline(always)] // The fast paths' only look-up: out of line it costs a frame (+20).
    pub fn visit_in_shard<R>(&self, hp: usize, size: u64, f: impl FnOnce(&Arc<MapEntry>) -> Option<R>) -> Option<R> {
        let i = single_shard(hp, hp.saturating_add(size as usize)).filter(|_| size > 0)?;
        let shard = &self.shards[i];
        let map = shard.map.read();
        let e = match shard.hinted(&map, hp, size) {
            Some(e) => e,
            None => match lookup_ref(&map, hp, size) {
                Found::Contained(e) => {
                    shard.set_hint(e, hp);
                    e
                }
                _ => return None,
            },
        };
        f(e)
    }

    /// For a `target update`: the device address of `hp` when one live
    /// entry ([`MapEntry::is_live`]) without attached pointers holds
    /// `[hp, hp+size)` (non-empty, inside one shard's granule), with the
    /// shard's read guard: until it is dropped, no removal (which needs the
    /// write lock) can take the entry out of the table and free its device
    /// memory. `None` otherwise (no reference is taken either way).
    #[inline(always)]
    pub fn live_plain_target(&self, hp: usize, size: u64) -> Option<(ShardGuard<'_>, u64)> {
        let i = single_shard(hp, hp.saturating_add(size as usize)).filter(|_| size > 0)?;
        let shard = &self.shards[i];
        let map = shard.map.read();
        let e = match shard.hinted(&map, hp, size) {
            Some(e) => e,
            None => match lookup_ref(&map, hp, size) {
                Found::Contained(e) => {
                    shard.set_hint(e, hp);
                    e
                }
                _ => return None,
            },
        };
        let tgt = (e.is_live() && !e.has_shadows()).then(|| e.tgt_of(hp))?;
        Some((map, tgt))
    }

    /// A reader for a run of [`ShardReader::visit`]s that keeps the last
    /// shard's read lock between them (a construct's items usually share a
    /// shard), one shard at a time.
    pub fn reader(&self) -> ShardReader<'_> {
        ShardReader { table: self, held: None }
    }

    /// [`MappingTable::lookup_then`], also returning a version stamp for
    /// [`MappingTable::insert_unless_mapped`].
    pub fn lookup_then_versioned<R>(&self, hp: usize, size: u64, f: impl FnOnce(&Lookup) -> R) -> (Lookup, R, Seen) {
        let mask = query_mask(hp, size);
        if mask.count_ones() == 1 {
            let i = mask.trailing_zeros() as usize;
            let shard = &self.shards[i];
            let map = shard.map.read();
            let version = shard.version.load(Ordering::Acquire);
            let l = lookup_in(&map, hp, size);
            let r = f(&l);
            return (l, r, Seen(Some((i, version))));
        }
        let guards: smallvec::SmallVec<[_; 4]> = shard_indices(mask).map(|i| self.shards[i].map.read()).collect();
        let l = lookup_shards(guards.iter().map(|g| &**g), hp, size);
        let r = f(&l);
        (l, r, Seen(Some((SHARDS + mask as usize, version_sum(&self.shards, mask)))))
    }

    /// Inserts the entry `make()` builds for `[begin, begin+size)` unless the
    /// range got mapped since the lookup stamped `seen`; then `on_found` runs
    /// on that lookup while the locks are held (to take a reference).
    ///
    /// The caller filled the new device copy before the call. When the
    /// shard changed since `seen`, another mapping of the range may have
    /// come and gone meanwhile, copying newer data back to the host: then
    /// `refill` runs under the write lock (nothing can map the range while
    /// it runs) to copy the host data again, and the entry is inserted only
    /// if it returns true ([`Insert::Refused`] otherwise).
    #[allow(clippy::too_many_arguments)] // The range, then the three steps it may take.
    pub fn insert_unless_mapped(
        &self,
        seen: Seen,
        base: usize,
        begin: usize,
        size: u64,
        make: impl FnOnce() -> MapEntry,
        on_found: impl FnOnce(&Lookup),
        refill: impl FnOnce() -> bool,
    ) -> Insert {
        let end = begin.saturating_add(size as usize);
        if let Some(i) = single_shard(base.min(begin), end) {
            // The footprint lies in one shard, which holds every entry the
            // range could overlap: one lock, no guard list.
            let shard = &self.shards[i];
            let mut map = shard.write();
            let since = match seen.0 {
                Some((si, v)) if si == i => Some(v),
                _ => None,
            };
            if since != Some(shard.version.load(Ordering::Acquire)) {
                let found = lookup_ref(&map, begin, size);
                if !matches!(found, Found::NotFound) {
                    let found = found.to_lookup();
                    on_found(&found);
                    return Insert::Found(found);
                }
                // Only a mapping of the range that was removed since the
                // lookup can have copied newer data back to the host.
                let stale = since.is_none_or(|v| shard.removed.since_overlaps(v, begin, end.max(begin.saturating_add(1))));
                if stale && !refill() {
                    return Insert::Refused;
                }
            }
            let e = shard.new_entry(make);
            let slot = match map.entry(e.host_begin) {
                std::collections::btree_map::Entry::Vacant(v) => v.insert(e.clone()),
                std::collections::btree_map::Entry::Occupied(mut o) => {
                    o.insert(e.clone());
                    o.into_mut()
                }
            };
            // The new entry is what the construct's next lookup (its end) finds.
            shard.set_hint(slot, begin);
            shard.version.fetch_add(1, Ordering::AcqRel);
            return Insert::Inserted(e);
        }
        let mask = shard_mask(base.min(begin), end);
        let mut guards: smallvec::SmallVec<[_; 4]> = shard_indices(mask).map(|i| (i, self.shards[i].write())).collect();
        let unchanged = match seen.0 {
            Some((i, v)) if i < SHARDS => mask == 1 << i && self.shards[i].version.load(Ordering::Acquire) == v,
            // A multi-shard lookup of the same footprint, no shard changed since.
            Some((tag, sum)) => tag - SHARDS == mask as usize && version_sum(&self.shards, mask) == sum,
            None => false,
        };
        if !unchanged {
            let qmask = query_mask(begin, size);
            let found = lookup_shards(guards.iter().filter(|(i, _)| qmask & (1 << i) != 0).map(|(_, g)| &**g), begin, size);
            if !matches!(found, Lookup::NotFound) {
                on_found(&found);
                return Insert::Found(found);
            }
            if !refill() {
                return Insert::Refused;
            }
        }
        let e = Arc::new(make());
        for (i, map) in guards.iter_mut() {
            map.insert(e.host_begin, e.clone());
            self.shards[*i].version.fetch_add(1, Ordering::AcqRel);
        }
        Insert::Inserted(e)
    }

    /// Inserts an entry that must not overlap any other.
    pub fn insert(&self, entry: MapEntry) -> Arc<MapEntry> {
        let e = Arc::new(entry);
        for i in shard_indices(entry_mask(&e)) {
            self.shards[i].write().insert(e.host_begin, e.clone());
            self.shards[i].version.fetch_add(1, Ordering::AcqRel);
        }
        e
    }

    /// Removes `entry` from every shard (locks taken in shard order) when
    /// `keep` allows it and it is still in the table.
    fn remove_when(&self, entry: &Arc<MapEntry>, ok: impl FnOnce() -> bool) -> bool {
        if let Some(i) = single_shard(entry.host_base.min(entry.host_begin), entry.host_end) {
            let shard = &self.shards[i];
            let mut map = shard.write();
            // One descent finds and removes the entry.
            return match map.entry(entry.host_begin) {
                std::collections::btree_map::Entry::Occupied(o) if Arc::ptr_eq(o.get(), entry) && ok() => {
                    shard.keep_spare(o.remove());
                    let at = shard.version.fetch_add(1, Ordering::AcqRel) + 1;
                    shard.removed.record(entry.host_begin, entry.host_end, at);
                    true
                }
                _ => false,
            };
        }
        let mut guards: smallvec::SmallVec<[_; 4]> = shard_indices(entry_mask(entry)).map(|i| (i, self.shards[i].write())).collect();
        let present = guards.first().is_some_and(|(_, m)| m.get(&entry.host_begin).is_some_and(|cur| Arc::ptr_eq(cur, entry)));
        if !present || !ok() {
            return false;
        }
        for (i, map) in guards.iter_mut() {
            map.remove(&entry.host_begin);
            let shard = &self.shards[*i];
            let at = shard.version.fetch_add(1, Ordering::AcqRel) + 1;
            shard.removed.record(entry.host_begin, entry.host_end, at);
        }
        true
    }

    /// Removes `entry` if it is still in the table, its count is zero, no
    /// copy back of it is outstanding and no update holds a pin (whoever
    /// completes that copy or gives back the last pin tries again). Returns
    /// true when this call removed it.
    pub fn remove_if_unused(&self, entry: &Arc<MapEntry>) -> bool {
        self.remove_when(entry, || entry.total() == 0 && !entry.copies_pending() && !entry.pinned())
    }

    /// Gives back a pin taken with [`MapEntry::pin_live`]. The decrement
    /// happens under the read lock of a shard that holds the entry, so it
    /// is ordered with every removal attempt (each checks the pins under
    /// the write locks of all its shards): either that attempt saw no pin,
    /// or this caller sees the count it left and must try the removal
    /// itself. Returns true when the entry may now be removed (no pin left
    /// and a count of zero).
    pub fn unpin(&self, entry: &MapEntry) -> bool {
        let first = entry_mask(entry).trailing_zeros() as usize;
        let _held = self.shards[first % SHARDS].map.read();
        entry.pins.fetch_sub(1, Ordering::AcqRel) == 1 && entry.total() == 0
    }

    /// Removes `entry` unconditionally (disassociation).
    pub fn remove(&self, entry: &Arc<MapEntry>) -> bool {
        self.remove_when(entry, || true)
    }

    /// A snapshot of all entries in address order.
    pub fn snapshot(&self) -> Vec<Arc<MapEntry>> {
        let mut all: BTreeMap<usize, Arc<MapEntry>> = BTreeMap::new();
        for shard in &self.shards {
            for (k, e) in shard.map.read().iter() {
                all.insert(*k, e.clone());
            }
        }
        all.into_values().collect()
    }

    pub fn len(&self) -> usize {
        self.snapshot().len()
    }
    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| s.map.read().is_empty())
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
    fn live_count_steps_never_reach_zero_or_revive() {
        let e = MapEntry::new(0, 0, 8, 0, 0, 0, false);
        // Count 0 (being removed): no reference is taken here.
        e.dec(false);
        assert_eq!(e.dyn_count(), 0);
        assert!(!e.step_live_count(true));
        e.inc(false);
        assert!(e.step_live_count(true));
        assert_eq!(e.dyn_count(), 2);
        assert!(e.step_live_count(false));
        assert_eq!(e.dyn_count(), 1);
        // The last reference is the general path's to drop.
        assert!(!e.step_live_count(false));
        assert_eq!(e.dyn_count(), 1);
        let g = MapEntry::new_permanent(0, 8, 0, 0);
        assert!(!g.step_live_count(true) && !g.step_live_count(false));
        assert_eq!(g.total(), INF);
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
    fn shard_reader_visits_across_shards_and_releases() {
        let t = MappingTable::default();
        // Two entries in one shard (same granule), one in the next granule's shard.
        let g = 1usize << GRANULE_BITS;
        let bases = [8 * g, 8 * g + 4096, 9 * g];
        for b in bases {
            let out = t.insert_unless_mapped(
                Seen(None),
                b,
                b,
                64,
                || MapEntry::new(b, b, 64, b as u64 + 1, b as u64 + 1, 0, false),
                |_| {},
                || true,
            );
            assert!(matches!(out, Insert::Inserted(_)));
        }
        let mut r = t.reader();
        // Hits inside each entry, in and across shards, keep the right entry.
        for (k, b) in bases.iter().enumerate() {
            let got = r.visit(b + 8, 16, |e| Some(e.tgt_of(b + 8)));
            assert_eq!(got, Some(*b as u64 + 9), "entry {k}");
        }
        // A range not held whole, a gap, and an empty range: no entry.
        assert_eq!(r.visit(bases[0] + 60, 8, |_| Some(())), None);
        assert_eq!(r.visit(bases[0] + 1024, 8, |_| Some(())), None);
        assert_eq!(r.visit(bases[0], 0, |_| Some(())), None);
        // A range over two granules is never served.
        assert_eq!(r.visit(9 * g - 8, 16, |_| Some(())), None);
        // Released, a writer proceeds (the lock is really given up).
        r.release();
        let e = t.lookup(bases[2], 64).entry().cloned().expect("mapped");
        e.dec(false);
        assert!(t.remove_if_unused(&e));
        assert_eq!(r.visit(bases[2], 64, |_| Some(())), None);
        // The reader holds the last shard's lock until it ends: a writer
        // on another shard is not blocked by it.
        let e0 = t.lookup(bases[0], 64).entry().cloned().expect("mapped");
        assert_eq!(r.visit(bases[1], 64, |e| Some(e.host_begin)), Some(bases[1]));
        drop(r);
        e0.dec(false);
        assert!(t.remove_if_unused(&e0));
    }

    #[test]
    fn refill_only_after_an_overlapping_removal() {
        let t = MappingTable::default();
        let mapped = |b: usize| match t.insert_unless_mapped(
            Seen(None),
            b,
            b,
            8,
            || MapEntry::new(b, b, 8, b as u64, b as u64, 0, false),
            |_| {},
            || true,
        ) {
            Insert::Inserted(e) => e,
            Insert::Found(_) | Insert::Refused => panic!("range already mapped"),
        };
        // Inserts [b, b+8) after a lookup stamped `seen`; reports whether it refilled.
        let refilled = |seen: Seen, b: usize| {
            let called = std::cell::Cell::new(false);
            let out = t.insert_unless_mapped(
                seen,
                b,
                b,
                8,
                || MapEntry::new(b, b, 8, b as u64, b as u64, 0, false),
                |_| {},
                || {
                    called.set(true);
                    true
                },
            );
            let Insert::Inserted(e) = out else { panic!("range already mapped") };
            e.dec(false);
            assert!(t.remove_if_unused(&e));
            called.get()
        };
        let seen = |b: usize| t.lookup_with(b, 8, |_| ()).1;
        // Another range of the shard came and went: no refill.
        let s = seen(0x1000);
        let other = mapped(0x2000);
        other.dec(false);
        assert!(t.remove_if_unused(&other));
        assert!(!refilled(s, 0x1000));
        // A mapping overlapping the range came and went: refill.
        let s = seen(0x1000);
        let over = mapped(0x1004);
        over.dec(false);
        assert!(t.remove_if_unused(&over));
        assert!(refilled(s, 0x1000));
        // More removals than the shard remembers, on other pages: no refill.
        let churn = |at: usize| {
            for i in 0..=REMOVED {
                let e = mapped(at + 0x10 * i);
                e.dec(false);
                assert!(t.remove_if_unused(&e));
            }
        };
        let s = seen(0x1000);
        churn(0x4000);
        assert!(!refilled(s, 0x1000));
        // More removals than the shard remembers, on the range's page: refill, to be safe.
        let s = seen(0x1000);
        churn(0x1100);
        assert!(refilled(s, 0x1000));
        // A wide removal left the ring: refill.
        let s = seen(0x1000);
        let (b, size) = (0x40000, 0x20000);
        let Insert::Inserted(wide) =
            t.insert_unless_mapped(Seen(None), b, b, size, || MapEntry::new(b, b, size, b as u64, b as u64, 0, false), |_| {}, || true)
        else {
            panic!("range already mapped")
        };
        wide.dec(false);
        assert!(t.remove_if_unused(&wide));
        churn(0x80000);
        assert!(refilled(s, 0x1000));
        // A stamp from another shard, or none: refill.
        assert!(refilled(seen(0x1000 + (1 << GRANULE_BITS)), 0x1000));
        assert!(refilled(Seen(None), 0x1000));
    }

    #[test]
    fn removed_entries_are_reused_only_when_unreferenced() {
        let t = MappingTable::default();
        let insert = |b: usize| match t.insert_unless_mapped(
            Seen(None),
            b,
            b,
            8,
            || MapEntry::new(b, b, 8, b as u64, b as u64, 0, false),
            |_| {},
            || true,
        ) {
            Insert::Inserted(e) => e,
            Insert::Found(_) | Insert::Refused => panic!("range already mapped"),
        };
        let e1 = insert(0x1000);
        e1.dec(false);
        assert!(t.remove_if_unused(&e1));
        // Still referenced: the next entry must not take its allocation.
        let e2 = insert(0x2000);
        assert!(!Arc::ptr_eq(&e1, &e2));
        assert_eq!((e1.host_begin, e1.tgt_begin), (0x1000, 0x1000));
        e2.dec(false);
        assert!(t.remove_if_unused(&e2));
        drop(e2);
        // Unreferenced now: reused, with the new contents only.
        let e3 = insert(0x3000);
        assert_eq!((e3.host_begin, e3.host_end, e3.tgt_begin, e3.dyn_count()), (0x3000, 0x3008, 0x3000, 1));
        assert!(matches!(t.lookup(0x3004, 4), Lookup::Contained(e) if Arc::ptr_eq(&e, &e3)));
        assert!(matches!(t.lookup(0x2000, 8), Lookup::NotFound));
    }

    #[test]
    fn hint_follows_changes() {
        let t = table(&[(0x1000, 0x1000, 16), (0x2000, 0x2000, 16)]);
        let hit = |hp: usize| t.lookup_with(hp, 4, |f| matches!(f, Found::Contained(e) if e.contains(hp))).0;
        assert!(hit(0x1004) && hit(0x1008) && hit(0x2004) && hit(0x1000));
        let e = t.lookup(0x1000, 16).entry().unwrap().clone();
        assert!(t.remove(&e));
        assert!(!hit(0x1004), "a removed entry is not found through the hint");
        assert!(hit(0x2000));
    }

    #[test]
    fn contains_remembers_hits_and_misses() {
        let t = table(&[(0x1000, 0x1000, 16), (0x2000, 0x2000, 16)]);
        for _ in 0..2 {
            assert!(t.contains(0x1004, 1) && t.contains(0x2000, 16));
            assert!(!t.contains(0x1010, 1) && !t.contains(0x1800, 8) && !t.contains(0x0fff, 1) && !t.contains(0x2010, 1));
            assert!(!t.contains(0x100c, 8), "an overlap is not containment");
        }
        // A new entry inside the remembered gap is found.
        t.insert(MapEntry::new(0x1800, 0x1800, 8, 0x1800, 0x1800, 0, false));
        assert!(t.contains(0x1800, 8) && t.contains(0x1804, 1));
        assert!(!t.contains(0x1808, 1) && !t.contains(0x17ff, 1));
        // Removing it makes the range a miss again.
        let e = t.lookup(0x1800, 8).entry().unwrap().clone();
        assert!(t.remove(&e));
        assert!(!t.contains(0x1800, 1) && !t.contains(0x1800, 1));
        // Ranges over two granules, zero sizes: the general look-up.
        assert!(!t.contains(0xfffff, 2) && t.contains(0x1000, 0) && !t.contains(0x1010, 0));
    }

    #[test]
    fn gap_packing_is_conservative() {
        let g = 5usize;
        let base = g << GRANULE_BITS;
        let gap = pack_gap(g, base + 17, base + 100).unwrap();
        assert!(in_gap(gap, base + 32, base + 96));
        assert!(!in_gap(gap, base + 17, base + 18), "lo is rounded up");
        assert!(!in_gap(gap, base + 90, base + 100), "hi is rounded down");
        assert!(!in_gap(gap, base + (1 << GRANULE_BITS) + 32, base + (1 << GRANULE_BITS) + 40), "another granule");
        let whole = pack_gap(g, base, base + (1 << GRANULE_BITS)).unwrap();
        assert!(in_gap(whole, base, base + (1 << GRANULE_BITS)));
        assert!(pack_gap(1 << 27, 1 << (27 + GRANULE_BITS), (1 << (27 + GRANULE_BITS)) + 64).is_none());
    }

    #[test]
    fn pinned_entries_outlive_their_last_release() {
        let t = table(&[(0x1000, 0x1000, 64)]);
        let e = t.lookup(0x1000, 64).entry().unwrap().clone();
        assert!(e.is_live() && e.pin_live());
        // The last release while an update holds a pin: not removed.
        assert!(e.release(false, false));
        assert!(!e.is_live());
        assert!(!t.remove_if_unused(&e), "a pinned entry stays");
        assert!(matches!(t.lookup(0x1000, 64), Lookup::Contained(_)));
        // A released entry is not pinned again (an update finds nothing).
        assert!(!e.pin_live());
        // The last pin's end says that the entry may go now; it goes once.
        assert!(t.unpin(&e));
        assert!(t.remove_if_unused(&e));
        assert!(!t.remove_if_unused(&e));
        assert!(t.is_empty());
    }

    #[test]
    fn unpin_of_a_live_entry_leaves_it() {
        let t = table(&[(0x1000, 0x1000, 64)]);
        let e = t.lookup(0x1000, 64).entry().unwrap().clone();
        assert!(e.pin_live() && e.pin_live());
        assert!(!t.unpin(&e), "another pin is left");
        assert!(!t.unpin(&e), "the count is not zero");
        assert!(!e.pinned());
        e.dec(false);
        assert!(t.remove_if_unused(&e));
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
