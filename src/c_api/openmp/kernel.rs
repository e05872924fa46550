//! Kernel launch: `__tgt_target_kernel` and the legacy `__tgt_target*` forms
//! that forward to it (abi-reference §4).

use super::boundary::{int_entry, void_entry};
use super::data::RawArgs;
use crate::abi::ptr::Loc;
use crate::abi::{self, __tgt_kernel_arguments, MapType, ident_t, map_var_info_t};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::openmp::async_info::{AsyncInfo, TaskQuery};
use crate::openmp::{self, launch::LaunchRequest};
use core::ffi::c_void;

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
    map_args: &'a mut super::data::ArgBuf,
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
    let mut buf = super::data::ArgBuf::new();
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

/// Launches the kernel registered for `host_ptr` (its region id).
///
/// Returns 0 when the region ran on the device; -1 tells the caller to run
/// the host version (offloading disabled, the initial device, or no devices).
/// Failures during an offload attempt abort as LLVM 22.1 does.
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; `args` points to a kernel-arguments
/// struct of its declared version whose arrays hold `NumArgs` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_kernel")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_kernel(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
) -> i32 {
    int_entry("__tgt_target_kernel", || {
        // SAFETY: `launch_fast` has this function's contract (loc NULL or
        // valid, args a struct of its version with NumArgs-long arrays),
        // which the caller gives; it checks args for NULL and alignment itself.
        if let Some(rc) = unsafe { launch_fast(loc, device_id, num_teams, host_ptr, args) } {
            return Ok(rc);
        }
        // SAFETY: forwarded contract.
        unsafe { target_kernel_body(loc, device_id, num_teams, thread_limit, host_ptr, args, None) }
    })
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
    if n >= FAST_PARAMS || ka.Flags & !abi::KERNEL_FLAG_NOWAIT != 0 {
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
            // SAFETY: `types` and `sizes` were checked non-NULL and 8-aligned
            // above, they hold NumArgs elements (caller's contract), and i < NumArgs.
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
pub(crate) type HandleContexts = parking_lot::Mutex<Vec<AsyncInfo>>;

/// `__tgt_target_kernel`'s body. With `handle` the launch's work is queued
/// in the handle's context for its device and completed by
/// `__tgt_async_info_synchronize`; without, it completes here (or, for a
/// `nowait` struct, in the target task).
///
/// # Safety
/// As [`__tgt_target_kernel`].
#[allow(clippy::too_many_arguments)] // The entry point's arguments plus the handle.
pub(crate) unsafe fn target_kernel(
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
        let mut map_args = super::data::ArgBuf::new();
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

/// Legacy `nowait` launch; the dependences are carried by the enclosing task.
///
/// # Safety
/// As [`__tgt_target_kernel`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_kernel_nowait")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_kernel_nowait(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_kernel(loc, device_id, num_teams, thread_limit, host_ptr, args) }
}

/// Builds the Version 1 struct the legacy shims pass to `__tgt_target_kernel`.
#[allow(clippy::too_many_arguments)] // The legacy ABI's argument list.
fn legacy_args(
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
) -> __tgt_kernel_arguments {
    __tgt_kernel_arguments {
        Version: 1,
        NumArgs: arg_num.max(0) as u32,
        ArgBasePtrs: args_base,
        ArgPtrs: args,
        ArgSizes: arg_sizes,
        ArgTypes: arg_types,
        ArgNames: arg_names,
        ArgMappers: arg_mappers,
        Tripcount: 0,
        Flags: 0,
        NumTeams: [0; 3],
        ThreadLimit: [0; 3],
        DynCGroupMem: 0,
    }
}

/// Legacy teams launch with mappers.
///
/// # Safety
/// `loc` is NULL or valid; each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_teams_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_teams_mapper(
    loc: *mut ident_t,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
    num_teams: i32,
    thread_limit: i32,
) -> i32 {
    let mut ka = legacy_args(arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers);
    // SAFETY: `ka` is a live Version 1 struct over the caller's arrays.
    unsafe { __tgt_target_kernel(loc, device_id, num_teams, thread_limit, host_ptr, &mut ka) }
}

/// Legacy launch without teams, with mappers.
///
/// # Safety
/// As [`__tgt_target_teams_mapper`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_mapper(
    loc: *mut ident_t,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe {
        __tgt_target_teams_mapper(loc, device_id, host_ptr, arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers, -1, -1)
    }
}

