//! Reuse of freed device blocks on the host plugin.
//!
//! Small blocks follow LLVM 22.1's memory manager (observable through the
//! addresses `omp_target_alloc` and mappings get back):
//! * blocks of at most `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` bytes (default
//!   8 KiB; set to 0 the manager is off, unset or unparsable the default) are
//!   kept when freed, in size classes by the power of two at or below the size
//!   (4 B … 8 KiB, a larger threshold puts everything above 8 KiB in the
//!   8 KiB class);
//! * an allocation takes a kept block of exactly its size from its class,
//!   the one freed *first* (22.1 keeps each class in a multiset ordered by
//!   size: equal sizes are inserted after each other and found from the
//!   front), else fresh memory;
//! * a block once handed out by the manager stays the manager's: freeing it
//!   keeps it; the kept blocks go back to `free` when memory runs out and at
//!   teardown;
//! * unlike 22.1, which keeps every freed block until memory runs out (10^6
//!   distinct mappings entered and exited leave it 866 MiB larger), a size
//!   class keeps at most [`CLASS_KEEP_COST`] worth of blocks: a block freed
//!   while its class is full goes back to `free` and leaves the manager, so
//!   the first blocks kept are handed out again in 22.1's order and memory
//!   goes back when the mappings go.
//!
//! Large blocks (4 MiB and more) are kept as well, up to [`LARGE_CACHE_BYTES`]
//! in all, and handed back for an allocation of the same size, the last freed
//! first: a `map(to:)` region on unmapped data then copies into memory that is
//! already faulted in instead of fresh pages. 22.1 returns such blocks to
//! `free` (glibc unmaps them), so addresses of blocks above the threshold are
//! not an observable the manager promises. The pool also knows which large
//! blocks in use are still fresh (from the backing, nothing copied in yet), so
//! that the plugin can fault in, in one call, the pages a first copy into one
//! is about to write (see [`Pool::first_fill`]).
//!
//! Locks: one per size class and one per shard of the pointer → size table
//! (shards by address), never one for the whole plugin.

use crate::base::hash::AddrHash;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Maps keyed by addresses or sizes: one multiply per hash, not SipHash.
type HashMap<K, V> = std::collections::HashMap<K, V, AddrHash>;

/// Class sizes: 0 (sizes 1–3), then 4 B … 8 KiB, as in 22.1.
const CLASSES: usize = 13;
/// 22.1's default threshold.
pub(crate) const DEFAULT_THRESHOLD: usize = 1 << 13;
/// Shards of the table of the manager's blocks.
const SHARDS: usize = 64;
/// Most bytes of large blocks kept for reuse.
pub(crate) const LARGE_CACHE_BYTES: usize = 1 << 30;
/// Most large blocks kept.
const LARGE_CACHE_BLOCKS: usize = 16;
/// Most a size class keeps, in [`keep_cost`] units (bytes plus bookkeeping):
/// 2 MiB, so all 13 classes together keep at most 26 MiB of freed blocks.
pub(crate) const CLASS_KEEP_COST: usize = 2 << 20;

/// What keeping a block of `size` bytes costs: its bytes, plus what the
/// block costs beyond them (malloc's chunk header and rounding, the queue
/// slot and the owner-table entry), about 64 bytes.
#[inline(always)]
fn keep_cost(size: usize) -> usize {
    size + 64
}

/// The threshold `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` asks for
/// (`None` = the manager is disabled).
pub fn threshold_from(value: Option<&str>) -> Option<usize> {
    match value.map(|v| crate::base::config::parse_int(v.trim())) {
        None | Some(None) => Some(DEFAULT_THRESHOLD),
        Some(Some(0)) => None,
        // 22.1 reads it as an unsigned 64-bit number.
        Some(Some(n)) => Some(n as u64 as usize),
    }
}

/// Size class of a small block: the power of two at or below `size`,
/// capped at the last class.
fn class_of(size: usize) -> usize {
    if size < 4 { 0 } else { (size.ilog2() as usize - 1).min(CLASSES - 1) }
}

/// Allocates and frees the memory the pool manages.
pub trait Backing {
    fn alloc(&self, bytes: usize) -> Option<u64>;
    fn free(&self, ptr: u64);
}

