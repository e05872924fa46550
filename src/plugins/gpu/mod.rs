//! What both GPU plugins share: the launch-grid rules of LLVM's GPU
//! plugins, the device memory manager, the kernel environment and the
//! device environment of OpenMP device images.

pub mod grid;
pub mod kernel_env;
pub mod memory;

/// `DeviceEnvironmentTy` (abi-reference §7.1), written into
/// `__omp_rtl_device_environment` when an image defines it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceEnvironment {
    pub device_debug_kind: u32,
    pub num_devices: u32,
    pub device_num: u32,
    pub dynamic_mem_size: u32,
    pub clock_frequency: u64,
    pub indirect_call_table: u64,
    pub indirect_call_table_size: u64,
    pub hardware_parallelism: u64,
}
const _: () = assert!(size_of::<DeviceEnvironment>() == 48);

/// Name of the device-environment global of the OpenMP device runtime.
pub const DEVICE_ENVIRONMENT_SYMBOL: &str = "__omp_rtl_device_environment";