/// Legacy launch.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
) -> i32 {
    let null = core::ptr::null_mut();
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_mapper(null, device_id, host_ptr, arg_num, args_base, args, arg_sizes, arg_types, null.cast(), null.cast()) }
}

/// Legacy teams launch.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_teams")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_teams(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    num_teams: i32,
    thread_limit: i32,
) -> i32 {
    let null = core::ptr::null_mut();
    // SAFETY: forwarded contract.
    unsafe {
        __tgt_target_teams_mapper(
            null,
            device_id,
            host_ptr,
            arg_num,
            args_base,
            args,
            arg_sizes,
            arg_types,
            null.cast(),
            null.cast(),
            num_teams,
            thread_limit,
        )
    }
}

/// Legacy `nowait` launch; dependences ignored.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_nowait")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_nowait(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target(device_id, host_ptr, arg_num, args_base, args, arg_sizes, arg_types) }
}

/// Legacy `nowait` launch with mappers; dependences ignored.
///
/// # Safety
/// As [`__tgt_target_mapper`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_nowait_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_nowait_mapper(
    loc: *mut ident_t,
    device_id: i64,
    host_ptr: *mut c_void,
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
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_mapper(loc, device_id, host_ptr, arg_num, args_base, args, arg_sizes, arg_types, arg_names, arg_mappers) }
}

/// Legacy teams `nowait` launch; dependences ignored.
///
/// # Safety
/// Each non-NULL array holds `arg_num` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_teams_nowait")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_teams_nowait(
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    num_teams: i32,
    thread_limit: i32,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { __tgt_target_teams(device_id, host_ptr, arg_num, args_base, args, arg_sizes, arg_types, num_teams, thread_limit) }
}

/// Legacy teams `nowait` launch with mappers; dependences ignored.
///
/// # Safety
/// As [`__tgt_target_teams_mapper`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_teams_nowait_mapper")] // Exported through its `codeptr_ra` trampoline (src/api/exports.list).
pub unsafe extern "C" fn __tgt_target_teams_nowait_mapper(
    loc: *mut ident_t,
    device_id: i64,
    host_ptr: *mut c_void,
    arg_num: i32,
    args_base: *mut *mut c_void,
    args: *mut *mut c_void,
    arg_sizes: *mut i64,
    arg_types: *mut i64,
    arg_names: *mut map_var_info_t,
    arg_mappers: *mut *mut c_void,
    num_teams: i32,
    thread_limit: i32,
    _dep_num: i32,
    _dep_list: *mut c_void,
    _noalias_dep_num: i32,
    _noalias_dep_list: *mut c_void,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe {
        __tgt_target_teams_mapper(
            loc,
            device_id,
            host_ptr,
            arg_num,
            args_base,
            args,
            arg_sizes,
            arg_types,
            arg_names,
            arg_mappers,
            num_teams,
            thread_limit,
        )
    }
}

/// Legacy no-op.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_push_target_tripcount(_device_id: i64, _loop_tripcount: u64) {}

/// Legacy no-op.
#[unsafe(no_mangle)]
pub extern "C" fn __kmpc_push_target_tripcount_mapper(_loc: *mut ident_t, _device_id: i64, _loop_tripcount: u64) {}

/// Polls a target task's parked asynchronous work (see
/// `AsyncInfo::finish`); when it has completed, runs its clean-up, frees the
/// handle and clears the slot, which tells libomp the task is done.
///
/// # Safety
/// `async_handle` is NULL or points to the task's handle slot.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_target_nowait_query(async_handle: *mut *mut c_void) {
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
        match crate::openmp::async_info::query_task_handle(slot) {
            Ok(TaskQuery::Pending | TaskQuery::Done) => Ok(()),
            Ok(TaskQuery::Invalid) => invalid(),
            Err(e) => {
                diag::report(&e.to_string());
                diag::fatal(1, "Error while querying the async queue for completion.")
            }
        }
    })
}
