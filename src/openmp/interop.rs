//! OpenMP interop objects (`#pragma omp interop`, `omp_get_interop_*`),
//! with LLVM 22.1's observable behaviour:
//!
//! * a plugin that offers interop ([`Plugin::interop_info`]) gives an object
//!   with its foreign-runtime id, vendor and native handles; a `targetsync`
//!   object also owns one of the plugin's queues ([`Plugin::queue_native`]:
//!   a CUDA stream, or the HSA queue of an AMDGPU stream, which 22.1 does
//!   not hand out) that the program may enqueue work on;
//! * every other device (the host plugin, the initial device, a bad number,
//!   offloading disabled) leaves the object `omp_interop_none`, silently;
//! * `use` without `nowait` and `destroy` wait for the queue, then run the
//!   completion callbacks (`ompx_interop_add_completion_callback`).
//!
//! Where 22.1 crashes we stay up: queries on `omp_interop_none` answer
//! `omp_irc_empty` (22.1 dereferences NULL), and `use`/`destroy` of a CUDA
//! `targetsync` object synchronise its stream (22.1 aborts with "Interop sync
//! barrier failed"). `omp_get_interop_name`/`_type_desc` return the names the
//! OpenMP specification gives (22.1 returns NULL for every property).
//!
//! [`Plugin::interop_info`]: crate::plugins::Plugin::interop_info
//! [`Plugin::queue_native`]: crate::plugins::Plugin::queue_native

use crate::base::diag::Policy;
use crate::base::error::Result;
use crate::plugins::{InteropInfo, QueueHandle};
use core::ffi::{CStr, c_void};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// Interop types as clang 22 passes them (and 22.1 compares them).
pub const TYPE_TARGET: i32 = 1;
pub const TYPE_TARGETSYNC: i32 = 2;

/// `omp_interop_property_t`.
pub mod prop {
    pub const FR_ID: i32 = -1;
    pub const FR_NAME: i32 = -2;
    pub const VENDOR: i32 = -3;
    pub const VENDOR_NAME: i32 = -4;
    pub const DEVICE_NUM: i32 = -5;
    pub const PLATFORM: i32 = -6;
    pub const DEVICE: i32 = -7;
    pub const DEVICE_CONTEXT: i32 = -8;
    pub const TARGETSYNC: i32 = -9;
    pub const FIRST: i32 = -9;
}

/// `omp_interop_rc_t`.
pub mod rc {
    pub const NO_VALUE: i32 = 1;
    pub const SUCCESS: i32 = 0;
    pub const EMPTY: i32 = -1;
    pub const OUT_OF_RANGE: i32 = -2;
    pub const TYPE_INT: i32 = -3;
    pub const TYPE_PTR: i32 = -4;
    pub const TYPE_STR: i32 = -5;
    pub const OTHER: i32 = -6;
}

/// `ompx_interop_cb_t`: called with the object and the registered data.
pub type CompletionCb = unsafe extern "C" fn(*mut c_void, *mut c_void);

struct State {
    callbacks: Vec<(CompletionCb, usize)>,
    /// The thread an implicit (dispatch) object belongs to.
    owner: Option<i32>,
    /// No `use` since the queue was last synchronised.
    clean: bool,
}

/// One interop object; the program holds its address.
pub struct Interop {
    pub device_id: i64,
    pub kind: i32,
    pub info: InteropInfo,
    queue: Option<QueueHandle>,
    native_queue: usize,
    state: Mutex<State>,
}

/// Live objects by address: every pointer from the program is looked up here.
pub(super) static LIVE: LazyLock<Mutex<HashMap<usize, Arc<Interop>>>> = LazyLock::new(Default::default);

/// Fork safety (runtime/fork.rs): the live set and every live object's state.
pub(super) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    if !held.mutex(&LIVE) {
        return false;
    }
    // SAFETY: the live set's lock was just taken (its guard forgotten) by this thread.
    let live = unsafe { &*LIVE.data_ptr() };
    live.values().all(|i| held.mutex_in(i, |i| &i.state))
}

/// The live object at `handle`, if it is one.
pub fn lookup(handle: usize) -> Option<Arc<Interop>> {
    if handle == 0 {
        return None;
    }
    LIVE.lock().get(&handle).cloned()
}

