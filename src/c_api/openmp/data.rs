//! `target data` / `enter data` / `exit data` / `update` entry points with
//! their `_nowait` and legacy forms, and the mapper-component services
//! (abi-reference §1.3.2, §6.6–§6.12).

use super::boundary::{value_entry, void_entry};
use crate::abi::mapper::{MapComponent, MapperComponents};
use crate::abi::ptr::{self, Loc};
use crate::abi::{MapType, ident_t, map_var_info_t};
use crate::base::error::{OffloadError, Result};
use crate::openmp::async_info::AsyncInfo;
use crate::openmp::data::{self, MapArg};
use crate::openmp::{self, launch};
use core::ffi::c_void;

/// Arguments of one call kept on the stack (nearly all calls have fewer).
const ARGS_INLINE: usize = 8;

/// Storage for the typed argument list of one call: on the stack up to
/// [`ARGS_INLINE`] arguments, nothing to initialise or drop on the hot path.
pub(crate) struct ArgBuf {
    inline: [core::mem::MaybeUninit<MapArg>; ARGS_INLINE],
    heap: Vec<MapArg>,
}

impl ArgBuf {
    #[inline]
    pub(crate) fn new() -> Self {
        ArgBuf { inline: [const { core::mem::MaybeUninit::uninit() }; ARGS_INLINE], heap: Vec::new() }
    }
}

/// The argument arrays of a data or kernel call, as passed by compiled code.
#[derive(Clone, Copy)]
pub(crate) struct RawArgs {
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
    pub(crate) fn new(
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
    pub(crate) unsafe fn read_into<'a>(&self, buf: &'a mut ArgBuf) -> Result<&'a mut [MapArg]> {
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
    pub(crate) unsafe fn write_back_bases(&self, args: &[MapArg]) {
        for (i, a) in args.iter().enumerate() {
            if a.ty.any(MapType::RETURN_PARAM) {
                // SAFETY: i < num, and ArgsBase is the compiler's writable local array.
                unsafe { *self.bases.add(i) = a.base as *mut c_void };
            }
        }
    }
}

/// Rejects map arguments no conforming program passes (issue 14), before
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum DataOp {
    Begin,
    End,
    Update,
}

/// `targetData`: checks the device, runs one data operation, applies the policy.
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; `raw` satisfies [`RawArgs::read`].
#[inline(always)] // Once per export, with `op` and `nowait` constants.
unsafe fn target_data(name: &'static str, loc: *const ident_t, device_id: i64, raw: RawArgs, op: DataOp, nowait: bool) {
    void_entry(name, || {
        // SAFETY: forwarded contract.
        let src = unsafe { Loc::new(loc) };
        let rt = openmp::get();
        let Some(id) = rt.check_device(device_id, &src) else {
            crate::debug!("{name}: not offloading to device {device_id}");
            return Ok(());
        };
        let mut buf = ArgBuf::new();
        // SAFETY: forwarded contract.
        let args = unsafe { raw.read_into(&mut buf)? };
        // Listed before `getDevice` loads pending images, as in LLVM.
        launch::print_args(
            id as usize,
            || {
                let header = match op {
                    DataOp::Begin => "Entering OpenMP data region with being_mapper",
                    DataOp::End => "Exiting OpenMP data region with end_mapper",
                    DataOp::Update => "Updating data within the OpenMP data region with update_mapper",
                };
                format!("{header} at {} with {} arguments:", src.source(), args.len())
            },
            args,
        );
        let dev = rt.device_or_fatal(id);
        let kind = match op {
            DataOp::Begin => crate::tools::ompt::Kind::EnterData,
            DataOp::End => crate::tools::ompt::Kind::ExitData,
            DataOp::Update => crate::tools::ompt::Kind::Update,
        };
        // The tool interfaces cost this flag test and the one at the end.
        if crate::tools::ompt::hooks() {
            // By value: a borrow would keep `src` in memory on the fast path.
            let (at, nargs) = (src, args.len());
            let detail = move || format!("{}NumArgs={nargs}", crate::tools::profile::source_detail(&at.source()));
            crate::tools::ompt::construct_begin(kind, id, loc as usize, "Runtime: Data Copy", &detail);
        }
        crate::debug!("{name}: device {id}, {} arguments", args.len());
        let mut q = AsyncInfo::new(dev);
        let rc = match op {
            DataOp::Begin => {
                let mut st = data::BeginState::for_args(args);
                data::data_begin(rt, dev, args, false, &mut st, &mut q).and_then(|_| data::process_attach(dev, &st, &mut q))
            }
            DataOp::End => {
                let mut post = data::EndQueue::new();
                data::data_end(dev, args, false, &mut post, &mut q).and_then(|_| data::finish_end_queue(&mut q, &mut post))
            }
            DataOp::Update => data::data_update(dev, args, false, &mut q),
        };
        // Waits for the queued copies (or parks them in the task for nowait).
        let rc = rc.and_then(|_| q.finish(nowait));
        if rc.is_ok() && op == DataOp::Begin {
            // SAFETY: same arrays as read above.
            unsafe { raw.write_back_bases(args) };
        }
        rt.handle_outcome(rc.is_ok(), &src);
        // Re-read, not kept: the flag is set before any construct runs.
        if crate::tools::ompt::hooks() {
            crate::tools::ompt::construct_end();
        }
        Ok(())
    })
}

