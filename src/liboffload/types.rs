//! C-ABI types of 22.1's `OffloadAPI.h` and their trace formatting
//! (`OFFLOAD_TRACE=1` prints every argument as 22.1 does: pointers in hex or
//! `nullptr`, enumerations by name, sizes in decimal).

use super::handles::{OlDevice, OlEvent, OlPlatform, OlProgram, OlQueue, OlSymbol};
use core::ffi::{c_char, c_void};
use std::fmt::Write;

/// Formats one argument for the trace line.
pub trait TraceArg {
    fn trace(&self, out: &mut String);
    /// For output parameters: the value written, after a successful call.
    fn trace_out(&self, _out: &mut String) {}
}

impl<T> TraceArg for *const T {
    fn trace(&self, out: &mut String) {
        if self.is_null() {
            out.push_str("nullptr");
        } else {
            let _ = write!(out, "{:#x}", *self as usize);
        }
    }
}

/// What an output parameter received, printed after its address as 22.1
/// does (`.PropSizeRet = 0x7ffd... (20)`); only after a successful call.
pub trait OutValue {
    /// # Safety
    /// `p` is non-NULL, aligned and was written by the successful call.
    unsafe fn trace_value(p: *const Self, out: &mut String);
}

impl OutValue for c_void {
    unsafe fn trace_value(_p: *const Self, out: &mut String) {
        // A property value: the info query noted how to print it.
        if let Some(v) = OUT_NOTE.with(|n| n.borrow_mut().take()) {
            let _ = write!(out, " ({v})");
        }
    }
}

impl OutValue for usize {
    unsafe fn trace_value(p: *const Self, out: &mut String) {
        // SAFETY: the caller's contract.
        let _ = write!(out, " ({})", unsafe { p.read() });
    }
}

impl OutValue for bool {
    unsafe fn trace_value(p: *const Self, out: &mut String) {
        // SAFETY: the caller's contract.
        let _ = write!(out, " ({})", unsafe { p.read() });
    }
}

impl<U> OutValue for *mut U {
    unsafe fn trace_value(p: *const Self, out: &mut String) {
        out.push_str(" (");
        // SAFETY: the caller's contract.
        (unsafe { p.read() } as *const U).trace(out);
        out.push(')');
    }
}

impl<U> OutValue for *const U {
    unsafe fn trace_value(p: *const Self, out: &mut String) {
        out.push_str(" (");
        // SAFETY: the caller's contract.
        unsafe { p.read() }.trace(out);
        out.push(')');
    }
}

