//! The argument arrays of a data or kernel construct as compiled code
//! passes them (`ArgsBase`, `Args`, `ArgSizes`, `ArgTypes`, `ArgNames`,
//! `ArgMappers`), read once into typed [`MapArg`]s on the stack, with the
//! checks that reject what no conforming program passes.

use super::data::MapArg;
use crate::abi::MapType;
use crate::abi::map_var_info_t;
use crate::abi::ptr;
use crate::base::error::{OffloadError, Result};
use core::ffi::c_void;

impl Default for ArgBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// Arguments of one call kept on the stack (nearly all calls have fewer).
const ARGS_INLINE: usize = 8;

/// Storage for the typed argument list of one call: on the stack up to
/// [`ARGS_INLINE`] arguments, nothing to initialise or drop on the hot path.
pub struct ArgBuf {
    inline: [core::mem::MaybeUninit<MapArg>; ARGS_INLINE],
    heap: Vec<MapArg>,
}

impl ArgBuf {
    #[inline]
    pub fn new() -> Self {
        ArgBuf { inline: [const { core::mem::MaybeUninit::uninit() }; ARGS_INLINE], heap: Vec::new() }
    }
}

/// The argument arrays of a data or kernel call, as passed by compiled code.
#[derive(Clone, Copy)]
pub struct RawArgs {
    pub num: i32,
    pub bases: *mut *mut c_void,
    pub begins: *mut *mut c_void,
    pub sizes: *mut i64,
    pub types: *mut i64,
    pub names: *mut map_var_info_t,
    pub mappers: *mut *mut c_void,
}

impl RawArgs {
    /// The arrays in the order of the data entry points' parameters.
    #[inline]
    pub fn new(
        num: i32,
        bases: *mut *mut c_void,
        begins: *mut *mut c_void,
        sizes: *mut i64,
        types: *mut i64,
        names: *mut map_var_info_t,
        mappers: *mut *mut c_void,
    ) -> Self {
        RawArgs { num, bases, begins, sizes, types, names, mappers }
    }

