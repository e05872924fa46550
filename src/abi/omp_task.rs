//! Deferred work as libomp tasks, for the `omp_target_*_async` API: the
//! operation runs in a hidden-helper task (`__kmpc_omp_target_task_alloc`)
//! that depends on the caller's depend objects
//! (`__kmpc_omp_task_with_deps`), so it overlaps the caller and a later
//! `taskwait` waits for it, as the OpenMP API describes and LLVM 22.1 does.
//! The libomp entry points are looked up at run time; without libomp the
//! caller runs the operation itself.

use crate::base::libomp::{KmpDependInfo, global_thread_num};
use core::ffi::c_void;
use std::sync::OnceLock;

/// libomp's `kmp_task_t` head: the fields a task routine reads.
#[repr(C)]
struct KmpTask {
    shareds: *mut c_void,
    routine: TaskRoutine,
    part_id: i32,
    data1: u64,
    data2: u64,
}
const _: () = assert!(size_of::<KmpTask>() == 40);

type TaskRoutine = extern "C" fn(i32, *mut KmpTask) -> i32;
type TaskAlloc = extern "C" fn(*const c_void, i32, i32, usize, usize, TaskRoutine, i64) -> *mut KmpTask;
type TaskWithDeps = extern "C" fn(*const c_void, i32, *mut KmpTask, i32, *const KmpDependInfo, i32, *const KmpDependInfo) -> i32;

/// `kmp_tasking_flags_t` with only `hidden_helper` set (bit 7).
const HIDDEN_HELPER: i32 = 1 << 7;

/// The work a task runs (boxed; its address is the task's `shareds`).
type Work = Box<dyn FnOnce() + Send>;

fn entry_points() -> Option<(TaskAlloc, TaskWithDeps)> {
    static EP: OnceLock<(usize, usize)> = OnceLock::new();
    let &(alloc, with_deps) = EP.get_or_init(|| {
        let find = |name: &core::ffi::CStr| {
            // SAFETY: RTLD_DEFAULT with a valid C string; the result is only an address.
            unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
        };
        (find(c"__kmpc_omp_target_task_alloc"), find(c"__kmpc_omp_task_with_deps"))
    });
    if alloc == 0 || with_deps == 0 {
        return None;
    }
    // SAFETY: libomp exports `kmp_task_t *__kmpc_omp_target_task_alloc(ident_t *, kmp_int32, kmp_int32, size_t, size_t, kmp_routine_entry_t, kmp_int64)`.
    let alloc: TaskAlloc = unsafe { core::mem::transmute(alloc) };
    // SAFETY: libomp exports `kmp_int32 __kmpc_omp_task_with_deps(ident_t *, kmp_int32, kmp_task_t *, kmp_int32, kmp_depend_info_t *, kmp_int32, kmp_depend_info_t *)`.
    let with_deps: TaskWithDeps = unsafe { core::mem::transmute(with_deps) };
    Some((alloc, with_deps))
}

// SAFETY: the symbol name is unique to this crate (build.rs's `INTERNAL_RA`).
#[unsafe(export_name = "__omptarget_rs_impl_run_work")] // Entered through its `codeptr_ra` trampoline (build.rs).
extern "C" fn run_work(_gtid: i32, task: *mut KmpTask) -> i32 {
    if task.is_null() {
        return 0;
    }
    // SAFETY: libomp passes the task `spawn` allocated; its `shareds` holds the pointer from Box::into_raw below, taken exactly once (a task runs once).
    let work = unsafe { Box::from_raw((*task).shareds as *mut Work) };
    // No panic may unwind into libomp.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).is_err() {
        crate::base::diag::report("an asynchronous device operation panicked; its result is undefined");
    }
    0
}

// SAFETY: build.rs defines the trampoline: it records its return address for
// `codeptr_ra` (src/ompt/ra.rs) and jumps to `run_work`, same signature.
unsafe extern "C" {
    /// `run_work` as libomp calls it: 22.1 reports libomp's call site as the
    /// `codeptr_ra` of an asynchronous operation's data ops.
    safe fn __omptarget_rs_ra_run_work(gtid: i32, task: *mut KmpTask) -> i32;
}

/// Runs `work` in a libomp hidden-helper task after the tasks named by the
/// depend objects. Returns `Err(work)` (not run) when libomp is not loaded
/// or cannot allocate the task; `Ok(rc)` with libomp's result otherwise.
///
/// # Safety
/// Each element of `depobjs` is an `omp_depend_t` initialised by `depobj`.
pub unsafe fn spawn(work: Work, depobjs: &[*mut c_void]) -> Result<i32, Work> {
    let Some((alloc, with_deps)) = entry_points() else { return Err(work) };
    let Some(gtid) = global_thread_num().filter(|&g| g >= 0) else { return Err(work) };
    // One dependence record per depend object (a `depobj` holds one).
    let mut deps: Vec<KmpDependInfo> = Vec::with_capacity(depobjs.len());
    for &obj in depobjs {
        if obj.is_null() || !(obj as usize).is_multiple_of(align_of::<KmpDependInfo>()) {
            continue;
        }
        // SAFETY: an initialised depend object points at its dependence record.
        deps.push(unsafe { *(obj as *const KmpDependInfo) });
    }
    let task = alloc(core::ptr::null(), gtid, HIDDEN_HELPER, size_of::<KmpTask>(), 0, __omptarget_rs_ra_run_work, -1);
    if task.is_null() || !(task as usize).is_multiple_of(align_of::<KmpTask>()) {
        return Err(work);
    }
    let shareds = Box::into_raw(Box::new(work));
    // SAFETY: a task libomp just allocated with room for a `kmp_task_t`; nothing else uses it yet.
    unsafe { (*task).shareds = shareds.cast() };
    let rc = with_deps(core::ptr::null(), gtid, task, deps.len() as i32, deps.as_ptr(), 0, core::ptr::null());
    Ok(rc)
}