/// Most list items [`update_fast`] takes.
const UPDATE_FAST_ITEMS: usize = 4;

/// `target update` for the common case, with the general path's result:
/// up to four contiguous `to`/`from` list items (no `present`, mapper or
/// other bit), each inside one live mapping that has no attached pointers,
/// on a ready device whose plugin copies synchronously (the host plugin),
/// and nothing else to do ([`crate::base::fast_path`] is zero: no INFO,
/// debug, tool, profile or recording, and the policy settled). Every item is
/// checked first; then each is looked up and copied while its look-up holds
/// the shard's read lock, so that another thread's `exit data` cannot free
/// the mapping's device memory during the copy (no reference is taken).
/// Returns false whenever anything differs (an item not mapped or released
/// already, a copy the plugin refuses); then the general path runs and
/// copies every item again, the items copied here included (the same bytes:
/// nothing is lost or doubled).
///
/// # Safety
/// Each non-NULL array of `raw` holds `raw.num` elements.
#[inline(always)]
unsafe fn update_fast(device_id: i64, raw: &RawArgs) -> bool {
    if !crate::base::fast_path::allowed() {
        return false;
    }
    let n = raw.num as usize;
    if raw.num <= 0
        || n > UPDATE_FAST_ITEMS
        || raw.begins.is_null()
        || raw.sizes.is_null()
        || raw.types.is_null()
        || !(raw.begins as usize | raw.sizes as usize | raw.types as usize | raw.mappers as usize).is_multiple_of(8)
    {
        return false;
    }
    // The list item `i`: (begin, size, map type), checked on the first read.
    // SAFETY: the arrays are non-NULL, aligned and hold `raw.num` elements (checked above and the caller's contract); i < num.
    let item = |i: usize| unsafe { (*raw.begins.add(i) as usize, *raw.sizes.add(i), *raw.types.add(i) as u64) };
    let rt = openmp::get();
    let id = if device_id == -1 { crate::base::libomp::default_device() as i64 } else { device_id };
    let Some(dev) = rt.device_ready(id) else { return false };
    if dev.queued {
        return false;
    }
    // Every item is checked before anything is copied.
    for i in 0..n {
        let (begin, size, ty) = item(i);
        // SAFETY: as above; a NULL mappers array means no mappers.
        let mapper = if raw.mappers.is_null() { 0 } else { unsafe { *raw.mappers.add(i) as usize } };
        if size <= 0 || begin == 0 || mapper != 0 || ty & !(MapType::TO | MapType::FROM) != 0 || ty == 0 {
            return false;
        }
    }
    for i in 0..n {
        let (begin, size, ty) = item(i);
        let (size, ty) = (size as u64, MapType(ty));
        // The guard keeps the mapping (and its device memory) in place until
        // the copy is done.
        let Some((held, tgt)) = data::plain_update_target(dev, begin, size) else { return false };
        if dev.direct_copies {
            // `begin` is a host list item of `size` bytes the program passed
            // to the update (its own memory); `tgt` lies in its mapping,
            // which the held lock keeps allocated.
            // SAFETY: both ranges are `size` bytes of live host memory (this device's memory is host memory).
            unsafe {
                let (host, tgt) = (begin as *mut u8, tgt as usize as *mut u8);
                if ty.any(MapType::TO) {
                    std::ptr::copy(host, tgt, size as usize);
                }
                if ty.any(MapType::FROM) {
                    std::ptr::copy(tgt, host, size as usize);
                }
            }
            drop(held);
            continue;
        }
        // SAFETY: as above; the plugin copies.
        let copied = unsafe { plugin_update_copy(dev, begin, tgt, size, ty) };
        drop(held);
        if !copied {
            return false;
        }
    }
    true
}

/// [`update_fast`]'s copies of one list item through the plugin (device
/// memory that is not host memory): `to`, then `from`; false when the plugin
/// refuses one. Out of line, so that the host plugin's copy under the
/// look-up's lock stays inline.
///
/// # Safety
/// `[begin, begin+size)` is host memory of the program's list item and
/// `tgt` the device address of its mapping, which stays allocated during
/// the call.
#[cold]
#[inline(never)]
unsafe fn plugin_update_copy(dev: &crate::device::Device, begin: usize, tgt: u64, size: u64, ty: MapType) -> bool {
    // SAFETY: forwarded contract.
    unsafe {
        (!ty.any(MapType::TO) || dev.plugin.submit(dev.plugin_device, tgt, begin, size).is_ok())
            && (!ty.any(MapType::FROM) || dev.plugin.retrieve(dev.plugin_device, begin, tgt, size).is_ok())
    }
}

