//! The declaration list of 22.1's liboffload API: one line per entry point
//! names the function, its `...WithCodeLoc` twin, its parameters (names as in
//! `OffloadAPI.h`, which the trace prints) and the inner function that
//! implements it. `ol_api!` generates both exports of each line; build.rs
//! reads the same lines (`fn olName / olNameWithCodeLoc(`) for the `VERS1.0`
//! version script.

use crate::liboffload::imp;
use crate::liboffload::types::*;
use core::ffi::{c_char, c_void};

macro_rules! ol_api {
    ($( fn $name:ident / $loc:ident ( $($arg:ident : $ty:ty),* ) => $imp:ident; )*) => {
        $(
            #[doc = concat!("`", stringify!($name), "` of LLVM 22.1's liboffload (see `OffloadAPI.h`).")]
            ///
            /// # Safety
            /// Pointers must satisfy the header's contract for this call;
            /// NULL handles and pointers, unknown handles and enumerations
            /// are reported as errors.
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> crate::liboffload::OlResultPtr {
                crate::liboffload::entry(stringify!($name), |_out: &mut String, _ok: bool| {
                    let mut _first = true;
                    $(
                        if !_first { _out.push_str(", "); }
                        _first = false;
                        _out.push_str(concat!(".", stringify!($arg), " = "));
                        TraceArg::trace(&$arg, _out);
                        if _ok { TraceArg::trace_out(&$arg, _out); }
                    )*
                }, || imp::$imp($($arg),*))
            }

            #[doc = concat!("`", stringify!($loc), "`: `", stringify!($name), "` with the caller's code location.")]
            ///
            /// # Safety
            #[doc = concat!("As `", stringify!($name), "`; `CodeLocation` may be NULL.")]
            #[unsafe(no_mangle)]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn $loc($($arg: $ty,)* CodeLocation: *const CodeLocation) -> crate::liboffload::OlResultPtr {
                let _ = CodeLocation;
                // SAFETY: same arguments, same contract.
                unsafe { $name($($arg),*) }
            }
        )*

        /// Every export this list generates, in list order.
        pub const EXPORTS: &[&str] = &[$(stringify!($name), stringify!($loc)),*];
    };
}

