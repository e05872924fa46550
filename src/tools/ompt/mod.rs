//! OMPT, the OpenMP tools interface, on the offloading side.
//!
//! libomp owns the tool: it loads it (`OMP_TOOL_LIBRARIES` or a program's
//! own `ompt_start_tool`) and keeps its callbacks. When the runtime comes up
//! we hand libomp a start-tool result through `ompt_libomp_connect`, as
//! 22.1's libomptarget does; libomp calls our `initialize` with its lookup
//! function, through which we read the tool's callbacks
//! (`ompt_get_callback`) and the task data (`ompt_get_task_data`,
//! `ompt_get_target_task_data`). From then on the runtime reports device
//! initialisation, image loads, target constructs, data operations and
//! kernel submissions with 22.1's arguments and in 22.1's order.
//!
//! Cost without a tool: every hook is `if ompt::on() { ... }`, one relaxed
//! load of a flag that is set once, before any construct runs; the bodies
//! are out of line and cold.

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

pub mod ra;
pub mod trace;

/// `ompt_data_t`: a tool's word for a task, region or operation.
pub type OmptData = u64;

type Lookup = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type GetCallback = unsafe extern "C" fn(c_int, *mut *mut c_void) -> c_int;
type GetData = unsafe extern "C" fn() -> *mut OmptData;

type DeviceInitialize = unsafe extern "C" fn(c_int, *const c_char, *mut c_void, Option<Lookup>, *const c_char);
type DeviceFinalize = unsafe extern "C" fn(c_int);
type DeviceLoad = unsafe extern "C" fn(c_int, *const c_char, i64, *mut c_void, usize, *mut c_void, *mut c_void, u64);
type Target = unsafe extern "C" fn(c_int, c_int, c_int, *mut OmptData, u64, *const c_void);
type TargetEmi = unsafe extern "C" fn(c_int, c_int, c_int, *mut OmptData, *mut OmptData, *mut OmptData, *const c_void);
type DataOp = unsafe extern "C" fn(u64, u64, c_int, *mut c_void, c_int, *mut c_void, c_int, usize, *const c_void);
type DataOpEmi = unsafe extern "C" fn(
    c_int,
    *mut OmptData,
    *mut OmptData,
    *mut u64,
    c_int,
    *mut c_void,
    c_int,
    *mut c_void,
    c_int,
    usize,
    *const c_void,
);
type Submit = unsafe extern "C" fn(u64, u64, c_uint);
type SubmitEmi = unsafe extern "C" fn(c_int, *mut OmptData, *mut u64, c_uint);

// `ompt_callbacks_t` codes (omp-tools.h).
const CB_TARGET: c_int = 8;
const CB_TARGET_DATA_OP: c_int = 9;
const CB_TARGET_SUBMIT: c_int = 10;
const CB_DEVICE_INITIALIZE: c_int = 12;
const CB_DEVICE_FINALIZE: c_int = 13;
const CB_DEVICE_LOAD: c_int = 14;
const CB_TARGET_EMI: c_int = 33;
const CB_TARGET_DATA_OP_EMI: c_int = 34;
const CB_TARGET_SUBMIT_EMI: c_int = 35;

const SCOPE_BEGIN: c_int = 1;
const SCOPE_END: c_int = 2;

/// `omp_initial_device` as 22.1 passes it for some operations.
const INITIAL_DEVICE: i64 = -1;

/// `ompt_target_t`: the kind of a target construct.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(i32)]
pub enum Kind {
    Region = 1,
    EnterData = 2,
    ExitData = 3,
    Update = 4,
}

/// `ompt_target_data_op_t` values 22.1 reports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(i32)]
pub enum Op {
    Alloc = 1,
    ToDevice = 2,
    FromDevice = 3,
    Delete = 4,
    Associate = 5,
    Disassociate = 6,
}

/// The tool's callbacks, read once at connection.
#[derive(Default)]
struct Callbacks {
    device_initialize: Option<DeviceInitialize>,
    device_finalize: Option<DeviceFinalize>,
    device_load: Option<DeviceLoad>,
    target: Option<Target>,
    target_emi: Option<TargetEmi>,
    data_op: Option<DataOp>,
    data_op_emi: Option<DataOpEmi>,
    submit: Option<Submit>,
    submit_emi: Option<SubmitEmi>,
    get_task_data: Option<GetData>,
    get_target_task_data: Option<GetData>,
}