/// Creates an object for `device_num` (-1: the default device); 0 is
/// `omp_interop_none`. `implicit` is the owning thread of a dispatch object,
/// which is reused while it is live.
pub fn create(device_num: i64, kind: i32, implicit: Option<i32>) -> usize {
    let rt = crate::openmp::get();
    if rt.policy() == Policy::Disabled {
        return 0;
    }
    let device_num = if device_num == -1 { i64::from(crate::base::libomp::default_device()) } else { device_num };
    let dev = match rt.device(device_num) {
        Ok(d) => d,
        Err(e) => {
            crate::debug!("interop: no device {device_num}: {e}; omp_interop_none");
            return 0;
        }
    };
    let Some(info) = dev.plugin.interop_info(dev.plugin_device) else {
        crate::debug!("interop: device {device_num} ({}) offers no interop; omp_interop_none", dev.plugin.name());
        return 0;
    };
    if let Some(gtid) = implicit {
        let live = LIVE.lock();
        if let Some((&h, obj)) =
            live.iter().find(|(_, o)| o.device_id == device_num && o.kind == kind && o.state.lock().owner == Some(gtid))
        {
            obj.state.lock().clean = false;
            return h;
        }
    }
    let (mut queue, mut native_queue) = (None, 0);
    if kind == TYPE_TARGETSYNC {
        let q = match dev.plugin.queue_acquire(dev.plugin_device) {
            Ok(q) => q,
            Err(e) => {
                crate::debug!("interop: device {device_num}: no queue ({e}); omp_interop_none");
                return 0;
            }
        };
        match dev.plugin.queue_native(dev.plugin_device, q) {
            Some(n) => (queue, native_queue) = (Some(q), n),
            None => {
                dev.plugin.queue_release(dev.plugin_device, q);
                crate::debug!("interop: device {device_num} ({}) has no targetsync queue; omp_interop_none", dev.plugin.name());
                return 0;
            }
        }
    }
    let obj = Arc::new(Interop {
        device_id: device_num,
        kind,
        info,
        queue,
        native_queue,
        state: Mutex::new(State { callbacks: Vec::new(), owner: implicit, clean: implicit.is_none() }),
    });
    let h = Arc::as_ptr(&obj) as usize;
    crate::debug!("interop: created {h:#x} (type {kind}) on device {device_num}, targetsync {native_queue:#x}");
    LIVE.lock().insert(h, obj);
    h
}

impl Interop {
    /// Waits for the work queued on the object's queue, then runs the
    /// completion callbacks (22.1's `flush` + `sync_barrier`).
    fn sync_barrier(&self, handle: usize) -> Result<()> {
        if let Some(q) = self.queue {
            let dev = crate::openmp::get().device(self.device_id)?;
            // The program may have queued work the plugin has not seen: mark it.
            let _ = dev.plugin.queue_native(dev.plugin_device, q);
            dev.plugin.queue_synchronize(dev.plugin_device, q)?;
        }
        self.run_callbacks(handle);
        Ok(())
    }

    fn run_callbacks(&self, handle: usize) {
        let cbs = std::mem::take(&mut self.state.lock().callbacks);
        for (cb, data) in cbs {
            // SAFETY: the program registered `cb` for this object with `data`.
            unsafe { cb(handle as *mut c_void, data as *mut c_void) };
        }
    }

    /// Registers a completion callback.
    pub fn add_callback(&self, cb: CompletionCb, data: usize) {
        self.state.lock().callbacks.push((cb, data));
    }

    /// A query's value type and the handle, for `omp_get_interop_ptr`.
    pub fn ptr_property(&self, property: i32) -> Option<usize> {
        match property {
            prop::PLATFORM => Some(self.info.platform),
            prop::DEVICE => Some(self.info.device),
            prop::DEVICE_CONTEXT => Some(self.info.context),
            prop::TARGETSYNC => Some(self.native_queue),
            _ => None,
        }
    }
}

/// `interop use`: without `nowait` waits for the object's queue and runs
/// the callbacks; with `nowait` there is nothing to queue (the stream is in
/// order).
pub fn use_object(handle: usize, nowait: bool) -> Result<bool> {
    let Some(obj) = lookup(handle) else { return Ok(false) };
    if obj.queue.is_some() && !nowait {
        obj.sync_barrier(handle)?;
        obj.state.lock().clean = true;
    }
    Ok(true)
}

/// `interop destroy`: waits for the queue, runs the callbacks, gives the
/// queue back and frees the object. False for an unknown handle.
pub fn release(handle: usize) -> Result<bool> {
    let Some(obj) = LIVE.lock().remove(&handle) else { return Ok(false) };
    let r = obj.sync_barrier(handle);
    if let Some(q) = obj.queue
        && let Ok(dev) = crate::openmp::get().device(obj.device_id)
    {
        dev.plugin.queue_release(dev.plugin_device, q);
    }
    r.map(|_| true)
}

/// `__tgt_target_sync`: waits for the implicit objects of `gtid` used since
/// their last synchronisation.
pub fn sync_implicit(gtid: i32) {
    let dirty: Vec<(usize, Arc<Interop>)> = LIVE
        .lock()
        .iter()
        .filter(|(_, o)| o.queue.is_some() && o.state.lock().owner == Some(gtid) && !o.state.lock().clean)
        .map(|(&h, o)| (h, o.clone()))
        .collect();
    for (h, obj) in dirty {
        match obj.sync_barrier(h) {
            Ok(()) => obj.state.lock().clean = true,
            Err(e) => crate::base::diag::report(&format!("interop {h:#x}: synchronisation failed: {e}")),
        }
    }
}

