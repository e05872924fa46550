//! The caching allocator in front of `cuMemAlloc` (LLVM's `MemoryManagerTy`,
//! abi-reference §10.1): device allocations up to a threshold (8 KiB by
//! default, `LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD`, 0 disables) are served
//! from per-size-class free lists, so the small, frequent allocations of
//! mapped scalars and firstprivates do not reach the driver each time.
//!
//! Invariants: a pointer is in `owned` iff it came from the pool and has not
//! been returned to the driver; a pointer is on a free list only if it is in
//! `owned`; every owned block has exactly the size of its class. Cached
//! blocks are only given back to the driver when an allocation fails (then
//! everything cached is released and the allocation retried once).

use crate::base::error::Result;
use parking_lot::Mutex;
use std::collections::HashMap;

/// Default threshold (LLVM: `1 << 13`).
pub const DEFAULT_THRESHOLD: u64 = 8 * 1024;
/// Smallest size class: the driver's allocation alignment.
pub const MIN_CLASS: u64 = 256;

/// Where the pool gets its memory (the driver, or a fake in tests).
pub trait RawAllocator {
    fn raw_alloc(&self, size: u64) -> Result<u64>;
    fn raw_free(&self, ptr: u64) -> Result<()>;
}

#[derive(Default)]
struct Inner {
    /// Free blocks per class (class i holds blocks of `MIN_CLASS << i` bytes).
    free: Vec<Vec<u64>>,
    /// Pool-owned blocks (in use or free) → class.
    owned: HashMap<u64, u8>,
}

/// A per-device caching allocator.
pub struct MemoryPool {
    threshold: u64,
    inner: Mutex<Inner>,
}

/// Counters for tests and debug output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Blocks the pool owns (in use or cached).
    pub owned: usize,
    /// Blocks cached on free lists.
    pub cached: usize,
}

impl MemoryPool {
    /// A pool serving allocations of at most `threshold` bytes (0: none).
    pub fn new(threshold: u64) -> Self {
        MemoryPool { threshold, inner: Mutex::new(Inner::default()) }
    }

    /// Whether allocations of `size` bytes go through the pool.
    pub fn serves(&self, size: u64) -> bool {
        size > 0 && size <= self.threshold && Self::class_of(size).is_some()
    }

    /// The class index and block size for `size` bytes (`None` above 2^63).
    fn class_of(size: u64) -> Option<(usize, u64)> {
        let bytes = size.max(MIN_CLASS).checked_next_power_of_two()?;
        Some(((bytes / MIN_CLASS).trailing_zeros() as usize, bytes))
    }

    /// Allocates `size` bytes, from the cache when possible.
    pub fn alloc(&self, size: u64, raw: &impl RawAllocator) -> Result<u64> {
        if !self.serves(size) {
            return self.raw_alloc_retrying(size, raw);
        }
        let Some((class, bytes)) = Self::class_of(size) else { return self.raw_alloc_retrying(size, raw) };
        {
            let mut inner = self.inner.lock();
            if let Some(p) = inner.free.get_mut(class).and_then(Vec::pop) {
                return Ok(p);
            }
        }
        let p = self.raw_alloc_retrying(bytes, raw)?;
        self.inner.lock().owned.insert(p, class as u8);
        Ok(p)
    }

    /// Frees a pointer returned by [`MemoryPool::alloc`]: pool blocks go back
    /// to their free list, others to the driver.
    pub fn free(&self, ptr: u64, raw: &impl RawAllocator) -> Result<()> {
        {
            let mut inner = self.inner.lock();
            if let Some(&class) = inner.owned.get(&ptr) {
                let class = class as usize;
                if inner.free.len() <= class {
                    inner.free.resize_with(class + 1, Vec::new);
                }
                inner.free[class].push(ptr);
                return Ok(());
            }
        }
        raw.raw_free(ptr)
    }

    fn raw_alloc_retrying(&self, bytes: u64, raw: &impl RawAllocator) -> Result<u64> {
        match raw.raw_alloc(bytes) {
            Ok(p) => Ok(p),
            Err(first) => {
                // Reference (MemoryManagerTy::allocate): on failure release
                // every cached block and try once more.
                if self.release_cached(raw) == 0 {
                    return Err(first);
                }
                raw.raw_alloc(bytes)
            }
        }
    }

    /// Gives every cached block back to the driver; returns how many.
    pub fn release_cached(&self, raw: &impl RawAllocator) -> usize {
        let blocks: Vec<u64> = {
            let mut inner = self.inner.lock();
            let blocks: Vec<u64> = inner.free.iter_mut().flat_map(std::mem::take).collect();
            for p in &blocks {
                inner.owned.remove(p);
            }
            blocks
        };
        for &p in &blocks {
            if let Err(e) = raw.raw_free(p) {
                crate::debug!("cuda: releasing cached block {p:#x}: {e}");
            }
        }
        blocks.len()
    }