/// Kept blocks of one size, oldest first: a vector read from `head` on,
/// cleared when emptied (a class that takes and gives back one block
/// touches no wrap-around arithmetic).
#[derive(Default)]
struct Fifo {
    items: Vec<u64>,
    head: usize,
}

impl Fifo {
    #[inline(always)]
    fn pop_front(&mut self) -> Option<u64> {
        let v = *self.items.get(self.head)?;
        self.head += 1;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        }
        Some(v)
    }

    /// Appends `v` unless the vector is full and may not grow past `limit`
    /// items (`false`: nothing appended). The vector's capacity is what
    /// bounds the queue, so the hot path tests only what `push` would test
    /// anyway (length = capacity).
    #[inline(always)]
    fn push_back(&mut self, v: u64, limit: usize) -> bool {
        if self.items.len() == self.items.capacity() && !self.make_room(limit) {
            return false;
        }
        self.items.push(v);
        true
    }

    /// Before the vector would grow: drops the taken prefix instead when it
    /// is at least half of it, else grows it (doubling, at least 4) up to
    /// `limit` items; `false` when it is at `limit` (a queue just under the
    /// limit with a short taken prefix then lets a block go early rather
    /// than move the whole vector for one slot).
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, limit: usize) -> bool {
        let len = self.items.len();
        if self.head > 0 && self.head * 2 >= len {
            self.items.drain(..self.head);
            self.head = 0;
            return true;
        }
        if len >= limit {
            return false;
        }
        self.items.reserve_exact((len * 2).max(4).min(limit) - len);
        true
    }

    /// Gives back capacity above `limit` items (the queue's bound shrank).
    fn bound(&mut self, limit: usize) {
        if self.items.capacity() > limit {
            let keep = self.items.len().max(limit);
            self.items.shrink_to(keep);
        }
    }

    fn is_empty(&self) -> bool {
        self.head == self.items.len()
    }

    fn len(&self) -> usize {
        self.items.len() - self.head
    }

    fn into_vec(mut self) -> Vec<u64> {
        self.items.drain(..self.head);
        self.items
    }
}

#[derive(Default)]
struct Class {
    /// Kept blocks of size `hot_size` (the size freed last; 0 = none),
    /// oldest first, outside the map: a program allocating and freeing one
    /// size takes and gives back blocks without hashing.
    hot_size: usize,
    hot: Fifo,
    /// Most blocks `hot` may hold: what [`CLASS_KEEP_COST`] leaves after
    /// the blocks in `by_size`, in blocks of `hot_size` (set by `make_hot`).
    /// The queue's capacity never exceeds it, so the hot path checks it only
    /// where the queue would grow anyway (length = capacity).
    hot_limit: usize,
    /// Kept blocks of the other sizes, each oldest first.
    by_size: HashMap<usize, Fifo>,
    /// [`keep_cost`] of the blocks in `by_size`.
    others_cost: usize,
}

impl Class {
    /// The oldest kept block of exactly `size` bytes.
    #[inline(always)]
    fn take(&mut self, size: usize) -> Option<u64> {
        if self.hot_size == size {
            return self.hot.pop_front();
        }
        self.take_other(size)
    }

    #[inline(never)]
    fn take_other(&mut self, size: usize) -> Option<u64> {
        let p = self.by_size.get_mut(&size).and_then(|q| q.pop_front());
        if p.is_some() {
            self.others_cost -= keep_cost(size);
        }
        p
    }

    /// Keeps `ptr`, a block of `size` bytes, after the others of its size;
    /// `false` (nothing kept) when the class is full.
    #[inline(always)]
    fn keep(&mut self, size: usize, ptr: u64) -> bool {
        if self.hot_size != size {
            self.make_hot(size);
        }
        self.hot.push_back(ptr, self.hot_limit)
    }

    /// Makes `size` the hot size: its queue moves out of the map, the old
    /// hot queue into it, and the hot queue's limit is what the others leave.
    #[inline(never)]
    fn make_hot(&mut self, size: usize) {
        let queue = self.by_size.remove(&size).unwrap_or_default();
        self.others_cost -= queue.len() * keep_cost(size);
        let old = std::mem::replace(&mut self.hot, queue);
        if !old.is_empty() {
            self.others_cost += old.len() * keep_cost(self.hot_size);
            self.by_size.insert(self.hot_size, old);
        }
        self.hot_size = size;
        // The class never held more than its budget, so this is at least
        // the queue just made hot.
        self.hot_limit = CLASS_KEEP_COST.saturating_sub(self.others_cost) / keep_cost(size);
        self.hot.bound(self.hot_limit);
    }