/// Set once, when a tool registered at least one callback we dispatch.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static CALLBACKS: OnceLock<Callbacks> = OnceLock::new();
static CONNECT: Once = Once::new();
/// libomp's lookup, stored by `initialize`.
static LOOKUP: OnceLock<Lookup> = OnceLock::new();
/// Correlation ids for tools with non-EMI callbacks (22.1 starts at 1).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub use super::hooks::{hooks, set_hooks};

/// Whether a tool listens. The one branch every hook costs without a tool.
#[inline(always)]
pub fn on() -> bool {
    if cfg!(feature = "bench-no-hooks") {
        return false;
    }
    ACTIVE.load(Ordering::Relaxed)
}

#[inline]
fn cbs() -> &'static Callbacks {
    // `on()` is only true after CALLBACKS was set.
    CALLBACKS.get_or_init(Callbacks::default)
}

/// Per-thread state of the construct in progress (22.1's `RegionInterface`).
struct Region {
    task_data: Cell<*mut OmptData>,
    target_task_data: Cell<*mut OmptData>,
    target_data: Cell<OmptData>,
    host_op_id: Cell<u64>,
}

thread_local! {
    static REGION: Region = const {
        Region {
            task_data: Cell::new(std::ptr::null_mut()),
            target_task_data: Cell::new(std::ptr::null_mut()),
            target_data: Cell::new(0),
            host_op_id: Cell::new(0),
        }
    };
}

/// The `ompt_start_tool_result_t` libomp keeps for us.
#[repr(C)]
struct StartToolResult {
    initialize: unsafe extern "C" fn(Lookup, c_int, *mut OmptData) -> c_int,
    finalize: unsafe extern "C" fn(*mut OmptData),
    tool_data: OmptData,
}

unsafe extern "C" fn initialize(lookup: Lookup, _initial_device: c_int, _tool_data: *mut OmptData) -> c_int {
    let _ = LOOKUP.set(lookup);
    0
}

unsafe extern "C" fn finalize(_tool_data: *mut OmptData) {}

/// Looks a libomp entry point up by name.
fn lookup(lookup: Lookup, name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: libomp's lookup takes a NUL-terminated name and returns NULL or the entry point.
    unsafe { lookup(name.as_ptr()) }
}

/// Connects to libomp once (22.1's `connectLibrary`, at runtime start).
/// Without libomp, or without a tool, nothing happens and every hook stays off.
pub fn connect() {
    CONNECT.call_once(connect_now);
}