    /// Copies the arrays into typed entries in `buf` and returns them.
    /// NULL `names`/`mappers` arrays are allowed.
    ///
    /// # Safety
    /// Each non-NULL array must hold `num` elements.
    #[inline(always)]
    pub unsafe fn read_into<'a>(&self, buf: &'a mut ArgBuf) -> Result<&'a mut [MapArg]> {
        // Every call of every construct comes through here: check the arrays
        // with a few bit tests and copy without per-element checks; the
        // checked reader below only runs to name the problem.
        let n = self.num as usize;
        let required = self.bases as usize | self.begins as usize | self.sizes as usize | self.types as usize;
        let optional = self.names as usize | self.mappers as usize;
        let non_null = !self.bases.is_null() && !self.begins.is_null() && !self.sizes.is_null() && !self.types.is_null();
        if self.num < 0 || (n > 0 && (!non_null || !(required | optional).is_multiple_of(8))) {
            // SAFETY: forwarded contract.
            return unsafe { self.read_checked(buf) };
        }
        let names = self.names as *const usize;
        let mappers = self.mappers as *const usize;
        // The four required arrays are non-NULL and aligned (checked above)
        // and hold `n` elements by the caller's contract; the optional ones
        // are NULL (no names/mappers) or the same.
        // SAFETY: called with i < n only; see above.
        let read = |i: usize| unsafe {
            MapArg::new(
                *self.bases.add(i) as usize,
                *self.begins.add(i) as usize,
                *self.sizes.add(i),
                MapType(*self.types.add(i) as u64),
                if names.is_null() { 0 } else { *names.add(i) },
                if mappers.is_null() { 0 } else { *mappers.add(i) },
            )
        };
        if n > ARGS_INLINE {
            buf.heap.clear();
            buf.heap.extend((0..n).map(read));
            return check_sizes(&mut buf.heap[..]);
        }
        let dst = buf.inline.as_mut_ptr() as *mut MapArg;
        for i in 0..n {
            // SAFETY: i < n <= ARGS_INLINE: inside the inline array.
            unsafe { dst.add(i).write(read(i)) };
        }
        // SAFETY: the first `n` elements were just initialised; `MapArg` is Copy.
        check_sizes(unsafe { core::slice::from_raw_parts_mut(dst, n) })
    }

    /// [`RawArgs::read_into`] with every check spelled out: the error names
    /// the bad array.
    ///
    /// # Safety
    /// As [`RawArgs::read_into`].
    #[cold]
    #[inline(never)]
    unsafe fn read_checked<'a>(&self, buf: &'a mut ArgBuf) -> Result<&'a mut [MapArg]> {
        let n = usize::try_from(self.num).map_err(|_| OffloadError::InvalidArgument(format!("negative argument count {}", self.num)))?;
        // SAFETY: each array holds `n` elements by the caller's contract; NULL is checked.
        let bases = unsafe { ptr::slice(self.bases as *const usize, n, "ArgsBase")? };
        // SAFETY: as above.
        let begins = unsafe { ptr::slice(self.begins as *const usize, n, "Args")? };
        // SAFETY: as above.
        let sizes = unsafe { ptr::slice(self.sizes as *const i64, n, "ArgSizes")? };
        // SAFETY: as above.
        let types = unsafe { ptr::slice(self.types as *const i64, n, "ArgTypes")? };
        // SAFETY: as above; a NULL names array means "no names".
        let names = if self.names.is_null() { &[][..] } else { unsafe { ptr::slice(self.names as *const usize, n, "ArgNames")? } };
        // SAFETY: as above; a NULL mappers array means "no mappers".
        let mappers = if self.mappers.is_null() { &[][..] } else { unsafe { ptr::slice(self.mappers as *const usize, n, "ArgMappers")? } };
        buf.heap.clear();
        for i in 0..n {
            let name = names.get(i).copied().unwrap_or(0);
            let mapper = mappers.get(i).copied().unwrap_or(0);
            buf.heap.push(MapArg::new(bases[i], begins[i], sizes[i], MapType(types[i] as u64), name, mapper));
        }
        check_sizes(&mut buf.heap[..])
    }

    /// Writes `use_device_ptr`/`use_device_addr` results back into `ArgsBase`.
    ///
    /// # Safety
    /// `bases` must hold `args.len()` writable elements.
    pub unsafe fn write_back_bases(&self, args: &[MapArg]) {
        for (i, a) in args.iter().enumerate() {
            if a.ty.any(MapType::RETURN_PARAM) {
                // SAFETY: i < num, and ArgsBase is the compiler's writable local array.
                unsafe { *self.bases.add(i) = a.base as *mut c_void };
            }
        }
    }
}

/// Rejects map arguments no conforming program passes, before
/// anything is allocated or copied:
/// * a negative size: OpenMP 5.2 §5.2.5 requires an array section's length
///   to be a non-negative integer (22.1 aborts; ours reports and does nothing);
/// * a NULL host address with a non-zero size to copy to or from the device
///   (`to`/`from`, not a by-value literal): the list item has no storage, and
///   the copy would read or write address 0 (22.1 segfaults). Without a copy
///   (rustc passes its literals again, type 0, to the end call) nothing
///   touches the address, as in 22.1. A `NON_CONTIG` entry's address is its
///   descriptor array, checked (and named) by the strided update itself.
#[inline(always)]
fn check_sizes(args: &mut [MapArg]) -> Result<&mut [MapArg]> {
    for (i, a) in args.iter().enumerate() {
        if a.size < 0
            || (a.begin == 0 && a.size > 0 && a.ty.any(MapType::TO | MapType::FROM) && !a.ty.any(MapType::LITERAL | MapType::NON_CONTIG))
        {
            return Err(bad_size(i, a));
        }
    }
    Ok(args)
}

#[cold]
#[inline(never)]
fn bad_size(i: usize, a: &MapArg) -> OffloadError {
    if a.size < 0 {
        OffloadError::InvalidArgument(format!("argument {i} has a negative size {} (map type {:#x})", a.size, a.ty.0))
    } else {
        OffloadError::InvalidArgument(format!("argument {i} maps {} bytes at host address NULL (map type {:#x})", a.size, a.ty.0))
    }
}