thread_local! {
    /// How the last info query's value prints (set only while tracing).
    pub static OUT_NOTE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

impl<T: OutValue> TraceArg for *mut T {
    fn trace(&self, out: &mut String) {
        (*self as *const T).trace(out)
    }
    fn trace_out(&self, out: &mut String) {
        if !self.is_null() && (*self as usize).is_multiple_of(align_of::<T>().max(1)) {
            // SAFETY: non-NULL, aligned, written by the successful call (trace_out runs only then).
            unsafe { T::trace_value(*self, out) }
        }
    }
}

impl TraceArg for usize {
    fn trace(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl TraceArg for u32 {
    fn trace(&self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

/// `ol_device_iterate_cb_t`.
pub type IterateCb = Option<unsafe extern "C" fn(device: *const OlDevice, user_data: *mut c_void) -> bool>;
/// `ol_host_function_cb_t`.
pub type HostFunctionCb = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

fn trace_fn(addr: usize, out: &mut String) {
    let _ = write!(out, "{addr:#x}");
}

impl TraceArg for IterateCb {
    fn trace(&self, out: &mut String) {
        trace_fn(self.map_or(0, |f| f as usize), out)
    }
}

impl TraceArg for HostFunctionCb {
    fn trace(&self, out: &mut String) {
        trace_fn(self.map_or(0, |f| f as usize), out)
    }
}

/// Declares a C enumeration as a transparent `u32` with its value names.
macro_rules! ol_enum {
    ($(#[$m:meta])* $name:ident, $names:ident = [$($variant:literal),* $(,)?]) => {
        $(#[$m])*
        #[repr(transparent)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name(pub u32);

        /// Names of the values, indexed by value (the header's order).
        pub const $names: &[&str] = &[$($variant),*];

        impl $name {
            /// The value's name, if it is one the header defines.
            pub fn name(self) -> Option<&'static str> {
                $names.get(self.0 as usize).copied()
            }
        }

        impl TraceArg for $name {
            fn trace(&self, out: &mut String) {
                match self.name() {
                    Some(n) => out.push_str(n),
                    None => out.push_str("unknown enumerator"),
                }
            }
        }
    };
}

ol_enum!(
    /// `ol_alloc_type_t`.
    AllocType,
    ALLOC_TYPE_NAMES = ["OL_ALLOC_TYPE_HOST", "OL_ALLOC_TYPE_DEVICE", "OL_ALLOC_TYPE_MANAGED"]
);
ol_enum!(
    /// `ol_device_info_t`.
    DeviceInfo,
    DEVICE_INFO_NAMES = [
        "OL_DEVICE_INFO_TYPE",
        "OL_DEVICE_INFO_PLATFORM",
        "OL_DEVICE_INFO_NAME",
        "OL_DEVICE_INFO_PRODUCT_NAME",
        "OL_DEVICE_INFO_UID",
        "OL_DEVICE_INFO_VENDOR",
        "OL_DEVICE_INFO_DRIVER_VERSION",
        "OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE",
        "OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION",
        "OL_DEVICE_INFO_MAX_WORK_SIZE",
        "OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION",
        "OL_DEVICE_INFO_VENDOR_ID",
        "OL_DEVICE_INFO_NUM_COMPUTE_UNITS",
        "OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY",
        "OL_DEVICE_INFO_MEMORY_CLOCK_RATE",
        "OL_DEVICE_INFO_ADDRESS_BITS",
        "OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE",
        "OL_DEVICE_INFO_GLOBAL_MEM_SIZE",
        "OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE",
        "OL_DEVICE_INFO_SINGLE_FP_CONFIG",
        "OL_DEVICE_INFO_DOUBLE_FP_CONFIG",
        "OL_DEVICE_INFO_HALF_FP_CONFIG",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE",
        "OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF",
    ]
);
ol_enum!(
    /// `ol_device_type_t`.
    DeviceType,
    DEVICE_TYPE_NAMES = ["OL_DEVICE_TYPE_DEFAULT", "OL_DEVICE_TYPE_ALL", "OL_DEVICE_TYPE_GPU", "OL_DEVICE_TYPE_CPU", "OL_DEVICE_TYPE_HOST"]
);
ol_enum!(
    /// `ol_event_info_t`.
    EventInfo,
    EVENT_INFO_NAMES = ["OL_EVENT_INFO_QUEUE", "OL_EVENT_INFO_IS_COMPLETE"]
);
ol_enum!(
    /// `ol_mem_info_t`.
    MemInfo,
    MEM_INFO_NAMES = ["OL_MEM_INFO_DEVICE", "OL_MEM_INFO_BASE", "OL_MEM_INFO_SIZE", "OL_MEM_INFO_TYPE"]
);
ol_enum!(
    /// `ol_platform_backend_t`.
    PlatformBackend,
    PLATFORM_BACKEND_NAMES = [
        "OL_PLATFORM_BACKEND_UNKNOWN",
        "OL_PLATFORM_BACKEND_CUDA",
        "OL_PLATFORM_BACKEND_AMDGPU",
        "OL_PLATFORM_BACKEND_LEVEL_ZERO",
        "OL_PLATFORM_BACKEND_HOST",
    ]
);
ol_enum!(
    /// `ol_platform_info_t`.
    PlatformInfo,
    PLATFORM_INFO_NAMES = ["OL_PLATFORM_INFO_NAME", "OL_PLATFORM_INFO_VENDOR_NAME", "OL_PLATFORM_INFO_VERSION", "OL_PLATFORM_INFO_BACKEND"]
);
ol_enum!(
    /// `ol_queue_info_t`.
    QueueInfo,
    QUEUE_INFO_NAMES = ["OL_QUEUE_INFO_DEVICE", "OL_QUEUE_INFO_EMPTY"]
);
ol_enum!(
    /// `ol_symbol_info_t`.
    SymbolInfo,
    SYMBOL_INFO_NAMES = ["OL_SYMBOL_INFO_KIND", "OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS", "OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE"]
);
ol_enum!(
    /// `ol_symbol_kind_t`.
    SymbolKind,
    SYMBOL_KIND_NAMES = ["OL_SYMBOL_KIND_KERNEL", "OL_SYMBOL_KIND_GLOBAL_VARIABLE"]
);

/// `ol_dimensions_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dimensions {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

/// `ol_kernel_launch_size_args_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LaunchSizeArgs {
    pub dimensions: usize,
    pub num_groups: Dimensions,
    pub group_size: Dimensions,
    pub dyn_shared_memory: usize,
}

/// `ol_code_location_t`.
#[repr(C)]
pub struct CodeLocation {
    pub function_name: *const c_char,
    pub source_file: *const c_char,
    pub line_number: u32,
    pub column_number: u32,
}

/// Handle types as the header spells them.
pub type DeviceH = *const OlDevice;
pub type PlatformH = *const OlPlatform;
pub type QueueH = *const OlQueue;
pub type EventH = *const OlEvent;
pub type ProgramH = *const OlProgram;
pub type SymbolH = *const OlSymbol;

// ---- Types of the other generations ------------------------------------

ol_enum!(
    /// LLVM 21's `ol_device_info_t` (its own numbering: `VENDOR` is 3,
    /// `MAX_WORK_GROUP_SIZE` an `ol_dimensions_t`).
    DeviceInfo21,
    DEVICE_INFO_21_NAMES = [
        "OL_DEVICE_INFO_TYPE",
        "OL_DEVICE_INFO_PLATFORM",
        "OL_DEVICE_INFO_NAME",
        "OL_DEVICE_INFO_VENDOR",
        "OL_DEVICE_INFO_DRIVER_VERSION",
        "OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE",
    ]
);

/// LLVM 23's `ol_device_info_t`: 22.1's values and three `bool` properties after them.
pub const DEVICE_INFO_23_NAMES: [&str; 32] = {
    let mut n = [""; 32];
    let mut i = 0;
    while i < DEVICE_INFO_NAMES.len() {
        n[i] = DEVICE_INFO_NAMES[i];
        i += 1;
    }
    n[29] = "OL_DEVICE_INFO_SINGLE_FP_SUPPORT";
    n[30] = "OL_DEVICE_INFO_DOUBLE_FP_SUPPORT";
    n[31] = "OL_DEVICE_INFO_HALF_FP_SUPPORT";
    n
};

/// LLVM 23's `ol_device_info_t`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceInfo23(pub u32);

impl TraceArg for DeviceInfo23 {
    fn trace(&self, out: &mut String) {
        out.push_str(DEVICE_INFO_23_NAMES.get(self.0 as usize).copied().unwrap_or("unknown enumerator"))
    }
}

/// LLVM 23's `ol_init_args_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct InitArgs {
    pub size: usize,
    pub num_platforms: u32,
    pub platforms: *const PlatformBackend,
}

/// `const ol_init_args_t *`.
pub type InitArgsP = *const InitArgs;

/// LLVM 23's `ol_platform_rpc_cb_t`.
pub type RpcCb = Option<unsafe extern "C" fn(port: *mut c_void, num_lanes: u32) -> u32>;

impl TraceArg for RpcCb {
    fn trace(&self, out: &mut String) {
        trace_fn(self.map_or(0, |f| f as usize), out)
    }
}

/// `bool *` and `float *` output parameters print their value after a successful call.
impl OutValue for f32 {
    unsafe fn trace_value(p: *const Self, out: &mut String) {
        // SAFETY: the caller's contract.
        let _ = write!(out, " ({})", unsafe { p.read() });
    }
}

/// LLVM 21's `ol_kernel_handle_t`: a kernel symbol's handle.
pub type KernelH = *const OlSymbol;
