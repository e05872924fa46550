//! The OpenMP constructs as the compiler calls them: `target data` /
//! `enter data` / `exit data` / `update` ([`data`]) and target regions
//! ([`kernel`]), each with its fast path for the common case (checked
//! first, with the general path's result, or declined having done nothing)
//! and its general path, inside the panic guard. The C face
//! (`crate::c_api::openmp`) only turns its arguments into these calls.

use super::args::{ArgBuf, RawArgs};
use super::async_info::{AsyncInfo, TaskQuery};
use super::data;
use super::launch::{self, LaunchRequest};
use crate::abi::ptr::Loc;
use crate::abi::{self, __tgt_kernel_arguments, MapType, ident_t, map_var_info_t};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::base::guard::{int_entry, void_entry};
use crate::openmp;
use core::ffi::c_void;

/// Launches the kernel registered for `host_ptr` (its region id): the fast
/// path where it applies, else the general path. 0 when the region ran on
/// the device; -1 tells the caller to run the host version (offloading
/// disabled, the initial device, or no devices). Failures during an offload
/// attempt abort as LLVM 22.1 does.
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; `args` points to a kernel-arguments
/// struct of its declared version whose arrays hold `NumArgs` elements.
#[inline(always)]
pub unsafe fn kernel(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
) -> i32 {
    int_entry("__tgt_target_kernel", || {
        // SAFETY: `launch_fast` has this function's contract (loc NULL or valid, args a struct of its version with NumArgs-long arrays), which the caller gives; it checks args for NULL and alignment itself.
        if let Some(rc) = unsafe { launch_fast(loc, device_id, num_teams, host_ptr, args) } {
            return Ok(rc);
        }
        // SAFETY: forwarded contract.
        unsafe { target_kernel_body(loc, device_id, num_teams, thread_limit, host_ptr, args, None) }
    })
}

