//! The declaration list of LLVM 23's liboffload API (38 functions, 76
//! exports; LLVM's main branch names its library `libLLVMOffload.so.23.0git`,
//! the release `libLLVMOffload.so.23.1`): one line per entry point, in the
//! shape of 22.1's list (`src/c_api/liboffload.rs`). Lines whose meaning is
//! 22.1's name 22.1's inner function (run in 23's device model); the rest
//! name `liboffload::v23`: `olInit` with its arguments, `olMemcpy` refusing
//! a queued host-to-host copy, `olMemUnregister` with flags, the
//! `*_FP_SUPPORT` device properties, and the three functions 22.1 lacks.
//! build.rs reads these lines for the library's hidden-prefixed exports and
//! for the shim.

use crate::liboffload::types::*;
use crate::liboffload::{imp, v23};
use core::ffi::{c_char, c_void};

super::liboffload::ol_generation_api! {
    crate::liboffload::generation::Gen::V23, "__omptarget_rs_ol23_",
    fn olInit / olInitWithCodeLoc(InitArgs: InitArgsP) => v23::init;
    fn olShutDown / olShutDownWithCodeLoc() => v23::shut_down;
    fn olIterateDevices / olIterateDevicesWithCodeLoc(Callback: IterateCb, UserData: *mut c_void) => imp::iterate_devices;
    fn olGetDeviceInfo / olGetDeviceInfoWithCodeLoc(Device: DeviceH, PropName: DeviceInfo23, PropSize: usize, PropValue: *mut c_void) => v23::get_device_info;
    fn olGetDeviceInfoSize / olGetDeviceInfoSizeWithCodeLoc(Device: DeviceH, PropName: DeviceInfo23, PropSizeRet: *mut usize) => v23::get_device_info_size;
    fn olGetPlatformInfo / olGetPlatformInfoWithCodeLoc(Platform: PlatformH, PropName: PlatformInfo, PropSize: usize, PropValue: *mut c_void) => imp::get_platform_info;
    fn olGetPlatformInfoSize / olGetPlatformInfoSizeWithCodeLoc(Platform: PlatformH, PropName: PlatformInfo, PropSizeRet: *mut usize) => imp::get_platform_info_size;
    fn olPlatformRegisterRPCCallback / olPlatformRegisterRPCCallbackWithCodeLoc(Platform: PlatformH, Callback: RpcCb) => v23::platform_register_rpc_callback;
    fn olMemAlloc / olMemAllocWithCodeLoc(Device: DeviceH, Type: AllocType, Size: usize, AllocationOut: *mut *mut c_void) => imp::mem_alloc;
    fn olMemFree / olMemFreeWithCodeLoc(Address: *mut c_void) => imp::mem_free;
    fn olGetMemInfo / olGetMemInfoWithCodeLoc(Ptr: *const c_void, PropName: MemInfo, PropSize: usize, PropValue: *mut c_void) => imp::get_mem_info;
    fn olGetMemInfoSize / olGetMemInfoSizeWithCodeLoc(Ptr: *const c_void, PropName: MemInfo, PropSizeRet: *mut usize) => imp::get_mem_info_size;
    fn olMemcpy / olMemcpyWithCodeLoc(Queue: QueueH, DstPtr: *mut c_void, DstDevice: DeviceH, SrcPtr: *const c_void, SrcDevice: DeviceH, Size: usize) => v23::memcpy;
    fn olMemFill / olMemFillWithCodeLoc(Queue: QueueH, Ptr: *mut c_void, PatternSize: usize, PatternPtr: *const c_void, FillSize: usize) => imp::mem_fill;
    fn olMemRegister / olMemRegisterWithCodeLoc(Device: DeviceH, Ptr: *mut c_void, Size: usize, Flags: u32, LockedPtr: *mut *mut c_void) => v23::mem_register;
    fn olMemUnregister / olMemUnregisterWithCodeLoc(Device: DeviceH, Ptr: *mut c_void, Flags: u32) => v23::mem_unregister;
    fn olCreateQueue / olCreateQueueWithCodeLoc(Device: DeviceH, Queue: *mut QueueH) => imp::create_queue;
    fn olDestroyQueue / olDestroyQueueWithCodeLoc(Queue: QueueH) => imp::destroy_queue;
    fn olSyncQueue / olSyncQueueWithCodeLoc(Queue: QueueH) => imp::sync_queue;
    fn olQueryQueue / olQueryQueueWithCodeLoc(Queue: QueueH, IsQueueWorkCompleted: *mut bool) => v23::query_queue;
    fn olWaitEvents / olWaitEventsWithCodeLoc(Queue: QueueH, Events: *const EventH, NumEvents: usize) => imp::wait_events;
    fn olGetQueueInfo / olGetQueueInfoWithCodeLoc(Queue: QueueH, PropName: QueueInfo, PropSize: usize, PropValue: *mut c_void) => imp::get_queue_info;
    fn olGetQueueInfoSize / olGetQueueInfoSizeWithCodeLoc(Queue: QueueH, PropName: QueueInfo, PropSizeRet: *mut usize) => imp::get_queue_info_size;
    fn olLaunchHostFunction / olLaunchHostFunctionWithCodeLoc(Queue: QueueH, Callback: HostFunctionCb, UserData: *mut c_void) => imp::launch_host_function;
    fn olCreateEvent / olCreateEventWithCodeLoc(Queue: QueueH, Event: *mut EventH) => imp::create_event;
    fn olDestroyEvent / olDestroyEventWithCodeLoc(Event: EventH) => imp::destroy_event;
    fn olSyncEvent / olSyncEventWithCodeLoc(Event: EventH) => imp::sync_event;
    fn olGetEventElapsedTime / olGetEventElapsedTimeWithCodeLoc(StartEvent: EventH, EndEvent: EventH, ElapsedTime: *mut f32) => v23::get_event_elapsed_time;
    fn olGetEventInfo / olGetEventInfoWithCodeLoc(Event: EventH, PropName: EventInfo, PropSize: usize, PropValue: *mut c_void) => imp::get_event_info;
    fn olGetEventInfoSize / olGetEventInfoSizeWithCodeLoc(Event: EventH, PropName: EventInfo, PropSizeRet: *mut usize) => imp::get_event_info_size;
    fn olIsValidBinary / olIsValidBinaryWithCodeLoc(Device: DeviceH, ProgData: *const c_void, ProgDataSize: usize, Valid: *mut bool) => imp::is_valid_binary;
    fn olCreateProgram / olCreateProgramWithCodeLoc(Device: DeviceH, ProgData: *const c_void, ProgDataSize: usize, Program: *mut ProgramH) => imp::create_program;
    fn olDestroyProgram / olDestroyProgramWithCodeLoc(Program: ProgramH) => imp::destroy_program;
    fn olGetSymbol / olGetSymbolWithCodeLoc(Program: ProgramH, Name: *const c_char, Kind: SymbolKind, Symbol: *mut SymbolH) => imp::get_symbol;
    fn olGetSymbolInfo / olGetSymbolInfoWithCodeLoc(Symbol: SymbolH, PropName: SymbolInfo, PropSize: usize, PropValue: *mut c_void) => imp::get_symbol_info;
    fn olGetSymbolInfoSize / olGetSymbolInfoSizeWithCodeLoc(Symbol: SymbolH, PropName: SymbolInfo, PropSizeRet: *mut usize) => imp::get_symbol_info_size;
    fn olLaunchKernel / olLaunchKernelWithCodeLoc(Queue: QueueH, Device: DeviceH, Kernel: SymbolH, ArgumentsData: *const c_void, ArgumentsSize: usize, LaunchSizeArgs: *const LaunchSizeArgs) => imp::launch_kernel;
    fn olCalculateOptimalOccupancy / olCalculateOptimalOccupancyWithCodeLoc(Device: DeviceH, Kernel: SymbolH, SharedMemory: usize, GroupSize: *mut usize) => imp::calculate_optimal_occupancy;
}
