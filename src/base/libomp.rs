//! Functions the runtime takes from libomp (abi-reference §1.4), looked up at
//! run time with `dlsym(RTLD_DEFAULT)` so that Rust programs without libomp
//! still work: then `OMP_TARGET_OFFLOAD` / `OMP_DEFAULT_DEVICE` are read from
//! the environment directly.

use crate::base::config;
use core::ffi::{c_int, c_void};
use std::sync::OnceLock;

fn lookup(name: &core::ffi::CStr) -> usize {
    // SAFETY: RTLD_DEFAULT with a valid C string; the result is only an address.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
}

macro_rules! libomp_fn {
    ($cache:ident, $name:literal) => {{
        static $cache: OnceLock<usize> = OnceLock::new();
        *$cache.get_or_init(|| lookup($name))
    }};
}

/// `__kmpc_get_target_offload()`: 0 disabled, 1 default, 2 mandatory.
pub fn target_offload() -> i32 {
    let f = libomp_fn!(F, c"__kmpc_get_target_offload");
    if f == 0 {
        return config().target_offload_env.unwrap_or(1);
    }
    // SAFETY: libomp exports `int __kmpc_get_target_offload(void)`.
    let f: extern "C" fn() -> c_int = unsafe { core::mem::transmute(f) };
    f()
}

/// `omp_get_default_device()` (the default-device ICV).
pub fn default_device() -> i32 {
    let f = libomp_fn!(F, c"omp_get_default_device");
    if f == 0 {
        return config().default_device_env.unwrap_or(0);
    }
    // SAFETY: libomp exports `int omp_get_default_device(void)`.
    let f: extern "C" fn() -> c_int = unsafe { core::mem::transmute(f) };
    f()
}

/// `__kmpc_global_thread_num(NULL)`, or `None` without libomp.
pub fn global_thread_num() -> Option<i32> {
    let f = libomp_fn!(F, c"__kmpc_global_thread_num");
    if f == 0 {
        return None;
    }
    // SAFETY: libomp exports `kmp_int32 __kmpc_global_thread_num(ident_t *)`; NULL is accepted.
    let f: extern "C" fn(*const c_void) -> i32 = unsafe { core::mem::transmute(f) };
    Some(f(core::ptr::null()))
}

/// The running task's target async handle slot
/// (`__kmpc_omp_get_target_async_handle_ptr`), when the task can be
/// re-queued (it has a task team) and the slot is empty; `None` otherwise,
/// and without libomp. A `nowait` construct parks its unfinished work there.
pub fn target_async_handle_slot() -> Option<*mut *mut c_void> {
    let get = libomp_fn!(G, c"__kmpc_omp_get_target_async_handle_ptr");
    let has_team = libomp_fn!(T, c"__kmpc_omp_has_task_team");
    if get == 0 || has_team == 0 {
        return None;
    }
    let gtid = global_thread_num().filter(|&g| g >= 0)?;
    // SAFETY: libomp exports `bool __kmpc_omp_has_task_team(kmp_int32 gtid)`.
    let has_team: extern "C" fn(i32) -> bool = unsafe { core::mem::transmute(has_team) };
    if !has_team(gtid) {
        return None;
    }
    // SAFETY: libomp exports `void **__kmpc_omp_get_target_async_handle_ptr(kmp_int32 gtid)`.
    let get: extern "C" fn(i32) -> *mut *mut c_void = unsafe { core::mem::transmute(get) };
    let slot = get(gtid);
    if slot.is_null() || !(slot as usize).is_multiple_of(align_of::<*mut c_void>()) {
        return None;
    }
    // SAFETY: libomp's slot in the running task's data, aligned and non-NULL.
    let empty = unsafe { (*slot).is_null() };
    empty.then_some(slot)
}

/// One libomp dependence record (`kmp_depend_info_t`, 24 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KmpDependInfo {
    pub base_addr: isize,
    pub len: usize,
    pub flags: u64,
}
const _: () = assert!(size_of::<KmpDependInfo>() == 24);

/// Waits until the tasks the given `omp_depend_t` objects depend on are
/// complete (`__kmpc_omp_wait_deps`), so an operation done right after is
/// ordered as a task with those dependences would be. Returns false when
/// libomp is not loaded.
///
/// # Safety
/// Each element of `depobjs` is an `omp_depend_t` initialised by a
/// `depobj` construct: a pointer to the object's dependence records, whose
/// count libomp stores in the record just before the first.
pub unsafe fn wait_depobjs(depobjs: &[*mut c_void]) -> bool {
    let wait = libomp_fn!(W, c"__kmpc_omp_wait_deps");
    let Some(gtid) = global_thread_num() else { return false };
    if wait == 0 {
        return false;
    }
    let mut deps: Vec<KmpDependInfo> = Vec::new();
    for &obj in depobjs {
        if obj.is_null() || !(obj as usize).is_multiple_of(align_of::<KmpDependInfo>()) {
            continue;
        }
        let first = obj as *const KmpDependInfo;
        // SAFETY: a depobj points one record past the header record holding the count.
        let count = unsafe { (*first.sub(1)).base_addr }.clamp(0, 1 << 16) as usize;
        // SAFETY: the object holds `count` records starting at `first`.
        deps.extend_from_slice(unsafe { core::slice::from_raw_parts(first, count) });
    }
    if deps.is_empty() {
        return true;
    }
    type WaitDeps = extern "C" fn(*const c_void, i32, i32, *const KmpDependInfo, i32, *const KmpDependInfo);
    // SAFETY: libomp exports `void __kmpc_omp_wait_deps(ident_t *, kmp_int32, kmp_int32, kmp_depend_info_t *, kmp_int32, kmp_depend_info_t *)`.
    let f: WaitDeps = unsafe { core::mem::transmute(wait) };
    f(core::ptr::null(), gtid, deps.len() as i32, deps.as_ptr(), 0, core::ptr::null());
    true
}

/// Waits for the sibling tasks a list of dependences names
/// (`__kmpc_omp_wait_deps`, as the interop constructs do). Returns false
/// when libomp is not loaded (there are then no tasks to wait for).
///
/// # Safety
/// `deps` points to `ndeps` records when `ndeps` > 0.
pub unsafe fn wait_dep_list(loc: *const c_void, gtid: i32, ndeps: i32, deps: *const KmpDependInfo) -> bool {
    let wait = libomp_fn!(W, c"__kmpc_omp_wait_deps");
    if wait == 0 || ndeps <= 0 || deps.is_null() || !(deps as usize).is_multiple_of(align_of::<KmpDependInfo>()) {
        return false;
    }
    type WaitDeps = extern "C" fn(*const c_void, i32, i32, *const KmpDependInfo, i32, *const KmpDependInfo);
    // SAFETY: libomp exports `void __kmpc_omp_wait_deps(ident_t *, kmp_int32, kmp_int32, kmp_depend_info_t *, kmp_int32, kmp_depend_info_t *)`.
    let f: WaitDeps = unsafe { core::mem::transmute(wait) };
    f(loc, gtid, ndeps, deps, 0, core::ptr::null());
    true
}