#[cold]
fn connect_now() {
    let name = c"ompt_libomp_connect";
    // SAFETY: dlsym with a NUL-terminated name; the result is NULL or libomp's function.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if sym.is_null() {
        return;
    }
    static RESULT: StartToolResult = StartToolResult { initialize, finalize, tool_data: 0 };
    // SAFETY: `ompt_libomp_connect(ompt_start_tool_result_t *)` in libomp; it keeps the pointer, RESULT is static.
    let connect: unsafe extern "C" fn(*const StartToolResult) = unsafe { std::mem::transmute(sym) };
    // SAFETY: as above.
    unsafe { connect(&RESULT) };
    let Some(&lk) = LOOKUP.get() else {
        crate::debug!("OMPT: no tool attached");
        return;
    };
    let get_cb = lookup(lk, c"ompt_get_callback");
    if get_cb.is_null() {
        return;
    }
    // SAFETY: libomp's `ompt_get_callback` has the `ompt_get_callback_t` signature.
    let get_cb: GetCallback = unsafe { std::mem::transmute(get_cb) };
    let get = |code: c_int| -> *mut c_void {
        let mut f: *mut c_void = std::ptr::null_mut();
        // SAFETY: `f` is a live out-parameter; libomp writes the tool's callback or leaves it.
        if unsafe { get_cb(code, &mut f) } == 0 { std::ptr::null_mut() } else { f }
    };
    macro_rules! bind {
        ($code:expr, $ty:ty) => {{
            let p = get($code);
            // SAFETY: libomp returns the tool's callback for this code, whose signature omp-tools.h fixes.
            if p.is_null() { None } else { Some(unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }) }
        }};
    }
    let task = lookup(lk, c"ompt_get_task_data");
    let target_task = lookup(lk, c"ompt_get_target_task_data");
    let c = Callbacks {
        device_initialize: bind!(CB_DEVICE_INITIALIZE, DeviceInitialize),
        device_finalize: bind!(CB_DEVICE_FINALIZE, DeviceFinalize),
        device_load: bind!(CB_DEVICE_LOAD, DeviceLoad),
        target: bind!(CB_TARGET, Target),
        target_emi: bind!(CB_TARGET_EMI, TargetEmi),
        data_op: bind!(CB_TARGET_DATA_OP, DataOp),
        data_op_emi: bind!(CB_TARGET_DATA_OP_EMI, DataOpEmi),
        submit: bind!(CB_TARGET_SUBMIT, Submit),
        submit_emi: bind!(CB_TARGET_SUBMIT_EMI, SubmitEmi),
        // SAFETY: both have the `ompt_data_t *(*)(void)` signature.
        get_task_data: (!task.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, GetData>(task) }),
        // SAFETY: as above.
        get_target_task_data: (!target_task.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, GetData>(target_task) }),
    };
    let any = c.device_initialize.is_some()
        || c.device_finalize.is_some()
        || c.device_load.is_some()
        || c.target.is_some()
        || c.target_emi.is_some()
        || c.data_op.is_some()
        || c.data_op_emi.is_some()
        || c.submit.is_some()
        || c.submit_emi.is_some();
    let _ = CALLBACKS.set(c);
    crate::debug!("OMPT: tool attached, offloading callbacks {}", if any { "registered" } else { "none" });
    ACTIVE.store(any, Ordering::Release);
    if any {
        set_hooks();
    }
}

fn new_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Device lookup handed to `device_initialize` for a device without a clock
/// (the host plugin): no device tracing entry points, as in 22.1.
unsafe extern "C" fn device_lookup(_name: *const c_char) -> *mut c_void {
    std::ptr::null_mut()
}

/// A device as OMPT knows it: the handle tools get (`ompt_device_t *`),
/// and where its clock is.
#[derive(Clone, Copy)]
pub(crate) struct DeviceEntry {
    pub handle: usize,
    pub plugin: &'static dyn crate::plugins::Plugin,
    pub plugin_device: usize,
}

/// Every device the device layer exposed, by number (append-only).
static DEVICES: [OnceLock<DeviceEntry>; crate::plugins::MAX_DEVICES] = [const { OnceLock::new() }; crate::plugins::MAX_DEVICES];
/// Number of devices exposed: the initial device's number.
static DEVICE_COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The OMPT entry of device `id`.
pub(crate) fn device_entry(id: usize) -> Option<DeviceEntry> {
    DEVICES.get(id)?.get().copied()
}

/// The device an `ompt_device_t *` names, if any.
pub(crate) fn device_by_handle(handle: usize) -> Option<usize> {
    (0..DEVICE_COUNT.load(Ordering::Acquire)).find(|&i| device_entry(i).is_some_and(|e| e.handle == handle))
}

/// A device was exposed as number `device` (the device layer calls this
/// for every device): OMPT records it and, when a tool listens, calls its
/// `device_initialize` (22.1: when the plugin initialises the device). The
/// lookup offers the device tracing entry points where the plugin has a clock.
pub fn device_initialize(device: usize, handle: usize, plugin: &'static dyn crate::plugins::Plugin, plugin_device: usize) {
    if let Some(slot) = DEVICES.get(device) {
        let _ = slot.set(DeviceEntry { handle, plugin, plugin_device });
        DEVICE_COUNT.fetch_max(device + 1, Ordering::AcqRel);
    }
    if on() {
        device_initialize_callback(device, handle, plugin, plugin_device);
    }
}

#[cold]
#[inline(never)]
fn device_initialize_callback(device: usize, handle: usize, plugin: &'static dyn crate::plugins::Plugin, plugin_device: usize) {
    if let Some(f) = cbs().device_initialize {
        let kind = std::ffi::CString::new(plugin.compute_unit_kind(plugin_device)).unwrap_or_default();
        let lookup: Lookup = if plugin.traceable() { trace::lookup } else { device_lookup };
        // SAFETY: the tool's callback with the arguments omp-tools.h gives it; `kind` lives for the call.
        unsafe { f(device as c_int, kind.as_ptr(), handle as *mut c_void, Some(lookup), std::ptr::null()) };
    }
}

