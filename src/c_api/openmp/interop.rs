//! Interop exports: the OpenMP 5.1 forms clang 22 emits for
//! `#pragma omp interop init/use/destroy`, the OpenMP 6.0 forms
//! (`__tgt_interop_get/use60/release`), the property queries and the
//! completion callback. The objects live in `openmp::interop`.

use super::boundary::{guard, value_entry, void_entry};
use crate::abi::ident_t;
use crate::base::libomp::{self, KmpDependInfo};
use crate::openmp::interop::{self, TYPE_TARGETSYNC, rc};
use core::ffi::{c_char, c_int, c_void};

/// `interop_ctx_t`: interface version, flags (bit 0 implicit, bit 1 nowait), gtid.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct InteropCtx {
    pub version: u32,
    pub flags: u32,
    pub gtid: i32,
}

/// `dep_pack_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DepPack {
    pub ndeps: i32,
    pub deplist: *const KmpDependInfo,
    pub ndeps_noalias: i32,
    pub noalias_deplist: *const KmpDependInfo,
}

/// Reads a context; NULL or misaligned reads as explicit, no `nowait`, gtid -1.
///
/// # Safety
/// `ctx` is NULL or points to an `interop_ctx_t`.
unsafe fn read_ctx(ctx: *const InteropCtx) -> InteropCtx {
    if ctx.is_null() || !(ctx as usize).is_multiple_of(align_of::<InteropCtx>()) {
        return InteropCtx { version: 0, flags: 0, gtid: libomp::global_thread_num().unwrap_or(-1) };
    }
    // SAFETY: non-NULL, aligned, caller's contract.
    unsafe { *ctx }
}

/// Waits for a construct's dependences (`__kmpc_omp_wait_deps`).
///
/// # Safety
/// `deps` is NULL or points to a `dep_pack_t` whose lists hold their counts.
unsafe fn wait_deps(loc: *mut ident_t, gtid: i32, deps: *const DepPack) {
    if deps.is_null() || !(deps as usize).is_multiple_of(align_of::<DepPack>()) {
        return;
    }
    // SAFETY: non-NULL, aligned, caller's contract.
    let d = unsafe { *deps };
    // SAFETY: the lists hold `ndeps` / `ndeps_noalias` records (caller's contract).
    unsafe {
        libomp::wait_dep_list(loc.cast(), gtid, d.ndeps, d.deplist);
        libomp::wait_dep_list(loc.cast(), gtid, d.ndeps_noalias, d.noalias_deplist);
    }
}

const IMPLICIT: u32 = 1;
const NOWAIT: u32 = 2;

/// OpenMP 6.0 interop creation; `omp_interop_none` (NULL) where the device
/// offers none. The preference list is accepted and not needed: each plugin
/// supports one foreign runtime, which 22.1 also selects whatever is preferred.
///
/// # Safety
/// `ctx` and `deps` are NULL or valid; `prefers` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_get(
    loc: *mut ident_t,
    interop_type: i32,
    device_num: i64,
    _num_prefers: i32,
    _prefers: *mut c_void,
    ctx: *mut InteropCtx,
    deps: *mut DepPack,
) -> *mut c_void {
    // SAFETY: forwarded contract.
    let c = unsafe { read_ctx(ctx) };
    if interop_type == TYPE_TARGETSYNC {
        // 22.1 ignores `nowait` here and waits for the dependences.
        // SAFETY: forwarded contract.
        unsafe { wait_deps(loc, c.gtid, deps) };
    }
    let implicit = (c.flags & IMPLICIT != 0).then_some(c.gtid);
    value_entry("__tgt_interop_get", 0, || Ok(interop::create(device_num, interop_type, implicit))) as *mut c_void
}

/// OpenMP 6.0 interop use: `OFFLOAD_FAIL` for `omp_interop_none` or an
/// unknown object.
///
/// # Safety
/// `ctx` and `deps` are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_use60(loc: *mut ident_t, interop: *mut c_void, ctx: *mut InteropCtx, deps: *mut DepPack) -> c_int {
    // SAFETY: forwarded contract.
    let c = unsafe { read_ctx(ctx) };
    let mut nowait = c.flags & NOWAIT != 0;
    let Some(obj) = interop::lookup(interop as usize) else { return crate::abi::OFFLOAD_FAIL };
    if obj.kind == TYPE_TARGETSYNC && !deps.is_null() {
        // 22.1: `nowait` with dependences is not supported and ignored.
        nowait = false;
        // SAFETY: forwarded contract.
        unsafe { wait_deps(loc, c.gtid, deps) };
    }
    drop(obj);
    match guard("__tgt_interop_use", || interop::use_object(interop as usize, nowait)) {
        Ok(true) => crate::abi::OFFLOAD_SUCCESS,
        Ok(false) => crate::abi::OFFLOAD_FAIL,
        Err(e) => {
            crate::base::diag::report(&format!("interop use: {e}"));
            crate::abi::OFFLOAD_FAIL
        }
    }
}

