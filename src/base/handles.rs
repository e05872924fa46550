//! Handle tables: objects handed to C as opaque pointers. A handle is the
//! address of its object; the table holds the live ones, so a freed or
//! made-up handle is refused instead of dereferenced, and a look-up hands
//! out a counted reference, so an object stays alive while a call uses it
//! even when another thread destroys its handle meanwhile.

use super::fork::ForkLocks;
use super::hash::AddrHash;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;

/// The live handles of one kind.
pub struct HandleTable<T> {
    live: RwLock<Option<HashMap<usize, Arc<T>, AddrHash>>>,
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> HandleTable<T> {
    pub const fn new() -> Self {
        HandleTable { live: RwLock::new(None) }
    }

    /// Makes `value` a live object and returns its handle with a reference.
    pub fn insert(&self, value: T) -> (*const T, Arc<T>) {
        let obj = Arc::new(value);
        let h = Arc::as_ptr(&obj);
        self.live.write().get_or_insert_with(HashMap::default).insert(h as usize, Arc::clone(&obj));
        (h, obj)
    }

    /// The object of a live handle.
    #[inline]
    pub fn get(&self, h: *const T) -> Option<Arc<T>> {
        self.live.read().as_ref()?.get(&(h as usize)).cloned()
    }

    /// Takes a handle out of the table (the object lives on while references remain).
    pub fn remove(&self, h: *const T) -> Option<Arc<T>> {
        self.live.write().as_mut()?.remove(&(h as usize))
    }

    /// Removes every handle `keep` refuses.
    pub fn retain(&self, mut keep: impl FnMut(&Arc<T>) -> bool) {
        if let Some(m) = self.live.write().as_mut() {
            m.retain(|_, v| keep(v));
        }
    }

    /// Every live object.
    pub fn all(&self) -> Vec<Arc<T>> {
        self.live.read().as_ref().map(|m| m.values().cloned().collect()).unwrap_or_default()
    }

    /// Fork participation: the table's lock.
    pub fn lock_for_fork(&'static self, held: &mut ForkLocks) -> bool {
        held.write(&self.live)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_live_until_removed_and_objects_until_released() {
        static T: HandleTable<u32> = HandleTable::new();
        let (h, obj) = T.insert(7);
        assert_eq!(*T.get(h).unwrap(), 7);
        let removed = T.remove(h).unwrap();
        assert!(T.get(h).is_none());
        assert!(T.remove(h).is_none());
        // The reference taken before the removal still reads the object.
        assert_eq!(*obj, 7);
        drop(removed);
        assert_eq!(*obj, 7);
        assert!(T.get(std::ptr::dangling()).is_none());
    }
}
