//! `#[repr(C)]` mirrors of the structures exchanged with compiled code
//! (abi-reference §1.7, §2.1, §2.2, §4.2, §6.10). Each has a layout check.
#![allow(non_camel_case_types, non_snake_case)] // The C names, so they grep against LLVM's headers.

use core::ffi::{c_char, c_void};
use core::mem::{offset_of, size_of};

/// Success return value of the `int` entry points.
pub const OFFLOAD_SUCCESS: i32 = 0;
/// Failure return value of the `int` entry points.
pub const OFFLOAD_FAIL: i32 = -1;
/// `omp_invalid_device`, returned by `omp_get_device_from_uid` for unknown UIDs.
pub const OMP_INVALID_DEVICE: i32 = -2;
/// OpenMP 5.2's `omp_initial_device`: names the host in the device routines
/// (LLVM 22.1's omp.h does not define it; 22.1 rejects it as out of range).
pub const OMP_INITIAL_DEVICE: i32 = -1;

/// libomp's source-location record (`ident_t`), 24 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ident_t {
    pub reserved_1: i32,
    pub flags: i32,
    pub reserved_2: i32,
    /// Length of `psource` without the NUL.
    pub reserved_3: i32,
    /// `";<file>;<function>;<line>;<col>;;"`.
    pub psource: *const c_char,
}
const _: () = assert!(size_of::<ident_t>() == 24);

/// One device image inside a [`__tgt_bin_desc`].
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_device_image {
    pub ImageStart: *mut c_void,
    pub ImageEnd: *mut c_void,
    pub EntriesBegin: *mut __tgt_offload_entry,
    pub EntriesEnd: *mut __tgt_offload_entry,
}
const _: () = assert!(size_of::<__tgt_device_image>() == 32);

/// The descriptor the linker wrapper passes to `__tgt_register_lib`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_bin_desc {
    pub NumDeviceImages: i32,
    pub DeviceImages: *mut __tgt_device_image,
    pub HostEntriesBegin: *mut __tgt_offload_entry,
    pub HostEntriesEnd: *mut __tgt_offload_entry,
}
const _: () = assert!(size_of::<__tgt_bin_desc>() == 32);
const _: () = assert!(offset_of!(__tgt_bin_desc, DeviceImages) == 8);

/// Current (clang >= 20) offload entry, `llvm::offloading::EntryTy`, 56 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_offload_entry {
    /// Always 0; tells this layout from the legacy one.
    pub Reserved: u64,
    pub Version: u16,
    /// Consumer: 1 = OpenMP, 2 = CUDA, 4 = HIP, 8 = SYCL.
    pub Kind: u16,
    pub Flags: u32,
    pub Address: *mut c_void,
    pub SymbolName: *mut c_char,
    pub Size: u64,
    pub Data: u64,
    pub AuxAddr: *mut c_void,
}
const _: () = assert!(size_of::<__tgt_offload_entry>() == 56);
const _: () = assert!(offset_of!(__tgt_offload_entry, Address) == 16);
const _: () = assert!(offset_of!(__tgt_offload_entry, AuxAddr) == 48);

/// Legacy (clang <= 19) offload entry, 32 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_offload_entry_legacy {
    pub addr: *mut c_void,
    pub name: *mut c_char,
    pub size: usize,
    pub flags: i32,
    pub data: i32,
}
const _: () = assert!(size_of::<__tgt_offload_entry_legacy>() == 32);

/// Offload-entry `Kind` of OpenMP entries.
pub const OFK_OPENMP: u16 = 1;
/// Entry flag: `declare target link` reference pointer.
pub const OMP_DECLARE_TARGET_LINK: u32 = 0x01;
/// Entry flag: `declare target indirect` function.
pub const OMP_DECLARE_TARGET_INDIRECT: u32 = 0x08;
/// Entry flag: `.requires` entry; `Data` holds the requirement flags.
pub const OMP_REGISTER_REQUIRES: u32 = 0x10;
/// Entry flag: indirect vtable.
pub const OMP_DECLARE_TARGET_INDIRECT_VTABLE: u32 = 0x20;

/// Requirement flag: `requires unified_shared_memory`.
pub const OMP_REQ_UNIFIED_SHARED_MEMORY: u64 = 0x008;

/// `KernelArgsTy` (`__tgt_kernel_arguments`), versions 2 and 3 layout, 104 bytes.
/// Version 1 structs end after `Tripcount` (64 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct __tgt_kernel_arguments {
    pub Version: u32,
    pub NumArgs: u32,
    pub ArgBasePtrs: *mut *mut c_void,
    pub ArgPtrs: *mut *mut c_void,
    pub ArgSizes: *mut i64,
    pub ArgTypes: *mut i64,
    pub ArgNames: *mut *mut c_void,
    pub ArgMappers: *mut *mut c_void,
    pub Tripcount: u64,
    pub Flags: u64,
    pub NumTeams: [u32; 3],
    pub ThreadLimit: [u32; 3],
    pub DynCGroupMem: u32,
}
const _: () = assert!(size_of::<__tgt_kernel_arguments>() == 104);
const _: () = assert!(offset_of!(__tgt_kernel_arguments, Flags) == 64);
const _: () = assert!(offset_of!(__tgt_kernel_arguments, NumTeams) == 72);
const _: () = assert!(offset_of!(__tgt_kernel_arguments, DynCGroupMem) == 96);

/// Bytes of a Version 1 kernel-arguments struct (through `Tripcount`).
pub const KERNEL_ARGS_V1_SIZE: usize = 64;
/// Kernel-arguments flag: `nowait`.
pub const KERNEL_FLAG_NOWAIT: u64 = 1 << 0;
/// Kernel-arguments flag: CUDA-style launch, `ArgPtrs` is a launch-params struct.
pub const KERNEL_FLAG_IS_CUDA: u64 = 1 << 1;
/// Kernel-arguments flag (LLVM main): launch exactly the requested grid.
pub const KERNEL_FLAG_STRICT_BLOCKS: u64 = 1 << 6;
/// Flag bits LLVM 22.1 understands.
pub const KERNEL_FLAGS_KNOWN: u64 = KERNEL_FLAG_NOWAIT | KERNEL_FLAG_IS_CUDA;
/// Lowest kernel-arguments version whose kernels take the implicit `dyn_ptr`.
pub const KERNEL_ARGS_MIN_VERSION_WITH_DYN_PTR: u32 = 3;

/// Descriptor of one dimension of a non-contiguous `target update`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct __tgt_target_non_contig {
    pub offset: u64,
    pub count: u64,
    pub stride: u64,
}
const _: () = assert!(size_of::<__tgt_target_non_contig>() == 24);

/// `omp_depend_t`: opaque dependence object handle.
pub type omp_depend_t = *mut c_void;
/// `map_var_info_t`: pointer to `";name;file;line;col;;"`.
pub type map_var_info_t = *mut c_void;