/// OpenMP 6.0 interop release: waits for the object's queue, runs its
/// callbacks and frees it; `OFFLOAD_FAIL` for `omp_interop_none`.
///
/// # Safety
/// `ctx` and `deps` are NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_release(loc: *mut ident_t, interop: *mut c_void, ctx: *mut InteropCtx, deps: *mut DepPack) -> c_int {
    // SAFETY: forwarded contract.
    let c = unsafe { read_ctx(ctx) };
    let Some(obj) = interop::lookup(interop as usize) else { return crate::abi::OFFLOAD_FAIL };
    if obj.kind == TYPE_TARGETSYNC {
        // SAFETY: forwarded contract.
        unsafe { wait_deps(loc, c.gtid, deps) };
    }
    drop(obj);
    match guard("__tgt_interop_release", || interop::release(interop as usize)) {
        Ok(true) => crate::abi::OFFLOAD_SUCCESS,
        Ok(false) => crate::abi::OFFLOAD_FAIL,
        Err(e) => {
            crate::base::diag::report(&format!("interop destroy: {e}"));
            crate::abi::OFFLOAD_FAIL
        }
    }
}

/// Builds the 6.0 arguments of an OpenMP 5.1 entry point.
fn compat(gtid: i32, ndeps: i32, dep_list: *mut c_void, nowait: i32) -> (InteropCtx, DepPack) {
    let ctx = InteropCtx { version: 0, flags: if nowait != 0 { NOWAIT } else { 0 }, gtid };
    let deps = DepPack { ndeps, deplist: dep_list.cast(), ndeps_noalias: 0, noalias_deplist: core::ptr::null() };
    (ctx, deps)
}

/// Reads the program's interop variable; NULL when the pointer is unusable.
///
/// # Safety
/// `interop_ptr` is NULL or points to the program's `omp_interop_t`.
unsafe fn read_var(interop_ptr: *mut *mut c_void) -> Option<*mut c_void> {
    if interop_ptr.is_null() || !(interop_ptr as usize).is_multiple_of(align_of::<*mut c_void>()) {
        return None;
    }
    // SAFETY: non-NULL, aligned, caller's contract.
    Some(unsafe { *interop_ptr })
}

/// `#pragma omp interop init`: stores the new object (or
/// `omp_interop_none`) in the program's variable.
///
/// # Safety
/// `interop_ptr` is NULL or points to the program's `omp_interop_t`;
/// `dep_list` holds `ndeps` dependence records.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_init(
    loc: *mut ident_t,
    gtid: i32,
    interop_ptr: *mut *mut c_void,
    interop_type: i32,
    device_id: i32,
    ndeps: i32,
    dep_list: *mut c_void,
    have_nowait: i32,
) {
    // SAFETY: forwarded contract.
    if unsafe { read_var(interop_ptr) }.is_none() {
        void_entry("__tgt_interop_init", || {
            Err(crate::base::error::OffloadError::InvalidArgument("interop variable pointer is NULL or misaligned".into()))
        });
        return;
    }
    let (mut ctx, deps) = compat(gtid, ndeps, dep_list, have_nowait);
    let deps_ptr = if ndeps > 0 { &deps as *const DepPack as *mut DepPack } else { core::ptr::null_mut() };
    // SAFETY: `ctx` and `deps` are live locals; the dependence list is the caller's.
    let obj = unsafe { __tgt_interop_get(loc, interop_type, i64::from(device_id), 0, core::ptr::null_mut(), &mut ctx, deps_ptr) };
    // SAFETY: checked above: non-NULL and aligned.
    unsafe { *interop_ptr = obj };
}

/// `#pragma omp interop use`.
///
/// # Safety
/// As [`__tgt_interop_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_use(
    loc: *mut ident_t,
    gtid: i32,
    interop_ptr: *mut *mut c_void,
    _device_id: i32,
    ndeps: i32,
    dep_list: *mut c_void,
    have_nowait: i32,
) {
    // SAFETY: forwarded contract.
    let Some(obj) = (unsafe { read_var(interop_ptr) }) else { return };
    let (mut ctx, mut deps) = compat(gtid, ndeps, dep_list, have_nowait);
    let deps_ptr = if ndeps > 0 { &mut deps as *mut DepPack } else { core::ptr::null_mut() };
    // SAFETY: live locals; the dependence list is the caller's.
    unsafe { __tgt_interop_use60(loc, obj, &mut ctx, deps_ptr) };
}