/// `device_finalize` (22.1: when the device is deinitialised at shutdown).
#[cold]
#[inline(never)]
pub fn device_finalize(device: usize) {
    if let Some(f) = cbs().device_finalize {
        // SAFETY: the tool's callback.
        unsafe { f(device as c_int) };
    }
}

/// `device_load` after an image was loaded: 22.1 passes the image's host bytes.
#[cold]
#[inline(never)]
pub fn device_load(device: usize, image: &[u8]) {
    if let Some(f) = cbs().device_load {
        let (p, n) = (image.as_ptr() as *mut c_void, image.len());
        // SAFETY: the tool's callback; no file name, offset 0, module id 0 as in 22.1.
        unsafe { f(device as c_int, std::ptr::null(), 0, std::ptr::null_mut(), n, p, std::ptr::null_mut(), 0) };
    }
}

/// Start of a target construct (22.1's `beginTarget*`): sets up the thread's
/// task data and dispatches `target(_emi)` begin.
#[cold]
#[inline(never)]
fn target_begin(kind: Kind, device: i64, codeptr: usize) {
    let codeptr = codeptr as *const c_void;
    let c = cbs();
    REGION.with(|r| {
        // SAFETY: libomp's task-data accessors take no arguments.
        r.task_data.set(c.get_task_data.map_or(std::ptr::null_mut(), |f| unsafe { f() }));
        // SAFETY: as above.
        r.target_task_data.set(c.get_target_task_data.map_or(std::ptr::null_mut(), |f| unsafe { f() }));
        if let Some(f) = c.target_emi {
            // SAFETY: the tool's callback; the pointers are this thread's live slots.
            unsafe {
                f(kind as c_int, SCOPE_BEGIN, device as c_int, r.task_data.get(), r.target_task_data.get(), r.target_data.as_ptr(), codeptr)
            };
        } else if let Some(f) = c.target {
            // 22.1 hands out a new target id for every kind but enter data.
            if kind != Kind::EnterData {
                r.target_data.set(new_id());
            }
            // SAFETY: the tool's callback.
            unsafe { f(kind as c_int, SCOPE_BEGIN, device as c_int, r.task_data.get(), r.target_data.get(), codeptr) };
        }
    });
    if trace::any() {
        trace::construct_begin(device, kind as c_int, SCOPE_BEGIN, codeptr);
    }
}

/// End of a target construct (22.1's `endTarget*`).
#[cold]
#[inline(never)]
fn target_end(kind: Kind, device: i64, codeptr: usize) {
    let codeptr = codeptr as *const c_void;
    let c = cbs();
    REGION.with(|r| {
        if let Some(f) = c.target_emi {
            // SAFETY: the tool's callback; the pointers are this thread's live slots.
            unsafe {
                f(kind as c_int, SCOPE_END, device as c_int, r.task_data.get(), r.target_task_data.get(), r.target_data.as_ptr(), codeptr)
            };
        } else if let Some(f) = c.target {
            // SAFETY: the tool's callback.
            unsafe { f(kind as c_int, SCOPE_END, device as c_int, r.task_data.get(), r.target_data.get(), codeptr) };
        }
        if trace::any() {
            trace::construct_point(device, kind as c_int, SCOPE_END, codeptr);
        }
        r.task_data.set(std::ptr::null_mut());
        r.target_task_data.set(std::ptr::null_mut());
        r.target_data.set(0);
    });
}