/// `target enter data` (`enter`) / `target exit data` for the common case,
/// with the general path's result: one list item (`to` or `alloc` on entry,
/// `from` or `release` at exit; no other bit, no mapper) that is mapped
/// already, on a ready device whose plugin copies synchronously, with
/// nothing else to do ([`crate::base::fast_path`] is zero). Entering takes a
/// reference of a live entry, exiting drops one that is not the last: no
/// copy, no allocation, no removal (`data::plain_count_step`). Returns
/// false, having done nothing, for anything else.
///
/// # Safety
/// Each non-NULL array of `raw` holds `raw.num` elements.
#[inline(always)]
unsafe fn enter_exit_fast(device_id: i64, raw: &RawArgs, enter: bool) -> bool {
    if !crate::base::fast_path::allowed()
        || raw.num != 1
        || raw.begins.is_null()
        || raw.sizes.is_null()
        || raw.types.is_null()
        || !(raw.begins as usize | raw.sizes as usize | raw.types as usize | raw.mappers as usize).is_multiple_of(8)
    {
        return false;
    }
    // SAFETY: the arrays are non-NULL, aligned and hold one element (checked above and the caller's contract).
    let (begin, size, ty) = unsafe { (*raw.begins as usize, *raw.sizes, *raw.types as u64) };
    // SAFETY: as above; a NULL mappers array means no mappers.
    let mapper = if raw.mappers.is_null() { 0 } else { unsafe { *raw.mappers as usize } };
    let motion = if enter { MapType::TO } else { MapType::FROM };
    if size <= 0 || begin == 0 || mapper != 0 || ty & !motion != 0 {
        return false;
    }
    let rt = openmp::get();
    let id = if device_id == -1 { crate::base::libomp::default_device() as i64 } else { device_id };
    let Some(dev) = rt.device_ready(id) else { return false };
    !dev.queued && data::plain_count_step(dev, begin, size as u64, enter)
}

/// Map-entering construct (`target data` begin, `target enter data`) with mappers (the form clang emits).
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_begin_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_begin_mapper(
    loc: *mut ident_t,
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
) {
    let raw = RawArgs::new(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // A panic in the fast path (none is possible) is reported and the
    // general path runs.
    // SAFETY: forwarded contract.
    if super::boundary::fast_path("__tgt_target_data_begin_mapper", || unsafe { enter_exit_fast(device_id, &raw, true) }) {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { target_data("__tgt_target_data_begin_mapper", loc, device_id, raw, DataOp::Begin, false) }
}

/// Map-entering construct (`target data` begin, `target enter data`), `nowait` form: the compiler wraps it in a target task that
/// carries the dependences. On a plugin with queues the work not finished
/// by the end of the call is parked in the task and completed by
/// `__tgt_target_nowait_query`.
///
/// # Safety
/// As [`__tgt_target_data_begin_mapper`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_begin_nowait_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_begin_nowait_mapper(
    loc: *mut ident_t,
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) {
    let raw = RawArgs::new(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // A panic in the fast path (none is possible) is reported and the
    // general path runs.
    // SAFETY: forwarded contract.
    if super::boundary::fast_path("__tgt_target_data_begin_nowait_mapper", || unsafe { enter_exit_fast(device_id, &raw, true) }) {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { target_data("__tgt_target_data_begin_nowait_mapper", loc, device_id, raw, DataOp::Begin, true) }
}

/// Map-entering construct (`target data` begin, `target enter data`), legacy form without location, names and mappers.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_begin")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_begin(
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
) {
    let null = core::ptr::null_mut();
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_data_begin_mapper(null, device_id, arg_num, args_base, args, arg_sizes, arg_types, null.cast(), null.cast()) }
}

/// Map-entering construct (`target data` begin, `target enter data`), legacy `nowait` form; dependences ignored.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_begin_nowait")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_begin_nowait(
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_data_begin(device_id, arg_num, args_base, args, arg_sizes, arg_types) }
}