/// `#pragma omp interop destroy`. Like 22.1, the program's variable keeps
/// its (now dangling) value; a second destroy finds no object and does nothing.
///
/// # Safety
/// As [`__tgt_interop_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_interop_destroy(
    loc: *mut ident_t,
    gtid: i32,
    interop_ptr: *mut *mut c_void,
    _device_id: i32,
    ndeps: i32,
    dep_list: *mut c_void,
    have_nowait: i32,
) {
    // SAFETY: forwarded contract.
    let Some(obj) = (unsafe { read_var(interop_ptr) }) else { return };
    let (mut ctx, mut deps) = compat(gtid, ndeps, dep_list, have_nowait);
    let deps_ptr = if ndeps > 0 { &mut deps as *mut DepPack } else { core::ptr::null_mut() };
    // SAFETY: live locals; the dependence list is the caller's.
    unsafe { __tgt_interop_release(loc, obj, &mut ctx, deps_ptr) };
}

/// `__tgt_target_sync`: synchronises the implicit (dispatch) interop objects
/// of the thread that were used since their last synchronisation.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_target_sync(_loc: *mut ident_t, gtid: c_int, _current_task: *mut c_void, _event: *mut c_void) {
    void_entry("__tgt_target_sync", || {
        interop::sync_implicit(gtid);
        Ok(())
    });
}

/// Stores a query's return code where the caller asked for it.
///
/// # Safety
/// `ret_code` is NULL or writable.
unsafe fn set_rc(ret_code: *mut c_int, code: i32) {
    if !ret_code.is_null() && (ret_code as usize).is_multiple_of(align_of::<c_int>()) {
        // SAFETY: non-NULL, aligned pointer the caller provided for the return code.
        unsafe { *ret_code = code };
    }
}

/// Integer property of an interop object (`fr_id`, `vendor`, `device_num`).
///
/// # Safety
/// `ret_code` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_int(interop: *const c_void, property: c_int, ret_code: *mut c_int) -> isize {
    let (v, code) = value_entry("omp_get_interop_int", (0, rc::OTHER), || Ok(interop::get_int(interop as usize, property)));
    // SAFETY: forwarded contract.
    unsafe { set_rc(ret_code, code) };
    v
}

/// Pointer property (`platform`, `device`, `device_context`, `targetsync`).
///
/// # Safety
/// `ret_code` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_ptr(interop: *const c_void, property: c_int, ret_code: *mut c_int) -> *mut c_void {
    let (v, code) = value_entry("omp_get_interop_ptr", (0, rc::OTHER), || Ok(interop::get_ptr(interop as usize, property)));
    // SAFETY: forwarded contract.
    unsafe { set_rc(ret_code, code) };
    v as *mut c_void
}

/// String property (`fr_name`, `vendor_name`); NULL on error.
///
/// # Safety
/// `ret_code` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_interop_str(interop: *const c_void, property: c_int, ret_code: *mut c_int) -> *const c_char {
    let (s, code) = value_entry("omp_get_interop_str", (None, rc::OTHER), || {
        let (s, code) = interop::get_str(interop as usize, property);
        Ok(((code == rc::SUCCESS).then_some(s), code))
    });
    // SAFETY: forwarded contract.
    unsafe { set_rc(ret_code, code) };
    s.map_or(core::ptr::null(), |s| s.as_ptr())
}

/// The property's name (NULL for `omp_interop_none` or a bad property).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_name(interop: *const c_void, property: c_int) -> *const c_char {
    value_entry("omp_get_interop_name", None, || Ok(interop::name(interop as usize, property))).map_or(core::ptr::null(), |s| s.as_ptr())
}

/// The C type of the property's value (NULL for `omp_interop_none` or a bad property).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_interop_type_desc(interop: *const c_void, property: c_int) -> *const c_char {
    value_entry("omp_get_interop_type_desc", None, || Ok(interop::type_desc(interop as usize, property)))
        .map_or(core::ptr::null(), |s| s.as_ptr())
}

/// Registers a callback run when the object's queued work has completed
/// (at the next `use` without `nowait`, or at `destroy`). `omp_irc_other`
/// for `omp_interop_none`, an unknown object or a NULL callback.
#[unsafe(no_mangle)]
pub extern "C" fn ompx_interop_add_completion_callback(
    interop: *mut c_void,
    cb: Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>,
    data: *mut c_void,
) -> c_int {
    value_entry("ompx_interop_add_completion_callback", rc::OTHER, || {
        let (Some(obj), Some(cb)) = (interop::lookup(interop as usize), cb) else { return Ok(rc::OTHER) };
        obj.add_callback(cb, data as usize);
        Ok(rc::SUCCESS)
    })
}