/// The error type 22.1 reports for a property asked with the wrong getter.
fn mismatch(property: i32) -> i32 {
    match property {
        prop::FR_NAME | prop::VENDOR_NAME => rc::TYPE_STR,
        prop::DEVICE | prop::DEVICE_CONTEXT | prop::TARGETSYNC => rc::TYPE_PTR,
        _ => rc::TYPE_INT,
    }
}

/// 22.1's `getPropertyCheck`: the object for a valid query, or the return code.
pub fn check(handle: usize, property: i32) -> core::result::Result<Arc<Interop>, i32> {
    if !(prop::FIRST..0).contains(&property) {
        return Err(rc::OUT_OF_RANGE);
    }
    if handle == 0 {
        return Err(rc::EMPTY);
    }
    let obj = lookup(handle).ok_or(rc::OTHER)?;
    let sync = obj.kind == TYPE_TARGETSYNC;
    if (property == prop::TARGETSYNC && !sync) || (matches!(property, prop::DEVICE | prop::DEVICE_CONTEXT) && sync) {
        return Err(rc::OTHER);
    }
    Ok(obj)
}

/// `omp_get_interop_int`: (value, return code).
pub fn get_int(handle: usize, property: i32) -> (isize, i32) {
    match check(handle, property) {
        Err(code) => (0, code),
        Ok(obj) => match property {
            prop::FR_ID => (obj.info.fr_id as isize, rc::SUCCESS),
            prop::VENDOR => (obj.info.vendor_id as isize, rc::SUCCESS),
            prop::DEVICE_NUM => (obj.device_id as isize, rc::SUCCESS),
            _ => (0, mismatch(property)),
        },
    }
}

/// `omp_get_interop_ptr`: (value, return code). A NULL device handle (CUDA
/// device 0) answers `omp_irc_no_value`, as in 22.1.
pub fn get_ptr(handle: usize, property: i32) -> (usize, i32) {
    match check(handle, property) {
        Err(code) => (0, code),
        Ok(obj) => match obj.ptr_property(property) {
            Some(0) if property == prop::DEVICE => (0, rc::NO_VALUE),
            Some(v) => (v, rc::SUCCESS),
            None => (0, mismatch(property)),
        },
    }
}

const FR_NAMES: [&CStr; 8] = [c"none", c"cuda", c"cuda_driver", c"opencl", c"sycl", c"hip", c"level_zero", c"hsa"];
const VENDOR_NAMES: [&CStr; 13] =
    [c"unknown", c"amd", c"arm", c"bsc", c"fujitsu", c"gnu", c"hpe", c"ibm", c"intel", c"llvm", c"nec", c"nvidia", c"ti"];

/// `omp_get_interop_str`: (value, return code).
pub fn get_str(handle: usize, property: i32) -> (&'static CStr, i32) {
    let pick = |names: &[&'static CStr], i: i32| usize::try_from(i).ok().and_then(|i| names.get(i).copied()).unwrap_or(c"unknown");
    match check(handle, property) {
        Err(code) => (c"", code),
        Ok(obj) => match property {
            prop::FR_NAME => (pick(&FR_NAMES, obj.info.fr_id), rc::SUCCESS),
            prop::VENDOR_NAME => (pick(&VENDOR_NAMES, obj.info.vendor_id), rc::SUCCESS),
            _ => (c"", mismatch(property)),
        },
    }
}

/// `omp_get_interop_name`: the specification's property name.
pub fn name(handle: usize, property: i32) -> Option<&'static CStr> {
    check(handle, property).ok()?;
    const NAMES: [&CStr; 9] =
        [c"fr_id", c"fr_name", c"vendor", c"vendor_name", c"device_num", c"platform", c"device", c"device_context", c"targetsync"];
    NAMES.get((-1 - property) as usize).copied()
}

/// `omp_get_interop_type_desc`: the C type of the property's value.
pub fn type_desc(handle: usize, property: i32) -> Option<&'static CStr> {
    let obj = check(handle, property).ok()?;
    let handle_type = |i: usize| Some(obj.info.type_names[i]);
    match property {
        prop::FR_ID => Some(c"omp_interop_fr_t"),
        prop::FR_NAME | prop::VENDOR_NAME => Some(c"const char *"),
        prop::VENDOR | prop::DEVICE_NUM => Some(c"int"),
        prop::PLATFORM => handle_type(0),
        prop::DEVICE => handle_type(1),
        prop::DEVICE_CONTEXT => handle_type(2),
        _ => handle_type(3),
    }
}