    pub fn stats(&self) -> PoolStats {
        let inner = self.inner.lock();
        PoolStats { owned: inner.owned.len(), cached: inner.free.iter().map(Vec::len).sum() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::OffloadError;
    use std::cell::{Cell, RefCell};
    use std::collections::HashSet;

    /// A fake driver with a capacity, counting calls.
    struct Fake {
        next: Cell<u64>,
        live: RefCell<HashMap<u64, u64>>,
        capacity: u64,
        allocs: Cell<usize>,
    }
    impl Fake {
        fn new(capacity: u64) -> Self {
            Fake { next: Cell::new(0x1000_0000), live: RefCell::new(HashMap::new()), capacity, allocs: Cell::new(0) }
        }
        fn used(&self) -> u64 {
            self.live.borrow().values().sum()
        }
    }
    impl RawAllocator for Fake {
        fn raw_alloc(&self, size: u64) -> Result<u64> {
            if self.used() + size > self.capacity {
                return Err(OffloadError::OutOfDeviceMemory { bytes: size });
            }
            self.allocs.set(self.allocs.get() + 1);
            let p = self.next.get();
            self.next.set(p + size.next_multiple_of(256));
            self.live.borrow_mut().insert(p, size);
            Ok(p)
        }
        fn raw_free(&self, ptr: u64) -> Result<()> {
            self.live.borrow_mut().remove(&ptr).map(|_| ()).ok_or(OffloadError::Internal(format!("double free {ptr:#x}")))
        }
    }

    #[test]
    fn small_allocations_are_reused() {
        let raw = Fake::new(1 << 30);
        let pool = MemoryPool::new(DEFAULT_THRESHOLD);
        for _ in 0..100 {
            let p = pool.alloc(8, &raw).unwrap();
            pool.free(p, &raw).unwrap();
        }
        assert_eq!(raw.allocs.get(), 1, "one cuMemAlloc for 100 small alloc/free pairs");
        // Sizes in one class share blocks; the block fits the largest.
        let a = pool.alloc(300, &raw).unwrap();
        pool.free(a, &raw).unwrap();
        let b = pool.alloc(512, &raw).unwrap();
        assert_eq!(a, b);
        assert_eq!(raw.live.borrow()[&b], 512);
    }

    #[test]
    fn large_and_disabled_bypass_the_pool() {
        let raw = Fake::new(1 << 30);
        let pool = MemoryPool::new(DEFAULT_THRESHOLD);
        let p = pool.alloc(DEFAULT_THRESHOLD + 1, &raw).unwrap();
        pool.free(p, &raw).unwrap();
        assert!(raw.live.borrow().is_empty());
        // A huge threshold: sizes without a power-of-two class bypass the pool.
        let huge = MemoryPool::new(u64::MAX);
        assert!(huge.serves(1 << 40) && !huge.serves((1 << 63) + 1));
        let off = MemoryPool::new(0);
        let q = off.alloc(8, &raw).unwrap();
        off.free(q, &raw).unwrap();
        assert!(raw.live.borrow().is_empty());
        assert_eq!(off.stats(), PoolStats::default());
    }

    #[test]
    fn out_of_memory_releases_the_cache_and_retries() {
        let raw = Fake::new(4096);
        let pool = MemoryPool::new(DEFAULT_THRESHOLD);
        let ps: Vec<u64> = (0..16).map(|_| pool.alloc(256, &raw).unwrap()).collect();
        for p in ps {
            pool.free(p, &raw).unwrap();
        }
        assert_eq!(pool.stats(), PoolStats { owned: 16, cached: 16 });
        let big = pool.alloc(4096, &raw).unwrap();
        assert_eq!(pool.stats(), PoolStats { owned: 1, cached: 0 });
        assert!(pool.alloc(256, &raw).is_err());
        pool.free(big, &raw).unwrap();
    }

    #[test]
    fn random_sequences_keep_the_invariants() {
        let raw = Fake::new(1 << 30);
        let pool = MemoryPool::new(DEFAULT_THRESHOLD);
        let mut live: Vec<(u64, u64)> = Vec::new();
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..5000 {
            if live.is_empty() || rnd() % 3 != 0 {
                let size = 1 + rnd() % 20000;
                let p = pool.alloc(size, &raw).unwrap();
                assert!(raw.live.borrow()[&p] >= size);
                live.push((p, size));
            } else {
                let i = (rnd() as usize) % live.len();
                let (p, _) = live.swap_remove(i);
                pool.free(p, &raw).unwrap();
            }
            let distinct: HashSet<u64> = live.iter().map(|x| x.0).collect();
            assert_eq!(distinct.len(), live.len(), "a block was handed out twice");
        }
    }
}