/// One data operation, begin or end: source and destination as 22.1 names them.
#[allow(clippy::too_many_arguments)] // The callback's own argument list.
fn data_op(begin: bool, dev: usize, op: Op, src: usize, src_dev: i64, dst: usize, dst_dev: i64, bytes: u64, codeptr: *const c_void) {
    if trace::any() && begin {
        trace::op_begin(dev, trace::DATA_OP);
    }
    let c = cbs();
    REGION.with(|r| {
        let (s, d) = (src as *mut c_void, dst as *mut c_void);
        if let Some(f) = c.data_op_emi {
            let ep = if begin { SCOPE_BEGIN } else { SCOPE_END };
            // SAFETY: the tool's callback; the pointers are this thread's live slots.
            unsafe {
                f(
                    ep,
                    r.target_task_data.get(),
                    r.target_data.as_ptr(),
                    r.host_op_id.as_ptr(),
                    op as c_int,
                    s,
                    src_dev as c_int,
                    d,
                    dst_dev as c_int,
                    bytes as usize,
                    codeptr,
                )
            };
        } else if begin && let Some(f) = c.data_op {
            let id = new_id();
            r.host_op_id.set(id);
            // SAFETY: the tool's callback.
            unsafe { f(r.target_data.get(), id, op as c_int, s, src_dev as c_int, d, dst_dev as c_int, bytes as usize, codeptr) };
        }
    });
    if trace::any() && !begin {
        trace::data_op_end(dev, op as c_int, src, src_dev, dst, dst_dev, bytes, codeptr);
    }
}

/// The host device number as 22.1's copies report it (`omp_get_initial_device()`).
fn host_device() -> i64 {
    DEVICE_COUNT.load(Ordering::Acquire) as i64
}

/// Device allocation: begin (target pointer not known yet) or end.
#[cold]
#[inline(never)]
pub fn alloc(begin: bool, device: usize, host: usize, tgt: u64, bytes: u64) {
    data_op(begin, device, Op::Alloc, host, host_device(), tgt as usize, device as i64, bytes, codeptr_placeholder());
}

/// Device deallocation.
#[cold]
#[inline(never)]
pub fn delete(begin: bool, device: usize, tgt: u64) {
    data_op(begin, device, Op::Delete, tgt as usize, device as i64, 0, INITIAL_DEVICE, 0, codeptr_placeholder());
}

/// Host → device copy.
#[cold]
#[inline(never)]
pub fn to_device(begin: bool, device: usize, host: usize, tgt: u64, bytes: u64) {
    data_op(begin, device, Op::ToDevice, host, host_device(), tgt as usize, device as i64, bytes, codeptr_placeholder());
}

/// Device → host copy.
#[cold]
#[inline(never)]
pub fn from_device(begin: bool, device: usize, tgt: u64, host: usize, bytes: u64) {
    let (staging, shown) = SHOWN_AS.get();
    let host = if staging != 0 && host == staging { shown } else { host };
    data_op(begin, device, Op::FromDevice, tgt as usize, device as i64, host, host_device(), bytes, codeptr_placeholder());
}

