//! The data-construct entry points — `target data` begin/end, `target
//! enter data`, `target exit data`, `target update`, each in its mapper,
//! `nowait` mapper, legacy and legacy `nowait` form — generated from one
//! declaration list, and the mapper-component services (abi-reference
//! §1.3.2, §6.6–§6.12). The constructs themselves are
//! `crate::openmp::constructs`.

use super::boundary::{fast_path, value_entry, void_entry};
use crate::abi::mapper::{MapComponent, MapperComponents};
use crate::abi::{ident_t, map_var_info_t};
use crate::base::error::Result;
use crate::openmp::args::RawArgs;
use crate::openmp::constructs::{self, DataOp};
use core::ffi::c_void;

/// One line per construct: its operation and fast path in `openmp::constructs`, its four export names (mapper,
/// `nowait` mapper, legacy, legacy `nowait`) and what it is. The `nowait`
/// forms' dependences are carried by the task the compiler wraps them in;
/// on a plugin with queues the work not finished by the end of the call is
/// parked in that task and completed by `__tgt_target_nowait_query`. The
/// legacy forms have no location, names or mappers.
macro_rules! data_constructs {
    ($( $op:ident, |$d:ident, $r:ident| $fast:expr => $mapper:ident, $nowait_mapper:ident, $legacy:ident, $legacy_nowait:ident, $what:literal; )*) => {$(
        #[doc = concat!($what, ", with mappers (the form clang emits).")]
        ///
        /// # Safety
        /// `loc` is NULL or a valid `ident_t`; each non-NULL array holds `arg_num` elements.
        #[unsafe(export_name = concat!("__omptarget_rs_impl_", stringify!($mapper)))] // Exported through its `codeptr_ra` trampoline (exports.list).
        pub unsafe extern "C" fn $mapper(
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
            let ($d, $r) = (device_id, &raw);
            // A panic in the fast path (none is possible) is reported and the general path runs.
            // SAFETY: forwarded contract.
            if fast_path(stringify!($mapper), || unsafe { $fast }) {
                return;
            }
            // SAFETY: forwarded contract.
            unsafe { constructs::target_data(stringify!($mapper), loc, device_id, raw, DataOp::$op, false) }
        }

        #[doc = concat!($what, ", `nowait` form with mappers.")]
        ///
        /// # Safety
        #[doc = concat!("As [`", stringify!($mapper), "`]; the dependence lists are not read.")]
        #[unsafe(export_name = concat!("__omptarget_rs_impl_", stringify!($nowait_mapper)))] // Exported through its `codeptr_ra` trampoline (exports.list).
        pub unsafe extern "C" fn $nowait_mapper(
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
            let ($d, $r) = (device_id, &raw);
            // A panic in the fast path (none is possible) is reported and the general path runs.
            // SAFETY: forwarded contract.
            if fast_path(stringify!($nowait_mapper), || unsafe { $fast }) {
                return;
            }
            // SAFETY: forwarded contract.
            unsafe { constructs::target_data(stringify!($nowait_mapper), loc, device_id, raw, DataOp::$op, true) }
        }

        #[doc = concat!($what, ", legacy form without location, names and mappers.")]
        ///
        /// # Safety
        /// Each non-NULL array holds `arg_num` elements.
        #[unsafe(export_name = concat!("__omptarget_rs_impl_", stringify!($legacy)))] // Exported through its `codeptr_ra` trampoline (exports.list).
        pub unsafe extern "C" fn $legacy(
            device_id: i64,
            arg_num: i32,
            args_base: *mut *mut c_void,
            args: *mut *mut c_void,
            arg_sizes: *mut i64,
            arg_types: *mut i64,
        ) {
            let null = core::ptr::null_mut();
            // SAFETY: forwarded contract.
            unsafe { $mapper(null, device_id, arg_num, args_base, args, arg_sizes, arg_types, null.cast(), null.cast()) }
        }

        #[doc = concat!($what, ", legacy `nowait` form: runs as the legacy form; dependences ignored.")]
        ///
        /// # Safety
        /// Each non-NULL array holds `arg_num` elements.
        #[unsafe(export_name = concat!("__omptarget_rs_impl_", stringify!($legacy_nowait)))] // Exported through its `codeptr_ra` trampoline (exports.list).
        pub unsafe extern "C" fn $legacy_nowait(
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
            unsafe { $legacy(device_id, arg_num, args_base, args, arg_sizes, arg_types) }
        }
    )*};
}

data_constructs! {
    Begin, |d, r| constructs::enter_exit_fast(d, r, true) => __tgt_target_data_begin_mapper, __tgt_target_data_begin_nowait_mapper, __tgt_target_data_begin, __tgt_target_data_begin_nowait,
        "Map-entering construct (`target data` begin, `target enter data`)";
    End, |d, r| constructs::enter_exit_fast(d, r, false) => __tgt_target_data_end_mapper, __tgt_target_data_end_nowait_mapper, __tgt_target_data_end, __tgt_target_data_end_nowait,
        "Map-exiting construct (`target data` end, `target exit data`)";
    Update, |d, r| constructs::update_fast(d, r) => __tgt_target_data_update_mapper, __tgt_target_data_update_nowait_mapper, __tgt_target_data_update, __tgt_target_data_update_nowait,
        "`target update`";
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