/// `__tgt_target_nowait_query`: polls a target task's parked asynchronous
/// work (see `AsyncInfo::finish`); when it has completed, runs its clean-up,
/// frees the handle and clears the slot, which tells libomp the task is done.
///
/// # Safety
/// `async_handle` is NULL or points to the task's handle slot.
pub unsafe fn nowait_query(async_handle: *mut *mut c_void) {
    void_entry("__tgt_target_nowait_query", || {
        let invalid =
            || -> ! { diag::fatal(1, "Receive an invalid async handle from the current OpenMP task. Is this a target nowait region?") };
        // SAFETY: NULL/misalignment are rejected; otherwise the slot is the calling task's.
        let slot = unsafe { crate::abi::ptr::slice(async_handle as *const *mut c_void, 1, "async handle") }.unwrap_or_else(|_| invalid());
        if slot[0].is_null() {
            invalid();
        }
        // SAFETY: non-NULL, aligned slot owned by the calling task.
        let slot = unsafe { &mut *async_handle };
        match super::async_info::query_task_handle(slot) {
            Ok(TaskQuery::Pending | TaskQuery::Done) => Ok(()),
            Ok(TaskQuery::Invalid) => invalid(),
            Err(e) => {
                diag::report(&e.to_string());
                diag::fatal(1, "Error while querying the async queue for completion.")
            }
        }
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum DataOp {
    Begin,
    End,
    Update,
}

/// `targetData`: checks the device, runs one data operation, applies the policy.
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; `raw` satisfies [`RawArgs::read`].
#[inline(always)] // Once per export, with `op` and `nowait` constants.
pub unsafe fn target_data(name: &'static str, loc: *const ident_t, device_id: i64, raw: RawArgs, op: DataOp, nowait: bool) {
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
pub unsafe fn update_fast(device_id: i64, raw: &RawArgs) -> bool {
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
pub unsafe fn enter_exit_fast(device_id: i64, raw: &RawArgs, enter: bool) -> bool {
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

/// The first 64 bytes every kernel-arguments version has.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelArgsV1 {
    version: u32,
    num_args: u32,
    bases: *mut *mut c_void,
    begins: *mut *mut c_void,
    sizes: *mut i64,
    types: *mut i64,
    names: *mut *mut c_void,
    mappers: *mut *mut c_void,
    tripcount: u64,
}
const _: () = assert!(size_of::<KernelArgsV1>() == abi::KERNEL_ARGS_V1_SIZE);

/// Reads a kernel-arguments struct of any version into a request upgraded
/// the way 22.1's `upgradeKernelArgs` does, applying its write-backs
/// (`NumTeams[0] = 1` for `-1`, zero dims 1/2 become 1) to the caller's struct.
///
/// # Safety
/// `args` points to a kernel-arguments struct of the version it declares,
/// writable for Version >= 2.
///
/// Always inlined: the fuzz harness is a second caller, and without the
/// attribute the launch path calls it out of line (+40 instructions per region).
#[inline(always)]
unsafe fn read_kernel_args<'a>(
    args: *mut __tgt_kernel_arguments,
    num_teams: i32,
    thread_limit: i32,
    map_args: &'a mut ArgBuf,
) -> Result<LaunchRequest<'a>> {
    if args.is_null() || !(args as usize).is_multiple_of(8) {
        return Err(OffloadError::InvalidArgument("kernel arguments pointer is NULL or misaligned".into()));
    }
    // SAFETY: every version starts with these 64 bytes (caller's contract).
    let head = unsafe { *(args as *const KernelArgsV1) };
    let raw = RawArgs {
        num: i32::try_from(head.num_args).map_err(|_| OffloadError::InvalidArgument(format!("NumArgs {} too large", head.num_args)))?,
        bases: head.bases,
        begins: head.begins,
        sizes: head.sizes,
        types: head.types,
        names: head.names as *mut map_var_info_t,
        mappers: head.mappers,
    };
    // SAFETY: the arrays hold NumArgs elements (caller's contract).
    let map_args = unsafe { raw.read_into(map_args)? };
    let unspecified = |v: i32| if v < 0 { 0 } else { v as u32 };
    let mut req = if head.version >= 2 {
        // SAFETY: Version >= 2 structs are the full 104 bytes and writable.
        let full = unsafe { &mut *args };
        upgrade_dims(full, num_teams);
        if head.version > 3 {
            crate::debug!("kernel arguments version {} is newer than 3; used as version 3", head.version);
        }
        LaunchRequest {
            version: head.version,
            args: map_args,
            tripcount: head.tripcount,
            flags: full.Flags,
            num_teams: full.NumTeams,
            thread_limit: full.ThreadLimit,
            dyn_cgroup_mem: full.DynCGroupMem,
        }
    } else {
        // Versions 0 and 1 end after Tripcount: their Flags are never read.
        LaunchRequest {
            version: head.version,
            args: map_args,
            tripcount: head.tripcount,
            flags: 0,
            num_teams: [if num_teams == -1 { 1 } else { unspecified(num_teams) }, 1, 1],
            thread_limit: [unspecified(thread_limit), 1, 1],
            dyn_cgroup_mem: 0,
        }
    };
    let unknown = req.flags & !(abi::KERNEL_FLAGS_KNOWN | abi::KERNEL_FLAG_STRICT_BLOCKS);
    if unknown != 0 {
        crate::debug!("kernel arguments: ignoring unknown flag bits {unknown:#x}");
        req.flags &= !unknown;
    }
    Ok(req)
}

/// 22.1's `upgradeKernelArgs` write-backs into a version >= 2 struct:
/// `NumTeams[0]` becomes 1 when the launch's `num_teams` is -1, and a zero
/// y or z dimension of the grid or the block becomes 1.
#[inline(always)]
fn upgrade_dims(ka: &mut __tgt_kernel_arguments, num_teams: i32) {
    if num_teams == -1 {
        ka.NumTeams[0] = 1;
    }
    for d in 1..3 {
        if ka.NumTeams[d] == 0 {
            ka.NumTeams[d] = 1;
        }
        if ka.ThreadLimit[d] == 0 {
            ka.ThreadLimit[d] = 1;
        }
    }
}

/// The fuzz harness of [`read_kernel_args`] (`crate::fuzzing::kernel_args`):
/// `data` is a kernel-arguments struct's 104 bytes (zero-padded) followed by
/// the arrays' contents. `NumArgs` above `i32::MAX` is kept (it must be
/// rejected before any array is read); others are reduced below 600 and each
/// array gets that many elements, with its pointer field, by its low two bits,
/// replaced by a pointer to them, NULL, or that pointer plus one (misaligned).
#[doc(hidden)]
pub fn fuzz_kernel_args(data: &[u8]) {
    let mut head = [0u8; size_of::<__tgt_kernel_arguments>()];
    let n = data.len().min(head.len());
    head[..n].copy_from_slice(&data[..n]);
    let tail = &data[n..];
    // SAFETY: the struct is plain integers and raw pointers; every bit pattern is valid.
    let mut ka: __tgt_kernel_arguments = unsafe { core::mem::transmute(head) };
    let num = if ka.NumArgs > i32::MAX as u32 { 0 } else { ka.NumArgs as usize % 600 };
    if ka.NumArgs <= i32::MAX as u32 {
        ka.NumArgs = num as u32;
    }
    let word = |i: usize| -> u64 {
        if tail.is_empty() {
            return 0;
        }
        let mut b = [0u8; 8];
        for (k, v) in b.iter_mut().enumerate() {
            *v = tail[(i * 8 + k) % tail.len()];
        }
        u64::from_le_bytes(b)
    };
    // One extra element so that a misaligned pointer stays inside the array.
    let mut arrays: Vec<Vec<u64>> = (0..6).map(|a| (0..=num).map(|i| word(a * num + i)).collect()).collect();
    let fields: [&mut *mut c_void; 6] = [
        void_field(&mut ka.ArgBasePtrs),
        void_field(&mut ka.ArgPtrs),
        void_field(&mut ka.ArgSizes),
        void_field(&mut ka.ArgTypes),
        void_field(&mut ka.ArgNames),
        void_field(&mut ka.ArgMappers),
    ];
    for (f, arr) in fields.into_iter().zip(arrays.iter_mut()) {
        let p = arr.as_mut_ptr() as *mut u8;
        *f = match (*f as usize) & 3 {
            1 => core::ptr::null_mut(),
            2 => p.wrapping_add(1).cast(),
            _ => p.cast(),
        };
    }
    let teams = i32::from_le_bytes(head[72..76].try_into().expect("invariant: 4 bytes"));
    let threads = i32::from_le_bytes(head[84..88].try_into().expect("invariant: 4 bytes"));
    let mut buf = ArgBuf::new();
    // `ka` is a full, writable 104-byte struct whose non-NULL arrays hold
    // `NumArgs` elements (plus one, for the misaligned case).
    // SAFETY: so it is the struct of its declared version that read_kernel_args needs.
    if let Ok(req) = unsafe { read_kernel_args(&mut ka, teams, threads, &mut buf) } {
        assert_eq!(req.args.len(), num, "argument count");
        assert!(req.version >= 2 || req.flags == 0, "flags of a version 0/1 struct");
    }
}

/// The pointer fields of [`__tgt_kernel_arguments`] as `*mut c_void`.
fn void_field<T>(f: &mut *mut T) -> &mut *mut c_void {
    // SAFETY: `*mut T` and `*mut c_void` have the same size and layout.
    unsafe { &mut *(f as *mut *mut T as *mut *mut c_void) }
}

/// Most arguments the fast path passes (`dyn_ptr` and the literals).
const FAST_PARAMS: usize = crate::plugins::PLAIN_LAUNCH_SLOTS;

/// `__tgt_target_kernel` for the common case, with the general path's
/// result: a kernel-arguments struct of version 3 whose arguments are
/// passed by value (`firstprivate`/`is_device_ptr` scalars, which clang
/// passes as `LITERAL | TARGET_PARAM`) or are plain `to`/`from`/`tofrom`/
/// `alloc` parameters already mapped (no `always`, `present`, `close`,
/// `delete`, hold, mapper, member or pointer entry; the entry found holds
/// the whole item and has no attached pointers), at most 15 of them, a
/// device whose plugin runs kernels synchronously (the host plugin), and
/// nothing else to do ([`crate::base::fast_path`]: no INFO, debug, tool, profile
/// or recording, and the policy settled). Everything it does is what the
/// general path does for such a region: the `upgradeKernelArgs`
/// write-backs, one reference taken on each mapped item's entry (nothing
/// copied: the entry is not new), the implicit `dyn_ptr` (~0), the
/// parameters (literals, device addresses of the mapped items' bases), the
/// launch, the references given back in reverse order (an item whose count
/// would reach zero meanwhile, because another thread unmapped it, gets the
/// general end step: copy back, removal), and the parameter count written
/// into `NumArgs`. `None` whenever anything differs (an item not mapped,
/// the initial device, a device that has to load an image first, a kernel
/// missing from its image): then the references taken are given back and
/// the general path runs the construct from the start.
///
/// # Safety
/// As [`__tgt_target_kernel`].
#[inline(always)]
unsafe fn launch_fast(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
) -> Option<i32> {
    if !crate::base::fast_path::allowed() || args.is_null() || !(args as usize).is_multiple_of(8) {
        return None;
    }
    // SAFETY: non-NULL and aligned; every version starts with the 4-byte Version.
    if unsafe { *(args as *const u32) } != abi::KERNEL_ARGS_MIN_VERSION_WITH_DYN_PTR {
        return None;
    }
    // SAFETY: a version 3 struct is the full 104 bytes and writable (caller's contract).
    let ka = unsafe { &mut *args };
    let n = ka.NumArgs as usize;
    // rustc's `Flags` bit 6 (StrictBlocksAndThreads, LLVM main) changes
    // nothing here: 22.1 ignores it and launches the grid it is given.
    if n >= FAST_PARAMS || ka.Flags & !(abi::KERNEL_FLAG_NOWAIT | abi::KERNEL_FLAG_STRICT_BLOCKS) != 0 {
        return None;
    }
    let (bases, begins, sizes, types, mappers) = (ka.ArgBasePtrs, ka.ArgPtrs, ka.ArgSizes, ka.ArgTypes, ka.ArgMappers);
    let mut params = [u64::MAX; FAST_PARAMS];
    // Bit i: argument i is a mapped item (its parameter is filled in below).
    let mut mapped = 0u32;
    if n > 0 {
        if bases.is_null()
            || sizes.is_null()
            || types.is_null()
            || !(bases as usize | sizes as usize | types as usize | mappers as usize).is_multiple_of(8)
        {
            return None;
        }
        const BY_VALUE: u64 = MapType::LITERAL | MapType::TARGET_PARAM;
        const MOTION: u64 = MapType::TO | MapType::FROM;
        for i in 0..n {
            // SAFETY: `types` and `sizes` were checked non-NULL and 8-aligned above, they hold NumArgs elements (caller's contract), and i < NumArgs.
            let (ty, size) = unsafe { (*types.add(i) as u64 & !MapType::IMPLICIT, *sizes.add(i)) };
            // SAFETY: as above; a NULL mappers array means no mappers.
            let mapper = if mappers.is_null() { 0 } else { unsafe { *mappers.add(i) as usize } };
            if mapper != 0 {
                return None;
            }
            if ty == BY_VALUE && size >= 0 {
                // SAFETY: as above.
                params[i + 1] = unsafe { *bases.add(i) } as u64;
            } else if ty & !MOTION == MapType::TARGET_PARAM && size > 0 {
                mapped |= 1 << i;
            } else {
                return None;
            }
        }
        if mapped != 0 && (begins.is_null() || !(begins as usize).is_multiple_of(8)) {
            return None;
        }
    }
    let rt = openmp::get();
    let id = if device_id == -1 { crate::base::libomp::default_device() as i64 } else { device_id };
    let dev = rt.device_ready(id)?;
    if !dev.plain_launch {
        return None;
    }
    let kernel = dev.launch_handle(host_ptr as usize)?;
    if mapped != 0 {
        // SAFETY: forwarded contract; `mapped` names items of the checked arrays, `begins` among them.
        return unsafe { launch_fast_mapped(loc, dev, kernel, ka, num_teams, &mut params, mapped) };
    }
    launch_plain(dev, kernel, ka, num_teams, &params).then_some(abi::OFFLOAD_SUCCESS)
}

/// The launch itself for the fast paths: the `upgradeKernelArgs`
/// write-backs, the kernel run to completion with `dyn_ptr` and the
/// `NumArgs` parameters of `params`, and the parameter count written into
/// `NumArgs`. False, having launched nothing, when the plugin cannot launch
/// this way.
#[inline(always)]
fn launch_plain(
    dev: &crate::openmp::device::OmpDevice,
    kernel: crate::plugins::KernelHandle,
    ka: &mut __tgt_kernel_arguments,
    num_teams: i32,
    params: &[u64; FAST_PARAMS],
) -> bool {
    let n = ka.NumArgs as usize;
    upgrade_dims(ka, num_teams);
    let dims = crate::plugins::LaunchDims {
        teams: ka.NumTeams,
        threads: ka.ThreadLimit,
        dyn_shared_bytes: ka.DynCGroupMem,
        tripcount: ka.Tripcount,
    };
    if !dev.plugin.launch_plain(dev.plugin_device, kernel, params, n + 1, &dims) {
        return false;
    }
    ka.NumArgs = n as u32 + 1;
    true
}

/// [`launch_fast`] for a region with mapped items (bit i of `mapped`: item
/// i), out of line so that the regions without any keep a small frame.
/// Each item in order: an entry already mapped gets one more reference
/// (under its shard's read lock, kept across items of the same shard) and
/// is kept for the end step; any other item gets the general begin step on
/// its own (a new mapping: allocation, copy in). Its parameter is the
/// device address of its base. Then the launch, and the end steps in
/// reverse order: a reference given back, or the general end step for an
/// item that got the general begin step or whose count reaches zero
/// meanwhile (copy back, removal). A failing general step is reported and
/// ends the construct as the general path's failure does.
///
/// # Safety
/// As [`__tgt_target_kernel`]; `ka`'s arrays were checked by
/// [`launch_fast`] (non-NULL, aligned, `ArgPtrs` among them) and hold
/// `NumArgs` elements; `mapped` has bits below `NumArgs` only.
#[inline(never)]
unsafe fn launch_fast_mapped(
    loc: *mut ident_t,
    dev: &'static crate::openmp::device::OmpDevice,
    kernel: crate::plugins::KernelHandle,
    ka: &mut __tgt_kernel_arguments,
    num_teams: i32,
    params: &mut [u64; FAST_PARAMS],
    mapped: u32,
) -> Option<i32> {
    use openmp::data::{MapArg, region_ref_drop, region_ref_drop_general, region_ref_take, region_ref_take_general};
    use openmp::mapping::MapEntry;
    use std::sync::Arc;
    let (bases, begins, sizes, types) = (ka.ArgBasePtrs, ka.ArgPtrs, ka.ArgSizes, ka.ArgTypes);
    // The mapped item `i` as the general steps see it.
    let item = |i: usize| {
        // SAFETY: i < NumArgs and the arrays are checked (see the contract).
        let (base, begin, size, ty) = unsafe { (*bases.add(i), *begins.add(i), *sizes.add(i), *types.add(i)) };
        MapArg::new(base as usize, begin as usize, size, MapType(ty as u64), 0, 0)
    };
    // The construct's failure, as the general path ends it (fatal under the
    // mandatory policy that the fast path requires).
    let fail = |begin: bool| {
        if begin {
            diag::report("Call to targetDataBegin failed, abort target.");
            diag::report("Failed to process data before launching the kernel.");
        } else {
            diag::report("Call to targetDataEnd failed, abort target.");
            diag::report("Failed to process data after launching the kernel.");
        }
        // SAFETY: `loc` is NULL or a valid `ident_t` (caller's contract).
        openmp::get().handle_outcome(false, &unsafe { Loc::new(loc) });
        Some(abi::OFFLOAD_SUCCESS)
    };
    // Bit i of `taken`: item i has had its begin step; `held[i]` is its
    // entry (`Arc::into_raw`) when it got a reference here, NULL when it got
    // the general begin step.
    let mut held = [core::ptr::null::<MapEntry>(); FAST_PARAMS];
    let mut taken = 0u32;
    let mut reader = dev.table.reader();
    let mut rest = mapped;
    while rest != 0 {
        // `mapped` has bits below NumArgs < FAST_PARAMS only: the mask
        // changes nothing and spares the bounds checks.
        let i = rest.trailing_zeros() as usize & (FAST_PARAMS - 1);
        rest &= rest - 1;
        // SAFETY: i < NumArgs and the arrays are checked (see the contract).
        let (base, begin, size) = unsafe { (*bases.add(i) as usize, *begins.add(i) as usize, *sizes.add(i) as u64) };
        let found = if begin == 0 { None } else { region_ref_take(&mut reader, begin, size) };
        let tgt = match found {
            Some((tgt, entry)) => {
                held[i] = Arc::into_raw(entry);
                tgt
            }
            None if ka.Flags & abi::KERNEL_FLAG_STRICT_BLOCKS != 0 => {
                // rustc's shape with an item not mapped here: the general
                // path checks whether its data mappers put it on another
                // device. The references taken so far are given back first.
                drop(reader);
                let mut rest = taken;
                while rest != 0 {
                    let j = (31 - rest.leading_zeros() as usize) & (FAST_PARAMS - 1);
                    rest &= !(1 << j);
                    let p = held[j];
                    // SAFETY: every item taken so far got a reference here (`held[j]` from `Arc::into_raw`), visited once.
                    if !region_ref_drop(unsafe { Arc::from_raw(p) }) && region_ref_drop_general(dev, &item(j)).is_err() {
                        return fail(false);
                    }
                }
                return None;
            }
            None => {
                // The general step may take write locks.
                reader.release();
                match region_ref_take_general(openmp::get(), dev, item(i)) {
                    Ok(tgt) => tgt,
                    // As the general path, the steps done keep their references.
                    Err(_) => return fail(true),
                }
            }
        };
        taken |= 1 << i;
        params[(i + 1) & (FAST_PARAMS - 1)] = tgt.wrapping_add(base.wrapping_sub(begin) as u64);
    }
    drop(reader);
    // `dev.plain_launch`: the plugin launches every argument count passed here.
    let launched = launch_plain(dev, kernel, ka, num_teams, params);
    // The end steps, in reverse order.
    let mut rest = taken;
    while rest != 0 {
        let i = (31 - rest.leading_zeros() as usize) & (FAST_PARAMS - 1);
        rest &= !(1 << i);
        let p = held[i];
        // SAFETY: a non-NULL `held[i]` received `Arc::into_raw` of the entry, and each bit is visited once.
        if !p.is_null() && region_ref_drop(unsafe { Arc::from_raw(p) }) {
            continue;
        }
        if region_ref_drop_general(dev, &item(i)).is_err() {
            // The rest keep their references, as after the general path's
            // failed end step; their entries stay alive.
            return fail(false);
        }
    }
    if !launched {
        diag::report("Executing target region abort target.");
        return fail(true);
    }
    Some(abi::OFFLOAD_SUCCESS)
}

/// The contexts of a handle from `__tgt_async_info_create`, one per device used.
pub type HandleContexts = parking_lot::Mutex<Vec<AsyncInfo>>;

/// `__tgt_target_kernel`'s body. With `handle` the launch's work is queued
/// in the handle's context for its device and completed by
/// `__tgt_async_info_synchronize`; without, it completes here (or, for a
/// `nowait` struct, in the target task).
///
/// # Safety
/// As [`__tgt_target_kernel`].
#[allow(clippy::too_many_arguments)] // The entry point's arguments plus the handle.
pub unsafe fn target_kernel(
    name: &'static str,
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
    handle: Option<&HandleContexts>,
) -> i32 {
    // SAFETY: forwarded contract.
    int_entry(name, || unsafe { target_kernel_body(loc, device_id, num_teams, thread_limit, host_ptr, args, handle) })
}

/// [`target_kernel`]'s body, inside the panic guard.
///
/// # Safety
/// As [`__tgt_target_kernel`].
#[inline(always)]
unsafe fn target_kernel_body(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
    handle: Option<&HandleContexts>,
) -> Result<i32> {
    {
        // SAFETY: forwarded contract.
        let src = unsafe { Loc::new(loc) };
        let rt = openmp::get();
        let Some(id) = rt.check_device(device_id, &src) else {
            crate::debug!("__tgt_target_kernel: not offloading to device {device_id}");
            return Ok(abi::OFFLOAD_FAIL);
        };
        let mut map_args = ArgBuf::new();
        // SAFETY: forwarded contract.
        let mut req = unsafe { read_kernel_args(args, num_teams, thread_limit, &mut map_args)? };
        // LLVM lists the arguments before `getDevice`, which loads pending images
        // (their INFO lines, e.g. indirect-function reads, come after the list).
        openmp::launch::print_args(
            id as usize,
            || format!("Entering OpenMP kernel at {} with {} arguments:", src.source(), req.args.len()),
            req.args,
        );
        let dev = rt.device_or_fatal(id);
        // The tool interfaces cost this flag test and the ones below.
        if crate::tools::ompt::hooks() {
            // By value: a borrow would keep `req` and `src` in memory on the fast path.
            let (at, teams, nargs) = (src, req.num_teams[0], req.args.len());
            let detail = move || format!("{}NumTeams={teams};NumArgs={nargs}", crate::tools::profile::source_detail(&at.source()));
            crate::tools::ompt::construct_begin(crate::tools::ompt::Kind::Region, id, host_ptr as usize, "Runtime: target exe", &detail);
        }
        crate::debug!(
            "__tgt_target_kernel: region {:#x} on device {id}, version {}, {} args, teams {:?}, threads {:?}",
            host_ptr as usize,
            req.version,
            req.args.len(),
            req.num_teams,
            req.thread_limit
        );
        let rc = match handle {
            Some(contexts) => {
                let mut contexts = contexts.lock();
                let i = match contexts.iter().position(|c| c.dev.id == dev.id) {
                    Some(i) => i,
                    None => {
                        contexts.push(AsyncInfo::new(dev));
                        contexts.len() - 1
                    }
                };
                rt.launch(&mut contexts[i], host_ptr as usize, &mut req)
            }
            None => {
                let nowait = req.flags & abi::KERNEL_FLAG_NOWAIT != 0;
                let mut q = AsyncInfo::new(dev);
                // Waits for the queued work, or parks it in the target task (nowait).
                // A match, not `and_then`: a closure would move `q` into its environment.
                match rt.launch(&mut q, host_ptr as usize, &mut req) {
                    Ok(out) => match q.finish(nowait) {
                        Ok(()) => Ok(out),
                        Err(e) => {
                            diag::report(&e.to_string());
                            Err(e)
                        }
                    },
                    Err(e) => Err(e),
                }
            }
        };
        if let Ok(out) = &rc
            && req.version >= 2
        {
            // SAFETY: Version >= 2 structs are writable (checked in read_kernel_args).
            unsafe { (*args).NumArgs = out.kernel_params };
        }
        rt.handle_outcome(rc.is_ok(), &src);
        // Re-read, not kept: the flag is set before any construct runs.
        if crate::tools::ompt::hooks() {
            crate::tools::ompt::construct_end();
        }
        Ok(abi::OFFLOAD_SUCCESS)
    }
}