thread_local! {
    /// A host buffer that stands for another host address in this thread's
    /// copies from the device (see [`showing_host_as`]).
    static SHOWN_AS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// Runs `f`, in which a copy from the device into the host buffer `staging`
/// is reported to tools as a copy to `shown`: the copy of a list item that
/// lands in a staging buffer first is the list item's copy for the tool.
pub fn showing_host_as<R>(staging: usize, shown: usize, f: impl FnOnce() -> R) -> R {
    let before = SHOWN_AS.replace((staging, shown));
    let r = f();
    SHOWN_AS.set(before);
    r
}

/// Whether work queued for `device` must be waited for before an
/// operation's end is reported: its trace needs the completion time.
#[inline]
pub fn wait_queued(device: usize) -> bool {
    trace::any() && trace::enabled_any(device, (1 << trace::DATA_OP) | (1 << trace::SUBMIT))
}

/// Device → device copy (reported as 22.1 does: a transfer from the source device).
#[cold]
#[inline(never)]
pub fn exchange(begin: bool, src_dev: usize, src: u64, dst_dev: usize, dst: u64, bytes: u64) {
    data_op(begin, src_dev, Op::FromDevice, src as usize, src_dev as i64, dst as usize, dst_dev as i64, bytes, codeptr_placeholder());
}

/// `omp_target_associate_ptr` / `omp_target_disassociate_ptr`.
#[cold]
#[inline(never)]
pub fn associate(begin: bool, associate: bool, device: i64, host: usize, tgt: usize, bytes: u64) {
    let op = if associate { Op::Associate } else { Op::Disassociate };
    data_op(begin, usize::try_from(device).unwrap_or(usize::MAX), op, host, host_device(), tgt, device, bytes, codeptr_placeholder());
}

/// Kernel submission with the requested number of teams.
#[cold]
#[inline(never)]
pub fn submit(begin: bool, device: usize, teams: u32) {
    if trace::any() && begin {
        trace::op_begin(device, trace::SUBMIT);
    }
    let c = cbs();
    REGION.with(|r| {
        if let Some(f) = c.submit_emi {
            let ep = if begin { SCOPE_BEGIN } else { SCOPE_END };
            // SAFETY: the tool's callback; the pointers are this thread's live slots.
            unsafe { f(ep, r.target_data.as_ptr(), r.host_op_id.as_ptr(), teams) };
        } else if begin && let Some(f) = c.submit {
            let id = new_id();
            r.host_op_id.set(id);
            // SAFETY: the tool's callback.
            unsafe { f(r.target_data.get(), id, teams) };
        }
    });
    if trace::any() && !begin {
        trace::submit_end(device, teams);
    }
}

thread_local! {
    /// The `codeptr_ra` pinned for the construct in progress (0: none).
    static CODEPTR: Cell<usize> = const { Cell::new(0) };
}

/// Pins the code address reported for the construct in progress.
#[inline]
pub fn set_codeptr(p: usize) {
    CODEPTR.with(|c| c.set(p));
}

/// `codeptr_ra` for a data operation: the construct's pinned address, else
/// (the `omp_target_*` API) the entry point's return address, else (off
/// x86_64) this module's entry.
fn codeptr_placeholder() -> *const c_void {
    match CODEPTR.with(|c| c.get()) {
        0 => match ra::last_entry() {
            0 => connect as *const c_void,
            p => p as *const c_void,
        },
        p => p as *const c_void,
    }
}

/// How deep constructs begun by [`construct_begin`] nest on one thread
/// (a construct inside a mapper or a fallback); deeper ones are not reported.
const MAX_OPEN: usize = 8;

thread_local! {
    /// Constructs begun on this thread, innermost at `OPEN_DEPTH - 1`. Plain
    /// cells (no destructor): constructs in `atexit` handlers run after
    /// thread-local destructors, where a `RefCell<Vec>` is gone.
    static OPEN: [Cell<Option<(Kind, i64, usize)>>; MAX_OPEN] = const { [const { Cell::new(None) }; MAX_OPEN] };
    static OPEN_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Begins a construct for the tool and the profile (callers test [`hooks`]).
#[cold]
#[inline(never)]
pub fn construct_begin(kind: Kind, device: i64, codeptr: usize, name: &'static str, detail: &dyn Fn() -> String) {
    crate::tools::profile::begin(name, detail);
    let depth = OPEN_DEPTH.with(|d| d.get());
    // 22.1: the outermost entry's return address (read before the construct's
    // mappers and callbacks run); a nested construct keeps the outer one; off
    // x86_64 the caller's `codeptr`.
    let codeptr = match (depth, CODEPTR.with(|c| c.get()), ra::last_entry()) {
        (0, _, 0) | (_, 0, 0) => codeptr,
        (0, _, ra) | (_, 0, ra) => ra,
        (_, outer, _) => outer,
    };
    if on() {
        set_codeptr(codeptr);
        target_begin(kind, device, codeptr);
    }
    OPEN_DEPTH.with(|d| d.set(depth + 1));
    if depth < MAX_OPEN {
        OPEN.with(|o| o[depth].set(Some((kind, device, codeptr))));
    }
}

/// Ends the innermost construct [`construct_begin`] began on this thread
/// (no arguments: the fast path keeps nothing alive for it).
#[cold]
#[inline(never)]
pub fn construct_end() {
    let Some(depth) = OPEN_DEPTH.with(|d| d.get().checked_sub(1).inspect(|&n| d.set(n))) else { return };
    let open = if depth < MAX_OPEN { OPEN.with(|o| o[depth].take()) } else { None };
    if let Some((kind, device, codeptr)) = open
        && on()
    {
        target_end(kind, device, codeptr);
    }
    // Back to the enclosing construct's address, or none.
    let outer = depth.checked_sub(1).filter(|&d| d < MAX_OPEN).and_then(|d| OPEN.with(|o| o[d].get())).map_or(0, |(_, _, p)| p);
    set_codeptr(outer);
    crate::tools::profile::end();
}
