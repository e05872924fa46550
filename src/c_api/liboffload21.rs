//! The declaration list of LLVM 21's liboffload API (19 functions, 38
//! exports), served by `libLLVMOffload.so.21.1`: one line per entry point,
//! in the shape of 22.1's list (`src/c_api/liboffload.rs`). Where 21's
//! form is 22.1's the line names 22.1's inner function; where it differs
//! (`olGetKernel`, `olWaitQueue`, `olWaitEvent`, the `EventOut` parameters,
//! 21's device-info numbering) it names `liboffload::v21`. build.rs reads
//! these lines for the library's hidden-prefixed exports and for the shim.

use crate::liboffload::types::*;
use crate::liboffload::{imp, v21};
use core::ffi::{c_char, c_void};

super::liboffload::ol_generation_api! {
    crate::liboffload::generation::Gen::V21, "__omptarget_rs_ol21_",
    fn olInit / olInitWithCodeLoc() => imp::init;
    fn olShutDown / olShutDownWithCodeLoc() => imp::shut_down;
    fn olGetPlatformInfo / olGetPlatformInfoWithCodeLoc(Platform: PlatformH, PropName: PlatformInfo, PropSize: usize, PropValue: *mut c_void) => v21::get_platform_info;
    fn olGetPlatformInfoSize / olGetPlatformInfoSizeWithCodeLoc(Platform: PlatformH, PropName: PlatformInfo, PropSizeRet: *mut usize) => v21::get_platform_info_size;
    fn olIterateDevices / olIterateDevicesWithCodeLoc(Callback: IterateCb, UserData: *mut c_void) => imp::iterate_devices;
    fn olGetDeviceInfo / olGetDeviceInfoWithCodeLoc(Device: DeviceH, PropName: DeviceInfo21, PropSize: usize, PropValue: *mut c_void) => v21::get_device_info;
    fn olGetDeviceInfoSize / olGetDeviceInfoSizeWithCodeLoc(Device: DeviceH, PropName: DeviceInfo21, PropSizeRet: *mut usize) => v21::get_device_info_size;
    fn olMemAlloc / olMemAllocWithCodeLoc(Device: DeviceH, Type: AllocType, Size: usize, AllocationOut: *mut *mut c_void) => imp::mem_alloc;
    fn olMemFree / olMemFreeWithCodeLoc(Address: *mut c_void) => imp::mem_free;
    #[allow(clippy::too_many_arguments)]
    fn olMemcpy / olMemcpyWithCodeLoc(Queue: QueueH, DstPtr: *mut c_void, DstDevice: DeviceH, SrcPtr: *const c_void, SrcDevice: DeviceH, Size: usize, EventOut: *mut EventH) => v21::memcpy;
    fn olCreateQueue / olCreateQueueWithCodeLoc(Device: DeviceH, Queue: *mut QueueH) => imp::create_queue;
    fn olDestroyQueue / olDestroyQueueWithCodeLoc(Queue: QueueH) => imp::destroy_queue;
    fn olWaitQueue / olWaitQueueWithCodeLoc(Queue: QueueH) => imp::sync_queue;
    fn olWaitEvent / olWaitEventWithCodeLoc(Event: EventH) => imp::sync_event;
    fn olDestroyEvent / olDestroyEventWithCodeLoc(Event: EventH) => imp::destroy_event;
    fn olCreateProgram / olCreateProgramWithCodeLoc(Device: DeviceH, ProgData: *const c_void, ProgDataSize: usize, Program: *mut ProgramH) => imp::create_program;
    fn olDestroyProgram / olDestroyProgramWithCodeLoc(Program: ProgramH) => imp::destroy_program;
    fn olGetKernel / olGetKernelWithCodeLoc(Program: ProgramH, KernelName: *const c_char, Kernel: *mut KernelH) => v21::get_kernel;
    #[allow(clippy::too_many_arguments)]
    fn olLaunchKernel / olLaunchKernelWithCodeLoc(Queue: QueueH, Device: DeviceH, Kernel: KernelH, ArgumentsData: *const c_void, ArgumentsSize: usize, LaunchSizeArgs: *const LaunchSizeArgs, EventOut: *mut EventH) => v21::launch_kernel;
}
