//! The handle of a user-defined mapper (`rt_mapper_handle`): what clang's
//! mapper functions pass to `__tgt_push_mapper_component` and
//! `__tgt_mapper_num_components`. LLVM 22.1 defines it as a pointer to a
//! `MapperComponentsTy`, a `std::vector<MapComponentInfoTy>` in libstdc++'s
//! layout (three pointers: begin, end, end of storage), and programs (LLVM's
//! own tests among them) build that vector themselves and read it back, so
//! ours is the same object: our mapper runs use it too, and a vector the
//! program made grows the way its `std::vector` would (libstdc++'s
//! `operator new` / `operator delete` when the process has them).

use crate::base::error::{OffloadError, Result};
use core::ffi::c_void;

/// `MapComponentInfoTy`: one component a mapper pushed.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapComponent {
    pub base: *mut c_void,
    pub begin: *mut c_void,
    pub size: i64,
    pub ty: i64,
    pub name: *mut c_void,
}

/// `MapperComponentsTy`: libstdc++'s `std::vector<MapComponentInfoTy>`.
#[repr(C)]
#[derive(Debug)]
pub struct MapperComponents {
    start: *mut MapComponent,
    finish: *mut MapComponent,
    end_of_storage: *mut MapComponent,
}

pub(crate) type NewFn = unsafe extern "C" fn(usize) -> *mut c_void;
pub(crate) type DeleteFn = unsafe extern "C" fn(*mut c_void);

/// The allocator of the vectors' storage: libstdc++'s global `operator new`
/// and `operator delete` where the process has them (C++ programs), which
/// is what the program's `std::vector` frees with; `malloc`/`free` in a C
/// process, where only we ever grow or free a vector.
pub(crate) fn allocator() -> (NewFn, DeleteFn) {
    static ALLOC: std::sync::OnceLock<(NewFn, DeleteFn)> = std::sync::OnceLock::new();
    *ALLOC.get_or_init(|| {
        // Miri cannot call what dlsym finds (cargo miri test).
        if cfg!(miri) {
            return (libc::malloc, libc::free);
        }
        // SAFETY: dlsym with NUL-terminated names on the global scope.
        let (n, d) = unsafe { (libc::dlsym(libc::RTLD_DEFAULT, c"_Znwm".as_ptr()), libc::dlsym(libc::RTLD_DEFAULT, c"_ZdlPv".as_ptr())) };
        if n.is_null() || d.is_null() {
            return (libc::malloc, libc::free);
        }
        // SAFETY: both are functions of these signatures (`operator new(size_t)`, `operator delete(void *)`).
        unsafe { (core::mem::transmute::<*mut c_void, NewFn>(n), core::mem::transmute::<*mut c_void, DeleteFn>(d)) }
    })
}

impl Default for MapperComponents {
    fn default() -> Self {
        Self::new()
    }
}

impl MapperComponents {
    /// An empty vector (no storage).
    pub const fn new() -> Self {
        MapperComponents { start: core::ptr::null_mut(), finish: core::ptr::null_mut(), end_of_storage: core::ptr::null_mut() }
    }

    /// Checks a handle received from C: NULL, misaligned, or pointers that
    /// are not a vector of whole components are errors.
    ///
    /// # Safety
    /// A non-NULL, aligned `handle` points to 24 readable and writable bytes
    /// that no one else uses during the call (the running mapper's handle).
    pub unsafe fn from_handle<'a>(handle: *mut c_void) -> Result<&'a mut MapperComponents> {
        if handle.is_null() || !(handle as usize).is_multiple_of(align_of::<MapperComponents>()) {
            return Err(OffloadError::InvalidArgument("mapper handle is NULL or misaligned".into()));
        }
        // SAFETY: non-NULL and aligned; the caller's contract.
        let v = unsafe { &mut *(handle as *mut MapperComponents) };
        let (s, f, e) = (v.start as usize, v.finish as usize, v.end_of_storage as usize);
        let whole = |bytes: usize| bytes.is_multiple_of(size_of::<MapComponent>());
        let plausible =
            s <= f && f <= e && whole(f - s) && whole(e - s) && (s == 0) == (e == 0) && s.is_multiple_of(align_of::<MapComponent>());
        if !plausible {
            return Err(OffloadError::InvalidArgument(format!(
                "mapper handle {handle:p} is not a component vector (begin {s:#x}, end {f:#x}, capacity end {e:#x})"
            )));
        }
        Ok(v)
    }