/// Map-exiting construct (`target data` end, `target exit data`) with mappers (the form clang emits).
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_end_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_end_mapper(
    loc: *mut ident_t,
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
) {
    let raw = RawArgs::new(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // A panic in the fast path (none is possible) is reported and the
    // general path runs.
    // SAFETY: forwarded contract.
    if super::boundary::fast_path("__tgt_target_data_end_mapper", || unsafe { enter_exit_fast(device_id, &raw, false) }) {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { target_data("__tgt_target_data_end_mapper", loc, device_id, raw, DataOp::End, false) }
}

/// Map-exiting construct (`target data` end, `target exit data`), `nowait` form: the compiler wraps it in a target task that
/// carries the dependences. On a plugin with queues the work not finished
/// by the end of the call is parked in the task and completed by
/// `__tgt_target_nowait_query`.
///
/// # Safety
/// As [`__tgt_target_data_end_mapper`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_end_nowait_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_end_nowait_mapper(
    loc: *mut ident_t,
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) {
    let raw = RawArgs::new(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // A panic in the fast path (none is possible) is reported and the
    // general path runs.
    // SAFETY: forwarded contract.
    if super::boundary::fast_path("__tgt_target_data_end_nowait_mapper", || unsafe { enter_exit_fast(device_id, &raw, false) }) {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { target_data("__tgt_target_data_end_nowait_mapper", loc, device_id, raw, DataOp::End, true) }
}

/// Map-exiting construct (`target data` end, `target exit data`), legacy form without location, names and mappers.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_end")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_end(
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
) {
    let null = core::ptr::null_mut();
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_data_end_mapper(null, device_id, arg_num, args_base, args, arg_sizes, arg_types, null.cast(), null.cast()) }
}

/// Map-exiting construct (`target data` end, `target exit data`), legacy `nowait` form; dependences ignored.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_end_nowait")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_end_nowait(
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_data_end(device_id, arg_num, args_base, args, arg_sizes, arg_types) }
}

/// `target update` with mappers (the form clang emits).
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_update_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_update_mapper(
    loc: *mut ident_t,
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
) {
    let raw = RawArgs::new(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // A panic in the fast path (none is possible) is reported and the
    // general path runs.
    // SAFETY: forwarded contract.
    if super::boundary::fast_path("__tgt_target_data_update_mapper", || unsafe { update_fast(device_id, &raw) }) {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { target_data("__tgt_target_data_update_mapper", loc, device_id, raw, DataOp::Update, false) }
}

/// `target update`, `nowait` form: the compiler wraps it in a target task that
/// carries the dependences. On a plugin with queues the work not finished
/// by the end of the call is parked in the task and completed by
/// `__tgt_target_nowait_query`.
///
/// # Safety
/// As [`__tgt_target_data_update_mapper`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_update_nowait_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_update_nowait_mapper(
    loc: *mut ident_t,
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) {
    let raw = RawArgs::new(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // A panic in the fast path (none is possible) is reported and the
    // general path runs.
    // SAFETY: forwarded contract.
    if super::boundary::fast_path("__tgt_target_data_update_nowait_mapper", || unsafe { update_fast(device_id, &raw) }) {
        return;
    }
    // SAFETY: forwarded contract.
    unsafe { target_data("__tgt_target_data_update_nowait_mapper", loc, device_id, raw, DataOp::Update, true) }
}

/// `target update`, legacy form without location, names and mappers.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_update")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_update(
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
) {
    let null = core::ptr::null_mut();
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_data_update_mapper(null, device_id, arg_num, args_base, args, arg_sizes, arg_types, null.cast(), null.cast()) }
}

/// `target update`, legacy `nowait` form; dependences ignored.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_data_update_nowait")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_data_update_nowait(
    device_id: i64,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_data_update(device_id, arg_num, args_base, args, arg_sizes, arg_types) }
}

/// Checks a mapper handle received from C.
///
/// # Safety
/// `handle` is NULL or points to a mapper handle (a component vector) that
/// the running mapper alone uses.
unsafe fn components<'a>(handle: *mut c_void) -> Result<&'a mut MapperComponents> {
    // SAFETY: forwarded contract.
    unsafe { MapperComponents::from_handle(handle) }
}

/// Number of components a mapper has pushed so far.
///
/// # Safety
/// `rt_mapper_handle` is the handle the runtime passed to the running mapper.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_mapper_num_components(rt_mapper_handle: *mut c_void) -> i64 {
    value_entry("__tgt_mapper_num_components", 0, || {
        // SAFETY: forwarded contract.
        Ok(unsafe { components(rt_mapper_handle)? }.len() as i64)
    })
}

/// Appends one component to a mapper's list.
///
/// # Safety
/// `rt_mapper_handle` is the handle the runtime passed to the running mapper.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_push_mapper_component(
    rt_mapper_handle: *mut c_void,
    base: *mut c_void,
    begin: *mut c_void,
    size: i64,
    ty: i64,
    name: *mut c_void,
) {
    void_entry("__tgt_push_mapper_component", || {
        // SAFETY: forwarded contract.
        let c = unsafe { components(rt_mapper_handle)? };
        c.push(MapComponent { base, begin, size, ty, name })
    })
}