    /// Every kept block; the class is empty afterwards.
    fn take_all(&mut self) -> Vec<u64> {
        let mut all: Vec<u64> = std::mem::take(&mut self.hot).into_vec();
        all.extend(std::mem::take(&mut self.by_size).into_values().flat_map(Fifo::into_vec));
        self.hot_size = 0;
        self.hot_limit = 0;
        self.others_cost = 0;
        all
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.hot.len() + self.by_size.values().map(Fifo::len).sum::<usize>()
    }
}

/// Slots of [`Recent`].
const RECENT_SLOTS: usize = 256;
/// Bits of a block address in a [`Recent`] word (user-space addresses).
const RECENT_PTR_BITS: u32 = 47;

/// The small-block manager's blocks, address → size, direct-mapped by
/// address, one word each (`size << 47 | address`, [`Recent::EMPTY`] =
/// empty), so that
/// freeing a block finds its size without the lock and hash look-up of the
/// manager's table. Written when a fresh block is handed out and when a
/// free had to ask the table. A hit is authoritative: a block stays the
/// manager's with the same size (a kept block is handed out again only for
/// its own size) until `release_kept`, which clears its word first. A miss
/// (another block took the slot, or a block or size too large to pack) asks
/// the table, which stays complete.
struct Recent {
    slots: [AtomicU64; RECENT_SLOTS],
}

impl Default for Recent {
    fn default() -> Self {
        Recent { slots: std::array::from_fn(|_| AtomicU64::new(Recent::EMPTY)) }
    }
}

impl Recent {
    #[inline(always)]
    fn slot(&self, ptr: u64) -> &AtomicU64 {
        // malloc blocks are 16-aligned; mix in higher bits for spread.
        &self.slots[((ptr >> 4) ^ (ptr >> 12)) as usize % RECENT_SLOTS]
    }

    /// The address bits of a word.
    const ADDRESS: u64 = (1 << RECENT_PTR_BITS) - 1;
    /// An empty slot: its address part ([`Recent::ADDRESS`]) is no block's.
    const EMPTY: u64 = u64::MAX;

    /// The word for `ptr` of `size` bytes, if both fit.
    fn pack(ptr: u64, size: usize) -> Option<u64> {
        (ptr != 0 && ptr < Self::ADDRESS && (size as u64) < 1 << (64 - RECENT_PTR_BITS)).then_some((size as u64) << RECENT_PTR_BITS | ptr)
    }

    /// `ptr` is the manager's block of `size` bytes.
    #[inline]
    fn note(&self, ptr: u64, size: usize) {
        if let Some(w) = Self::pack(ptr, size) {
            // Relaxed: a thread freeing the block got it from the allocating
            // thread through some synchronisation, which orders this store
            // before its load.
            self.slot(ptr).store(w, Ordering::Relaxed);
        }
    }

    /// Whether word `w` is `ptr`'s. An empty word's address part is the
    /// all-ones address no block has, so it matches no pointer (NULL
    /// included) without a test of its own.
    #[inline(always)]
    fn is_for(w: u64, ptr: u64) -> bool {
        w & Self::ADDRESS == ptr
    }

    /// The size of `ptr` if its word is here.
    #[inline(always)]
    fn size_of(&self, ptr: u64) -> Option<usize> {
        let w = self.slot(ptr).load(Ordering::Relaxed);
        Self::is_for(w, ptr).then_some((w >> RECENT_PTR_BITS) as usize)
    }