/// The declaration list of another generation of the API: the same line
/// shape as 22.1's list, each line naming the inner function (a path: 22.1's
/// `imp` where the meaning is 22.1's, the generation's own module where it
/// differs). Each function and its twin are exported under hidden-prefixed
/// names, `__omptarget_rs_<gen>_<name>`, that the generation's library file
/// (a shim build.rs makes from the same lines) forwards its `ol*` names to:
/// one copy of the runtime serves every generation.
macro_rules! ol_generation_api {
    ($gen:expr, $prefix:literal, $($(#[$m:meta])* fn $name:ident / $loc:ident ( $($arg:ident : $ty:ty),* ) => $imp:path;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "` of this generation, exported as `", $prefix, stringify!($name), "`.")]
            ///
            /// # Safety
            /// Pointers must satisfy the generation's header contract for this
            /// call; NULL handles and pointers, unknown handles and
            /// enumerations are reported as errors.
            $(#[$m])*
            #[unsafe(export_name = concat!($prefix, stringify!($name)))]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> crate::liboffload::OlResultPtr {
                crate::liboffload::entry_of($gen, stringify!($name), |_out: &mut String, _ok: bool| {
                    let mut _first = true;
                    $(
                        if !_first { _out.push_str(", "); }
                        _first = false;
                        _out.push_str(concat!(".", stringify!($arg), " = "));
                        crate::liboffload::types::TraceArg::trace(&$arg, _out);
                        if _ok { crate::liboffload::types::TraceArg::trace_out(&$arg, _out); }
                    )*
                }, || $imp($($arg),*))
            }

            #[doc = concat!("`", stringify!($loc), "`: `", stringify!($name), "` with the caller's code location.")]
            ///
            /// # Safety
            #[doc = concat!("As `", stringify!($name), "`; `CodeLocation` may be NULL.")]
            $(#[$m])*
            #[unsafe(export_name = concat!($prefix, stringify!($loc)))]
            #[allow(non_snake_case)]
            pub unsafe extern "C" fn $loc($($arg: $ty,)* CodeLocation: *const crate::liboffload::types::CodeLocation) -> crate::liboffload::OlResultPtr {
                let _ = CodeLocation;
                // SAFETY: same arguments, same contract.
                unsafe { $name($($arg),*) }
            }
        )*

        /// The generation's `ol*` names in list order (each function, then its twin).
        pub const EXPORTS: &[&str] = &[$(stringify!($name), stringify!($loc)),*];
        /// The prefix of the names the library exports them under.
        pub const PREFIX: &str = $prefix;
    };
}
pub(crate) use ol_generation_api;

ol_api! {
    fn olInit / olInitWithCodeLoc() => init;
    fn olShutDown / olShutDownWithCodeLoc() => shut_down;
    fn olIterateDevices / olIterateDevicesWithCodeLoc(Callback: IterateCb, UserData: *mut c_void) => iterate_devices;
    fn olGetDeviceInfo / olGetDeviceInfoWithCodeLoc(Device: DeviceH, PropName: DeviceInfo, PropSize: usize, PropValue: *mut c_void) => get_device_info;
    fn olGetDeviceInfoSize / olGetDeviceInfoSizeWithCodeLoc(Device: DeviceH, PropName: DeviceInfo, PropSizeRet: *mut usize) => get_device_info_size;
    fn olGetPlatformInfo / olGetPlatformInfoWithCodeLoc(Platform: PlatformH, PropName: PlatformInfo, PropSize: usize, PropValue: *mut c_void) => get_platform_info;
    fn olGetPlatformInfoSize / olGetPlatformInfoSizeWithCodeLoc(Platform: PlatformH, PropName: PlatformInfo, PropSizeRet: *mut usize) => get_platform_info_size;
    fn olMemAlloc / olMemAllocWithCodeLoc(Device: DeviceH, Type: AllocType, Size: usize, AllocationOut: *mut *mut c_void) => mem_alloc;
    fn olMemFree / olMemFreeWithCodeLoc(Address: *mut c_void) => mem_free;
    fn olGetMemInfo / olGetMemInfoWithCodeLoc(Ptr: *const c_void, PropName: MemInfo, PropSize: usize, PropValue: *mut c_void) => get_mem_info;
    fn olGetMemInfoSize / olGetMemInfoSizeWithCodeLoc(Ptr: *const c_void, PropName: MemInfo, PropSizeRet: *mut usize) => get_mem_info_size;
    fn olMemcpy / olMemcpyWithCodeLoc(Queue: QueueH, DstPtr: *mut c_void, DstDevice: DeviceH, SrcPtr: *const c_void, SrcDevice: DeviceH, Size: usize) => memcpy;
    fn olMemFill / olMemFillWithCodeLoc(Queue: QueueH, Ptr: *mut c_void, PatternSize: usize, PatternPtr: *const c_void, FillSize: usize) => mem_fill;
    fn olMemRegister / olMemRegisterWithCodeLoc(Device: DeviceH, Ptr: *mut c_void, Size: usize, Flags: u32, PinnedPtr: *mut *mut c_void) => mem_register;
    fn olMemUnregister / olMemUnregisterWithCodeLoc(Device: DeviceH, Ptr: *mut c_void) => mem_unregister;
    fn olCreateQueue / olCreateQueueWithCodeLoc(Device: DeviceH, Queue: *mut QueueH) => create_queue;
    fn olDestroyQueue / olDestroyQueueWithCodeLoc(Queue: QueueH) => destroy_queue;
    fn olSyncQueue / olSyncQueueWithCodeLoc(Queue: QueueH) => sync_queue;
    fn olWaitEvents / olWaitEventsWithCodeLoc(Queue: QueueH, Events: *const EventH, NumEvents: usize) => wait_events;
    fn olGetQueueInfo / olGetQueueInfoWithCodeLoc(Queue: QueueH, PropName: QueueInfo, PropSize: usize, PropValue: *mut c_void) => get_queue_info;
    fn olGetQueueInfoSize / olGetQueueInfoSizeWithCodeLoc(Queue: QueueH, PropName: QueueInfo, PropSizeRet: *mut usize) => get_queue_info_size;
    fn olLaunchHostFunction / olLaunchHostFunctionWithCodeLoc(Queue: QueueH, Callback: HostFunctionCb, UserData: *mut c_void) => launch_host_function;
    fn olCreateEvent / olCreateEventWithCodeLoc(Queue: QueueH, Event: *mut EventH) => create_event;
    fn olDestroyEvent / olDestroyEventWithCodeLoc(Event: EventH) => destroy_event;
    fn olSyncEvent / olSyncEventWithCodeLoc(Event: EventH) => sync_event;
    fn olGetEventInfo / olGetEventInfoWithCodeLoc(Event: EventH, PropName: EventInfo, PropSize: usize, PropValue: *mut c_void) => get_event_info;
    fn olGetEventInfoSize / olGetEventInfoSizeWithCodeLoc(Event: EventH, PropName: EventInfo, PropSizeRet: *mut usize) => get_event_info_size;
    fn olIsValidBinary / olIsValidBinaryWithCodeLoc(Device: DeviceH, ProgData: *const c_void, ProgDataSize: usize, Valid: *mut bool) => is_valid_binary;
    fn olCreateProgram / olCreateProgramWithCodeLoc(Device: DeviceH, ProgData: *const c_void, ProgDataSize: usize, Program: *mut ProgramH) => create_program;
    fn olDestroyProgram / olDestroyProgramWithCodeLoc(Program: ProgramH) => destroy_program;
    fn olGetSymbol / olGetSymbolWithCodeLoc(Program: ProgramH, Name: *const c_char, Kind: SymbolKind, Symbol: *mut SymbolH) => get_symbol;
    fn olGetSymbolInfo / olGetSymbolInfoWithCodeLoc(Symbol: SymbolH, PropName: SymbolInfo, PropSize: usize, PropValue: *mut c_void) => get_symbol_info;
    fn olGetSymbolInfoSize / olGetSymbolInfoSizeWithCodeLoc(Symbol: SymbolH, PropName: SymbolInfo, PropSizeRet: *mut usize) => get_symbol_info_size;
    fn olLaunchKernel / olLaunchKernelWithCodeLoc(Queue: QueueH, Device: DeviceH, Kernel: SymbolH, ArgumentsData: *const c_void, ArgumentsSize: usize, LaunchSizeArgs: *const LaunchSizeArgs) => launch_kernel;
    fn olCalculateOptimalOccupancy / olCalculateOptimalOccupancyWithCodeLoc(Device: DeviceH, Kernel: SymbolH, SharedMemory: usize, GroupSize: *mut usize) => calculate_optimal_occupancy;
}