    pub fn len(&self) -> usize {
        (self.finish as usize - self.start as usize) / size_of::<MapComponent>()
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.finish
    }

    fn capacity(&self) -> usize {
        (self.end_of_storage as usize - self.start as usize) / size_of::<MapComponent>()
    }

    /// The components pushed so far.
    pub fn as_slice(&self) -> &[MapComponent] {
        if self.start.is_null() {
            return &[];
        }
        // SAFETY: a checked vector: `len` initialised components from `start`.
        unsafe { std::slice::from_raw_parts(self.start, self.len()) }
    }

    /// `push_back`, growing the storage by doubling as libstdc++ does.
    pub fn push(&mut self, c: MapComponent) -> Result<()> {
        if self.finish == self.end_of_storage {
            let len = self.len();
            let cap = if self.capacity() == 0 { 1 } else { self.capacity() * 2 };
            let bytes =
                cap.checked_mul(size_of::<MapComponent>()).ok_or(OffloadError::InvalidArgument("too many mapper components".into()))?;
            let (new, delete) = allocator();
            // SAFETY: operator new / malloc of a non-zero size.
            let p = unsafe { new(bytes) } as *mut MapComponent;
            if p.is_null() {
                return Err(OffloadError::InvalidArgument("out of memory for mapper components".into()));
            }
            if !self.start.is_null() {
                // SAFETY: `len` components of the old storage into the new one, which is larger; disjoint allocations.
                unsafe { core::ptr::copy_nonoverlapping(self.start, p, len) };
                // SAFETY: the old storage came from the same allocator (ours, or the program's std::allocator).
                unsafe { delete(self.start.cast()) };
            }
            self.start = p;
            // SAFETY: within (or one past) the new allocation of `cap >= len + 1` components.
            self.finish = unsafe { p.add(len) };
            // SAFETY: one past the end of the new allocation.
            self.end_of_storage = unsafe { p.add(cap) };
        }
        // SAFETY: `finish < end_of_storage`: a slot of the storage.
        unsafe {
            self.finish.write(c);
            self.finish = self.finish.add(1);
        }
        Ok(())
    }

    /// Frees the storage (a vector this runtime made for a mapper run).
    pub fn release(&mut self) {
        if !self.start.is_null() {
            // SAFETY: storage allocated by `push` with this allocator.
            unsafe { allocator().1(self.start.cast()) };
        }
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_grows_and_keeps_components() {
        let mut v = MapperComponents::new();
        for i in 0..100 {
            v.push(MapComponent { base: core::ptr::null_mut(), begin: i as *mut c_void, size: i, ty: 1, name: core::ptr::null_mut() })
                .unwrap();
        }
        assert_eq!(v.len(), 100);
        assert!(v.as_slice().iter().enumerate().all(|(i, c)| c.size == i as i64 && c.begin as usize == i));
        v.release();
        assert!(v.is_empty());
    }

    #[test]
    fn implausible_handles_are_rejected() {
        // SAFETY: NULL is checked first.
        assert!(unsafe { MapperComponents::from_handle(core::ptr::null_mut()) }.is_err());
        let mut bad = [8usize, 0, 0];
        // SAFETY: a live, aligned 24-byte array.
        assert!(unsafe { MapperComponents::from_handle(bad.as_mut_ptr().cast()) }.is_err(), "begin after end");
        let mut bad = [0x1000usize, 0x1008, 0x1028];
        // SAFETY: as above.
        assert!(unsafe { MapperComponents::from_handle(bad.as_mut_ptr().cast()) }.is_err(), "not whole components");
        let mut ok = [0usize, 0, 0];
        // SAFETY: as above.
        assert_eq!(unsafe { MapperComponents::from_handle(ok.as_mut_ptr().cast()) }.unwrap().len(), 0);
    }
}