    /// `ptr` leaves the manager: its word, if here, is cleared.
    fn forget(&self, ptr: u64) {
        let slot = self.slot(ptr);
        let w = slot.load(Ordering::Relaxed);
        if Self::is_for(w, ptr) {
            let _ = slot.compare_exchange(w, Self::EMPTY, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

#[derive(Default)]
struct LargeCache {
    /// Kept large blocks, oldest first: (size, address).
    blocks: Vec<(usize, u64)>,
    bytes: usize,
}

/// A large block in use.
#[derive(Clone, Copy)]
struct LiveLarge {
    bytes: usize,
    /// From the backing, and no copy has filled it yet.
    fresh: bool,
}

/// The pool of one plugin (all its devices share the host's memory).
pub struct Pool {
    threshold: Option<usize>,
    /// `threshold` as one number for the hot test: 0 when the manager is off.
    small_max: usize,
    large_from: usize,
    classes: [Mutex<Class>; CLASSES],
    /// Every block the small-block manager handed out: address → size.
    owned: [Mutex<HashMap<usize, usize>>; SHARDS],
    /// A lock-free, direct-mapped cache in front of `owned` (see [`Recent`]).
    recent: Recent,
    large: Mutex<LargeCache>,
    /// Large blocks in use, by address (rare, one lock is enough).
    large_live: Mutex<HashMap<usize, LiveLarge>>,
}

impl Default for Pool {
    /// The pool `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD` asks for (read once,
    /// when the plugin is made), large blocks from 4 MiB.
    fn default() -> Self {
        let env = std::env::var("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD").ok();
        Pool::new(threshold_from(env.as_deref()), 4 << 20)
    }
}

impl Pool {
    /// A pool keeping small blocks up to `threshold` bytes (`None`: none)
    /// and large blocks of at least `large_from` bytes.
    pub fn new(threshold: Option<usize>, large_from: usize) -> Self {
        Pool {
            threshold,
            small_max: threshold.unwrap_or(0),
            large_from,
            classes: std::array::from_fn(|_| Mutex::new(Class::default())),
            owned: std::array::from_fn(|_| Mutex::new(HashMap::default())),
            recent: Recent::default(),
            large: Mutex::new(LargeCache::default()),
            large_live: Mutex::new(HashMap::default()),
        }
    }

    /// Fork safety: takes every lock of the pool (see `runtime::fork`), so
    /// a child never inherits one that another parent thread held.
    pub fn lock_for_fork(&'static self, held: &mut crate::base::fork::ForkLocks) -> bool {
        self.classes.iter().all(|m| held.mutex(m))
            && self.owned.iter().all(|m| held.mutex(m))
            && held.mutex(&self.large)
            && held.mutex(&self.large_live)
    }

    fn owned_shard(&self, ptr: u64) -> &Mutex<HashMap<usize, usize>> {
        // malloc blocks are 16-aligned; mix in higher bits for spread.
        let h = (ptr >> 4) ^ (ptr >> 12);
        &self.owned[h as usize % SHARDS]
    }

    fn small(&self, bytes: usize) -> bool {
        // 0 < bytes <= threshold, one compare (0 wraps to the largest value).
        bytes.wrapping_sub(1) < self.small_max
    }

    /// A block of `bytes` bytes: a kept one if there is one, else from
    /// `backing`. The reuse of a kept small block is inline; the rest is not.
    #[inline(always)]
    pub fn alloc(&self, bytes: usize, backing: &dyn Backing) -> Option<u64> {
        if self.small(bytes) {
            let reused = self.classes[class_of(bytes)].lock().take(bytes);
            if reused.is_some() {
                // Its word in `recent`, if still there, is still right: a
                // kept block is handed out again only for its own size.
                return reused;
            }
        }
        self.alloc_other(bytes, backing)
    }

    /// [`Pool::alloc`] past the kept small blocks.
    #[inline(never)]
    fn alloc_other(&self, bytes: usize, backing: &dyn Backing) -> Option<u64> {
        if self.small(bytes) {
            let p = self.fresh(bytes, backing)?;
            self.owned_shard(p).lock().insert(p as usize, bytes);
            self.recent.note(p, bytes);
            return Some(p);
        }
        if self.threshold.is_some() && bytes >= self.large_from {
            let reused = if bytes <= LARGE_CACHE_BYTES {
                let mut l = self.large.lock();
                l.blocks.iter().rposition(|&(s, _)| s == bytes).map(|i| {
                    l.bytes -= bytes;
                    l.blocks.remove(i).1
                })
            } else {
                None
            };
            let (p, fresh) = match reused {
                Some(p) => (p, false),
                None => (self.fresh(bytes, backing)?, true),
            };
            self.large_live.lock().insert(p as usize, LiveLarge { bytes, fresh });
            return Some(p);
        }
        self.fresh(bytes, backing)
    }

    /// Gives a block back: kept if the pool manages it, else freed. A small
    /// block found in `recent` is kept inline; the rest is not.
    #[inline(always)]
    pub fn free(&self, ptr: u64, backing: &dyn Backing) {
        if self.threshold.is_some()
            && let Some(size) = self.recent.size_of(ptr)
        {
            if !self.classes[class_of(size)].lock().keep(size, ptr) {
                self.let_go(ptr, backing);
            }
            return;
        }
        self.free_other(ptr, backing)
    }

    /// A block of the manager's that its full class does not keep leaves
    /// the manager (its word and table entry go first, as in
    /// [`Pool::release_kept`]) and goes back to `backing`.
    #[cold]
    #[inline(never)]
    fn let_go(&self, ptr: u64, backing: &dyn Backing) {
        self.recent.forget(ptr);
        self.forget_owned(ptr);
        backing.free(ptr);
    }

    /// Removes `ptr` from the table of the manager's blocks; a shard left
    /// mostly empty gives its memory back (10^6 blocks in use at once grow
    /// the table, and it must not stay that large when they go).
    fn forget_owned(&self, ptr: u64) {
        let mut shard = self.owned_shard(ptr).lock();
        shard.remove(&(ptr as usize));
        if shard.capacity() > 1024 && shard.len() < shard.capacity() / 8 {
            let len = shard.len();
            shard.shrink_to(len * 2);
        }
    }

    /// [`Pool::free`] of a block whose size the caller knows (the
    /// allocation table's): a small block is kept without asking `recent`.
    #[inline(always)]
    pub fn free_sized(&self, ptr: u64, size: usize, backing: &dyn Backing) {
        if self.small(size) {
            if !self.classes[class_of(size)].lock().keep(size, ptr) {
                self.let_go(ptr, backing);
            }
            return;
        }
        self.free_other(ptr, backing)
    }

    /// [`Pool::free`] past `recent`.
    #[inline(never)]
    fn free_other(&self, ptr: u64, backing: &dyn Backing) {
        if self.threshold.is_none() {
            return backing.free(ptr);
        }
        // `free` found no word for it in `recent`: the table answers.
        let size = self.owned_shard(ptr).lock().get(&(ptr as usize)).copied();
        if let Some(size) = size {
            if !self.classes[class_of(size)].lock().keep(size, ptr) {
                return self.let_go(ptr, backing);
            }
            // The next free of this block (after its reuse) finds it there.
            self.recent.note(ptr, size);
            return;
        }
        let large = self.large_live.lock().remove(&(ptr as usize));
        let Some(LiveLarge { bytes, .. }) = large.filter(|b| b.bytes <= LARGE_CACHE_BYTES) else {
            return backing.free(ptr);
        };
        let evicted = {
            let mut l = self.large.lock();
            l.blocks.push((bytes, ptr));
            l.bytes += bytes;
            let mut evicted = Vec::new();
            while l.bytes > LARGE_CACHE_BYTES || l.blocks.len() > LARGE_CACHE_BLOCKS {
                let (s, p) = l.blocks.remove(0);
                l.bytes -= s;
                evicted.push(p);
            }
            evicted
        };
        evicted.into_iter().for_each(|p| backing.free(p));
    }

    /// Whether a copy of `bytes` bytes to `ptr` is the first to fill a large
    /// block fresh from the backing, starting at its first byte: its pages
    /// are then still to be faulted in, all those the copy writes. The block
    /// counts as filled from now on (a kernel may have written parts of it
    /// before; faulting in a page that is already there changes nothing).
    pub fn first_fill(&self, ptr: u64, bytes: usize) -> bool {
        if self.threshold.is_none() || bytes < self.large_from {
            return false;
        }
        match self.large_live.lock().get_mut(&(ptr as usize)) {
            Some(b) if b.fresh && bytes <= b.bytes => {
                b.fresh = false;
                true
            }
            _ => false,
        }
    }

    /// Fresh memory; when there is none, the kept blocks are given back
    /// and it is tried once more (as 22.1 does).
    fn fresh(&self, bytes: usize, backing: &dyn Backing) -> Option<u64> {
        backing.alloc(bytes).or_else(|| {
            self.release_kept(backing);
            backing.alloc(bytes)
        })
    }

    /// Frees every kept block (memory exhausted, or teardown). Blocks in use
    /// stay valid; the small ones stay the manager's.
    pub fn release_kept(&self, backing: &dyn Backing) {
        let large = std::mem::take(&mut *self.large.lock());
        let mut n = large.blocks.len();
        large.blocks.into_iter().for_each(|(_, p)| backing.free(p));
        for class in &self.classes {
            let kept = class.lock().take_all();
            for p in kept {
                self.recent.forget(p);
                self.forget_owned(p);
                backing.free(p);
                n += 1;
            }
        }
        crate::debug!("host plugin: freed {n} kept device blocks");
    }

    /// Number of blocks kept for reuse (tests).
    #[cfg(test)]
    pub fn kept(&self) -> usize {
        let small: usize = self.classes.iter().map(|c| c.lock().len()).sum();
        small + self.large.lock().blocks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts live blocks of plain malloc.
    #[derive(Default)]
    struct Counting {
        live: AtomicUsize,
    }

    impl Backing for Counting {
        fn alloc(&self, bytes: usize) -> Option<u64> {
            // SAFETY: malloc accepts any size; NULL is handled by the caller.
            let p = unsafe { libc::malloc(bytes.max(1)) };
            (!p.is_null()).then(|| {
                self.live.fetch_add(1, Ordering::Relaxed);
                p as u64
            })
        }
        fn free(&self, ptr: u64) {
            self.live.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: only pointers `alloc` returned, once.
            unsafe { libc::free(ptr as usize as *mut libc::c_void) };
        }
    }

    #[test]
    fn threshold_parsing() {
        assert_eq!(threshold_from(None), Some(8192));
        assert_eq!(threshold_from(Some("0")), None);
        assert_eq!(threshold_from(Some("100000")), Some(100000));
        assert_eq!(threshold_from(Some("junk")), Some(8192));
    }

    #[test]
    fn classes() {
        assert_eq!(class_of(1), 0);
        assert_eq!(class_of(3), 0);
        assert_eq!(class_of(4), 1);
        assert_eq!(class_of(8), 2);
        assert_eq!(class_of(100), 5);
        assert_eq!(class_of(8192), 12);
        assert_eq!(class_of(1 << 20), 12);
    }

    #[test]
    fn same_size_first_freed_first_other_sizes_not_reused() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 4 << 20);
        let (x, y) = (pool.alloc(64, &b).unwrap(), pool.alloc(64, &b).unwrap());
        pool.free(x, &b);
        pool.free(y, &b);
        assert_eq!(pool.alloc(64, &b), Some(x));
        assert_eq!(pool.alloc(64, &b), Some(y));
        let z = pool.alloc(100, &b).unwrap();
        pool.free(z, &b);
        assert_ne!(pool.alloc(120, &b), Some(z), "same class, other size");
        assert_eq!(pool.alloc(100, &b), Some(z));
        assert_eq!(b.live.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn sizes_of_one_class_interleaved_keep_their_order() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 4 << 20);
        // 64 and 100 share a class: the hot queue moves between them.
        let blocks: Vec<(usize, u64)> = [64, 100, 64, 100, 64].iter().map(|&s| (s, pool.alloc(s, &b).unwrap())).collect();
        blocks.iter().for_each(|&(_, p)| pool.free(p, &b));
        assert_eq!(pool.kept(), 5);
        for &(s, p) in &blocks {
            assert_eq!(pool.alloc(s, &b), Some(p), "size {s}: first freed, first taken");
        }
        assert_eq!(pool.kept(), 0);
        blocks.iter().for_each(|&(_, p)| pool.free(p, &b));
        pool.release_kept(&b);
        assert_eq!((pool.kept(), b.live.load(Ordering::Relaxed)), (0, 0));
    }

    /// A class keeps blocks up to its budget; more freed blocks go back to
    /// the backing and leave the manager, the first kept come back first,
    /// and the owner table shrinks once its blocks are gone.
    #[test]
    fn classes_keep_a_bounded_amount() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 4 << 20);
        let n = 3 * CLASS_KEEP_COST / keep_cost(8);
        let blocks: Vec<u64> = (0..n).map(|_| pool.alloc(8, &b).unwrap()).collect();
        blocks.iter().for_each(|&p| pool.free(p, &b));
        let kept = CLASS_KEEP_COST / keep_cost(8);
        assert_eq!(pool.kept(), kept);
        assert_eq!(b.live.load(Ordering::Relaxed), kept);
        let owned: usize = pool.owned.iter().map(|s| s.lock().len()).sum();
        assert_eq!(owned, kept, "blocks let go left the owner table");
        let capacity: usize = pool.owned.iter().map(|s| s.lock().capacity()).sum();
        assert!(capacity < 8 * kept + 64 * 1024, "owner table kept its size: capacity {capacity} for {kept} blocks");
        // 22.1's order for the blocks kept: the first freed come back first.
        for &p in &blocks[..4] {
            assert_eq!(pool.alloc(8, &b), Some(p));
        }
        blocks[..4].iter().for_each(|&p| pool.free(p, &b));
        // A full queue with a short taken prefix may let blocks go early
        // (rather than move itself), never keep more.
        let now = pool.kept();
        assert!((kept - 4..=kept).contains(&now), "{now} kept of at most {kept}");
        // Other sizes of a full class are let go too; other classes keep theirs.
        let other = pool.alloc(12, &b).unwrap();
        pool.free(other, &b);
        assert!(pool.kept() <= kept);
        let before = pool.kept();
        let big = pool.alloc(4096, &b).unwrap();
        pool.free(big, &b);
        assert_eq!(pool.kept(), before + 1);
        pool.release_kept(&b);
        assert_eq!((pool.kept(), b.live.load(Ordering::Relaxed)), (0, 0));
    }

    /// Blocks so large that a class keeps only a few (a threshold above
    /// 8 KiB puts them all in the last class): the queue's growth stops at
    /// the limit, however small.
    #[test]
    fn classes_of_large_blocks_keep_a_few() {
        let b = Counting::default();
        let pool = Pool::new(Some(1 << 21), 4 << 20);
        for (size, keeps) in [(1 << 20, 1), (700_000, 2), (600_000, 3), (8193, CLASS_KEEP_COST / keep_cost(8193))] {
            let blocks: Vec<u64> = (0..keeps + 3).map(|_| pool.alloc(size, &b).unwrap()).collect();
            blocks.iter().for_each(|&p| pool.free(p, &b));
            assert_eq!(pool.kept(), keeps, "{size}-byte blocks");
            assert_eq!(pool.alloc(size, &b), Some(blocks[0]), "first freed, first taken");
            pool.free(blocks[0], &b);
            pool.release_kept(&b);
            assert_eq!(b.live.load(Ordering::Relaxed), 0);
        }
    }

    #[test]
    fn disabled_and_above_threshold_go_to_backing() {
        let b = Counting::default();
        let pool = Pool::new(None, 4 << 20);
        let x = pool.alloc(64, &b).unwrap();
        pool.free(x, &b);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
        let pool = Pool::new(Some(32), 4 << 20);
        let x = pool.alloc(64, &b).unwrap();
        pool.free(x, &b);
        assert_eq!(pool.kept(), 0);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn large_blocks_last_freed_first_and_bounded() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 1 << 20);
        let (x, y) = (pool.alloc(1 << 20, &b).unwrap(), pool.alloc(1 << 20, &b).unwrap());
        pool.free(x, &b);
        pool.free(y, &b);
        assert_eq!(pool.alloc(1 << 20, &b), Some(y));
        pool.free(y, &b);
        let many: Vec<u64> = (0..LARGE_CACHE_BLOCKS + 4).map(|_| pool.alloc(2 << 20, &b).unwrap()).collect();
        many.into_iter().for_each(|p| pool.free(p, &b));
        assert_eq!(pool.kept(), LARGE_CACHE_BLOCKS);
        pool.release_kept(&b);
        assert_eq!(pool.kept(), 0);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn first_fill_once_per_fresh_large_block() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 1 << 20);
        let x = pool.alloc(1 << 20, &b).unwrap();
        assert!(!pool.first_fill(x + 64, 1 << 20), "not the block's start");
        assert!(!pool.first_fill(x, 2 << 20), "larger than the block");
        assert!(pool.first_fill(x, 1 << 20));
        assert!(!pool.first_fill(x, 1 << 20), "filled once already");
        pool.free(x, &b);
        // Reused from the cache: its pages are there already.
        assert_eq!(pool.alloc(1 << 20, &b), Some(x));
        assert!(!pool.first_fill(x, 1 << 20));
        // Small blocks and copies below the large size never count.
        let s = pool.alloc(64, &b).unwrap();
        assert!(!pool.first_fill(s, 64));
        // Above what the cache keeps (address space only, never touched):
        // tracked while in use, given back when freed.
        let y = pool.alloc(LARGE_CACHE_BYTES + 4096, &b).unwrap();
        assert!(pool.first_fill(y, LARGE_CACHE_BYTES + 4096));
        pool.free(y, &b);
        assert_eq!(pool.kept(), 0);
        // With the manager off nothing is tracked.
        let off = Pool::new(None, 1 << 20);
        let z = off.alloc(1 << 20, &b).unwrap();
        assert!(!off.first_fill(z, 1 << 20));
        off.free(z, &b);
        pool.free(x, &b);
        pool.free(s, &b);
        pool.release_kept(&b);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn release_kept_frees_everything_freed() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 4 << 20);
        let ps: Vec<u64> = (1..200).map(|n| pool.alloc(n * 8, &b).unwrap()).collect();
        let keep = pool.alloc(16, &b).unwrap();
        ps.into_iter().for_each(|p| pool.free(p, &b));
        pool.release_kept(&b);
        assert_eq!(b.live.load(Ordering::Relaxed), 1);
        pool.free(keep, &b);
        pool.release_kept(&b);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn recent_words_follow_the_table() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 1 << 20);
        // More blocks than slots: frees past the slots' collisions ask the
        // table, and every block comes back for its own size only.
        let blocks: Vec<(usize, u64)> = (0..3 * RECENT_SLOTS).map(|i| 8 + (i % 64) * 8).map(|s| (s, pool.alloc(s, &b).unwrap())).collect();
        blocks.iter().for_each(|&(_, p)| pool.free(p, &b));
        assert_eq!(pool.kept(), blocks.len());
        for &(s, p) in &blocks {
            assert_eq!(pool.alloc(s, &b), Some(p), "size {s}");
        }
        blocks.iter().for_each(|&(_, p)| pool.free(p, &b));
        // Released blocks leave the manager: their words go too, so an
        // address the backing hands out again for a block the manager does
        // not keep is freed to the backing, not kept with the old size.
        pool.release_kept(&b);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
        for &(_, p) in &blocks {
            assert_eq!(pool.recent.size_of(p), None);
        }
        let big = pool.alloc(100_000, &b).unwrap();
        pool.free(big, &b);
        assert_eq!((pool.kept(), b.live.load(Ordering::Relaxed)), (0, 0));
        // Empty slots match no pointer, NULL included.
        assert_eq!(pool.recent.size_of(0), None);
        assert_eq!(Recent::pack(Recent::ADDRESS, 8), None);
        // Words that cannot be packed are never stored.
        assert_eq!(Recent::pack(1 << RECENT_PTR_BITS, 8), None);
        assert_eq!(Recent::pack(0x1000, 1 << (64 - RECENT_PTR_BITS)), None);
        assert_eq!(Recent::pack(0x1000, 64), Some(64 << RECENT_PTR_BITS | 0x1000));
    }

    #[test]
    fn threads_never_share_a_block() {
        let b = Counting::default();
        let pool = Pool::new(Some(8192), 1 << 20);
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (pool, b) = (&pool, &b);
                s.spawn(move || {
                    for i in 0..20_000u64 {
                        let size = [8usize, 64, 8 + t as usize * 8, 4096][(i % 4) as usize];
                        let p = pool.alloc(size, b).unwrap();
                        // Owned exclusively until freed: a stamp must survive.
                        // SAFETY: p is a live block of at least 8 bytes.
                        unsafe { (p as usize as *mut u64).write(t << 32 | i) };
                        std::hint::spin_loop();
                        // SAFETY: as above.
                        assert_eq!(unsafe { (p as usize as *const u64).read() }, t << 32 | i);
                        pool.free(p, b);
                    }
                });
            }
        });
        pool.release_kept(&b);
        assert_eq!(b.live.load(Ordering::Relaxed), 0);
    }
}
