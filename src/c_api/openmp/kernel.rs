//! Kernel launch: `__tgt_target_kernel`, its `nowait` form, and the legacy
//! `__tgt_target*` forms generated from one declaration list, all launching
//! through `crate::openmp::constructs::kernel` (abi-reference §4).

use crate::abi::{__tgt_kernel_arguments, ident_t, map_var_info_t};
use crate::openmp::constructs;
use core::ffi::c_void;

/// Launches the kernel registered for `host_ptr` (its region id).
///
/// Returns 0 when the region ran on the device; -1 tells the caller to run
/// the host version (offloading disabled, the initial device, or no devices).
/// Failures during an offload attempt abort as LLVM 22.1 does.
///
/// # Safety
/// `loc` is NULL or a valid `ident_t`; `args` points to a kernel-arguments
/// struct of its declared version whose arrays hold `NumArgs` elements.
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_kernel")] // Exported through its `codeptr_ra` trampoline (exports.list).
pub unsafe extern "C" fn __tgt_target_kernel(
    loc: *mut ident_t,
    device_id: i64,
    num_teams: i32,
    thread_limit: i32,
    host_ptr: *mut c_void,
    args: *mut __tgt_kernel_arguments,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { constructs::kernel(loc, device_id, num_teams, thread_limit, host_ptr, args) }
}

/// Legacy `nowait` launch; the dependences are carried by the enclosing task.
///
/// # Safety
/// As [`__tgt_target_kernel`].
#[unsafe(export_name = "__omptarget_rs_impl___tgt_target_kernel_nowait")] // Exported through its `codeptr_ra` trampoline (exports.list).
#[allow(clippy::too_many_arguments)] // The ABI's argument list.
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

/// Builds the Version 1 struct the legacy forms pass to `__tgt_target_kernel`.
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

/// The legacy launch forms, one line each: the export, what it is, the
/// parameters before (`loc`) and after (names, mappers, teams, thread limit,
/// dependence lists) the ones every form has (`device_id`, `host_ptr` and
/// the argument arrays), and the launch it makes (location, names, mappers,
/// teams, thread limit; a form without teams passes -1, and the `nowait`
/// forms' dependence lists are not read: the enclosing task carries them).
/// Each builds a Version 1 struct over the caller's arrays and launches
/// through `__tgt_target_kernel`.
macro_rules! legacy_launches {
    ($( $name:ident, $what:literal: ( $($pre:ident: $pt:ty),* ; $($post:ident: $qt:ty),* )
        => ($loc:expr, $names:expr, $mappers:expr, $teams:expr, $threads:expr); )*) => {$(
        #[doc = concat!("Legacy ", $what, ".")]
        ///
        /// # Safety
        /// `loc` (where present) is NULL or valid; each non-NULL array holds `arg_num` elements.
        #[unsafe(export_name = concat!("__omptarget_rs_impl_", stringify!($name)))] // Exported through its `codeptr_ra` trampoline (exports.list).
        #[allow(clippy::too_many_arguments)] // The legacy ABI's argument list.
        pub unsafe extern "C" fn $name(
            $($pre: $pt,)*
            device_id: i64,
            host_ptr: *mut c_void,
            arg_num: i32,
            args_base: *mut *mut c_void,
            args: *mut *mut c_void,
            arg_sizes: *mut i64,
            arg_types: *mut i64,
            $($post: $qt),*
        ) -> i32 {
            let mut ka = legacy_args(arg_num, args_base, args, arg_sizes, arg_types, $names, $mappers);
            // SAFETY: `ka` is a live Version 1 struct over the caller's arrays (the caller's contract).
            unsafe { __tgt_target_kernel($loc, device_id, $teams, $threads, host_ptr, &mut ka) }
        }
    )*};
}

type Ptrs = *mut *mut c_void;
type Names = *mut map_var_info_t;
type Deps = *mut c_void;
const NO_LOC: *mut ident_t = core::ptr::null_mut();
const NO_NAMES: Names = core::ptr::null_mut();
const NO_MAPPERS: Ptrs = core::ptr::null_mut();

legacy_launches! {
    __tgt_target, "launch": (;)
        => (NO_LOC, NO_NAMES, NO_MAPPERS, -1, -1);
    __tgt_target_mapper, "launch with mappers": (loc: *mut ident_t; arg_names: Names, arg_mappers: Ptrs)
        => (loc, arg_names, arg_mappers, -1, -1);
    __tgt_target_teams, "teams launch": (; num_teams: i32, thread_limit: i32)
        => (NO_LOC, NO_NAMES, NO_MAPPERS, num_teams, thread_limit);
    __tgt_target_teams_mapper, "teams launch with mappers":
        (loc: *mut ident_t; arg_names: Names, arg_mappers: Ptrs, num_teams: i32, thread_limit: i32)
        => (loc, arg_names, arg_mappers, num_teams, thread_limit);
    __tgt_target_nowait, "`nowait` launch": (; _dep_num: i32, _dep_list: Deps, _noalias_dep_num: i32, _noalias_dep_list: Deps)
        => (NO_LOC, NO_NAMES, NO_MAPPERS, -1, -1);
    __tgt_target_nowait_mapper, "`nowait` launch with mappers":
        (loc: *mut ident_t; arg_names: Names, arg_mappers: Ptrs, _dep_num: i32, _dep_list: Deps, _noalias_dep_num: i32, _noalias_dep_list: Deps)
        => (loc, arg_names, arg_mappers, -1, -1);
    __tgt_target_teams_nowait, "teams `nowait` launch":
        (; num_teams: i32, thread_limit: i32, _dep_num: i32, _dep_list: Deps, _noalias_dep_num: i32, _noalias_dep_list: Deps)
        => (NO_LOC, NO_NAMES, NO_MAPPERS, num_teams, thread_limit);
    __tgt_target_teams_nowait_mapper, "teams `nowait` launch with mappers":
        (loc: *mut ident_t; arg_names: Names, arg_mappers: Ptrs, num_teams: i32, thread_limit: i32, _dep_num: i32, _dep_list: Deps,
         _noalias_dep_num: i32, _noalias_dep_list: Deps)
        => (loc, arg_names, arg_mappers, num_teams, thread_limit);
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
    // SAFETY: forwarded contract.
    unsafe { constructs::nowait_query(async_handle) }
}
