/* OffloadAPI.h - liboffload's C API as LLVM 23 defines it (LLVM's main
 * branch after 22.1: libLLVMOffload.so.23.0git, released as
 * libLLVMOffload.so.23.1), for programs run on omptarget-rs
 * (target/release/libLLVMOffload.so.23.1).
 *
 * Written by omptarget-rs from the API definitions of that era
 * (offload/liboffload/API/ *.td); the values it shares with LLVM 22.1's
 * header are checked against that header by tests/offload_header.rs.
 * Compile with -I<omptarget-rs>/include/liboffload-23 and include it as
 * <offload/OffloadAPI.h>, as with LLVM's.
 *
 * What differs from 22.1: olInit takes an optional ol_init_args_t
 * (NumPlatforms/Platforms choose the backends started; the host plugin is
 * always there), olMemUnregister takes flags, three new functions
 * (olQueryQueue, olGetEventElapsedTime, olPlatformRegisterRPCCallback),
 * three new device properties (*_FP_SUPPORT), the memory register flags.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#if !defined(__cplusplus)
#include <stdbool.h>
#endif

#if defined(__cplusplus)
extern "C" {
#endif

#ifndef OL_APICALL
#if defined(_WIN32)
#define OL_APICALL __cdecl
#else
#define OL_APICALL
#endif
#endif

#ifndef OL_APIEXPORT
#if defined(_WIN32)
#define OL_APIEXPORT __declspec(dllexport)
#else
#define OL_APIEXPORT
#endif
#endif

/* A successful call returns OL_SUCCESS (NULL). */
#ifndef OL_SUCCESS
#define OL_SUCCESS NULL
#endif

#ifndef OL_VERSION_MAJOR
#define OL_VERSION_MAJOR 0
#endif
#ifndef OL_VERSION_MINOR
#define OL_VERSION_MINOR 0
#endif
#ifndef OL_VERSION_PATCH
#define OL_VERSION_PATCH 1
#endif

/* Handles. */
typedef struct ol_device_impl_t *ol_device_handle_t;
typedef struct ol_event_impl_t *ol_event_handle_t;
typedef struct ol_platform_impl_t *ol_platform_handle_t;
typedef struct ol_program_impl_t *ol_program_handle_t;
typedef struct ol_queue_impl_t *ol_queue_handle_t;
typedef struct ol_symbol_impl_t *ol_symbol_handle_t;

typedef enum ol_alloc_type_t {
  OL_ALLOC_TYPE_HOST = 0,
  OL_ALLOC_TYPE_DEVICE = 1,
  OL_ALLOC_TYPE_MANAGED = 2,
  OL_ALLOC_TYPE_LAST = 3,
  OL_ALLOC_TYPE_FORCE_UINT32 = 0x7fffffff
} ol_alloc_type_t;

typedef enum ol_device_fp_capability_flag_t {
  OL_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT = 1,
  OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST = 2,
  OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO = 4,
  OL_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF = 8,
  OL_DEVICE_FP_CAPABILITY_FLAG_INF_NAN = 16,
  OL_DEVICE_FP_CAPABILITY_FLAG_DENORM = 32,
  OL_DEVICE_FP_CAPABILITY_FLAG_FMA = 64,
  OL_DEVICE_FP_CAPABILITY_FLAG_SOFT_FLOAT = 128,
  OL_DEVICE_FP_CAPABILITY_FLAG_LAST = 256,
  OL_DEVICE_FP_CAPABILITY_FLAG_FORCE_UINT32 = 0x7fffffff
} ol_device_fp_capability_flag_t;

/* Property types in the comments: what olGetDeviceInfo writes. */
typedef enum ol_device_info_t {
  OL_DEVICE_INFO_TYPE = 0,                              /* ol_device_type_t */
  OL_DEVICE_INFO_PLATFORM = 1,                          /* ol_platform_handle_t */
  OL_DEVICE_INFO_NAME = 2,                              /* char[] */
  OL_DEVICE_INFO_PRODUCT_NAME = 3,                      /* char[] */
  OL_DEVICE_INFO_UID = 4,                               /* char[] */
  OL_DEVICE_INFO_VENDOR = 5,                            /* char[] */
  OL_DEVICE_INFO_DRIVER_VERSION = 6,                    /* char[] */
  OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE = 7,               /* uint32_t */
  OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION = 8, /* ol_dimensions_t */
  OL_DEVICE_INFO_MAX_WORK_SIZE = 9,                     /* uint32_t */
  OL_DEVICE_INFO_MAX_WORK_SIZE_PER_DIMENSION = 10,      /* ol_dimensions_t */
  OL_DEVICE_INFO_VENDOR_ID = 11,                        /* uint32_t */
  OL_DEVICE_INFO_NUM_COMPUTE_UNITS = 12,                /* uint32_t */
  OL_DEVICE_INFO_MAX_CLOCK_FREQUENCY = 13,              /* uint32_t, MHz */
  OL_DEVICE_INFO_MEMORY_CLOCK_RATE = 14,                /* uint32_t, MHz */
  OL_DEVICE_INFO_ADDRESS_BITS = 15,                     /* uint32_t */
  OL_DEVICE_INFO_MAX_MEM_ALLOC_SIZE = 16,               /* uint64_t */
  OL_DEVICE_INFO_GLOBAL_MEM_SIZE = 17,                  /* uint64_t */
  OL_DEVICE_INFO_WORK_GROUP_LOCAL_MEM_SIZE = 18,        /* uint64_t */
  OL_DEVICE_INFO_SINGLE_FP_CONFIG = 19,                 /* ol_device_fp_capability_flags_t */
  OL_DEVICE_INFO_DOUBLE_FP_CONFIG = 20,                 /* ol_device_fp_capability_flags_t */
  OL_DEVICE_INFO_HALF_FP_CONFIG = 21,                   /* ol_device_fp_capability_flags_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR = 22,         /* uint32_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT = 23,        /* uint32_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT = 24,          /* uint32_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG = 25,         /* uint32_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT = 26,        /* uint32_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE = 27,       /* uint32_t */
  OL_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF = 28,         /* uint32_t */
  OL_DEVICE_INFO_SINGLE_FP_SUPPORT = 29,                /* bool */
  OL_DEVICE_INFO_DOUBLE_FP_SUPPORT = 30,                /* bool */
  OL_DEVICE_INFO_HALF_FP_SUPPORT = 31,                  /* bool */
  OL_DEVICE_INFO_LAST = 32,
  OL_DEVICE_INFO_FORCE_UINT32 = 0x7fffffff
} ol_device_info_t;

typedef enum ol_device_type_t {
  OL_DEVICE_TYPE_DEFAULT = 0,
  OL_DEVICE_TYPE_ALL = 1,
  OL_DEVICE_TYPE_GPU = 2,
  OL_DEVICE_TYPE_CPU = 3,
  OL_DEVICE_TYPE_HOST = 4,
  OL_DEVICE_TYPE_LAST = 5,
  OL_DEVICE_TYPE_FORCE_UINT32 = 0x7fffffff
} ol_device_type_t;

typedef enum ol_errc_t {
  OL_ERRC_SUCCESS = 0,
  OL_ERRC_UNKNOWN = 1,
  OL_ERRC_HOST_IO = 2,
  OL_ERRC_INVALID_BINARY = 3,
  OL_ERRC_INVALID_NULL_POINTER = 4,
  OL_ERRC_INVALID_ARGUMENT = 5,
  OL_ERRC_NOT_FOUND = 6,
  OL_ERRC_OUT_OF_RESOURCES = 7,
  OL_ERRC_INVALID_SIZE = 8,
  OL_ERRC_INVALID_ENUMERATION = 9,
  OL_ERRC_HOST_TOOL_NOT_FOUND = 10,
  OL_ERRC_INVALID_VALUE = 11,
  OL_ERRC_UNIMPLEMENTED = 12,
  OL_ERRC_UNSUPPORTED = 13,
  OL_ERRC_ASSEMBLE_FAILURE = 14,
  OL_ERRC_COMPILE_FAILURE = 15,
  OL_ERRC_LINK_FAILURE = 16,
  OL_ERRC_BACKEND_FAILURE = 17,
  OL_ERRC_UNINITIALIZED = 18,
  OL_ERRC_INVALID_NULL_HANDLE = 19,
  OL_ERRC_INVALID_PLATFORM = 20,
  OL_ERRC_INVALID_DEVICE = 21,
  OL_ERRC_INVALID_QUEUE = 22,
  OL_ERRC_INVALID_EVENT = 23,
  OL_ERRC_SYMBOL_KIND = 24,
  OL_ERRC_LAST = 25,
  OL_ERRC_FORCE_UINT32 = 0x7fffffff
} ol_errc_t;

typedef enum ol_event_info_t {
  OL_EVENT_INFO_QUEUE = 0,       /* ol_queue_handle_t */
  OL_EVENT_INFO_IS_COMPLETE = 1, /* bool */
  OL_EVENT_INFO_LAST = 2,
  OL_EVENT_INFO_FORCE_UINT32 = 0x7fffffff
} ol_event_info_t;

typedef enum ol_mem_info_t {
  OL_MEM_INFO_DEVICE = 0, /* ol_device_handle_t */
  OL_MEM_INFO_BASE = 1,   /* void * */
  OL_MEM_INFO_SIZE = 2,   /* size_t */
  OL_MEM_INFO_TYPE = 3,   /* ol_alloc_type_t */
  OL_MEM_INFO_LAST = 4,
  OL_MEM_INFO_FORCE_UINT32 = 0x7fffffff
} ol_mem_info_t;

/* Bits of ol_memory_register_flags_t. */
typedef enum ol_memory_register_flag_t {
  OL_MEMORY_REGISTER_FLAG_LOCK_MEMORY = 1,   /* olMemRegister: also page-lock the range */
  OL_MEMORY_REGISTER_FLAG_UNLOCK_MEMORY = 2, /* olMemUnregister: also unlock it */
  OL_MEMORY_REGISTER_FLAG_LAST = 4,
  OL_MEMORY_REGISTER_FLAG_FORCE_UINT32 = 0x7fffffff
} ol_memory_register_flag_t;

typedef enum ol_platform_backend_t {
  OL_PLATFORM_BACKEND_UNKNOWN = 0,
  OL_PLATFORM_BACKEND_CUDA = 1,
  OL_PLATFORM_BACKEND_AMDGPU = 2,
  OL_PLATFORM_BACKEND_LEVEL_ZERO = 3,
  OL_PLATFORM_BACKEND_HOST = 4,
  OL_PLATFORM_BACKEND_LAST = 5,
  OL_PLATFORM_BACKEND_FORCE_UINT32 = 0x7fffffff
} ol_platform_backend_t;

typedef enum ol_platform_info_t {
  OL_PLATFORM_INFO_NAME = 0,        /* char[] */
  OL_PLATFORM_INFO_VENDOR_NAME = 1, /* char[] */
  OL_PLATFORM_INFO_VERSION = 2,     /* char[] */
  OL_PLATFORM_INFO_BACKEND = 3,     /* ol_platform_backend_t */
  OL_PLATFORM_INFO_LAST = 4,
  OL_PLATFORM_INFO_FORCE_UINT32 = 0x7fffffff
} ol_platform_info_t;

typedef enum ol_queue_info_t {
  OL_QUEUE_INFO_DEVICE = 0, /* ol_device_handle_t */
  OL_QUEUE_INFO_EMPTY = 1,  /* bool */
  OL_QUEUE_INFO_LAST = 2,
  OL_QUEUE_INFO_FORCE_UINT32 = 0x7fffffff
} ol_queue_info_t;

typedef enum ol_symbol_info_t {
  OL_SYMBOL_INFO_KIND = 0,                    /* ol_symbol_kind_t */
  OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS = 1, /* void * */
  OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE = 2,    /* size_t */
  OL_SYMBOL_INFO_LAST = 3,
  OL_SYMBOL_INFO_FORCE_UINT32 = 0x7fffffff
} ol_symbol_info_t;

typedef enum ol_symbol_kind_t {
  OL_SYMBOL_KIND_KERNEL = 0,
  OL_SYMBOL_KIND_GLOBAL_VARIABLE = 1,
  OL_SYMBOL_KIND_LAST = 2,
  OL_SYMBOL_KIND_FORCE_UINT32 = 0x7fffffff
} ol_symbol_kind_t;

typedef uint32_t ol_device_fp_capability_flags_t;
typedef uint32_t ol_memory_register_flags_t;

typedef const struct ol_error_struct_t *ol_result_t;

typedef bool (*ol_device_iterate_cb_t)(ol_device_handle_t Device, void *UserData);
typedef void (*ol_host_function_cb_t)(void *UserData);
/* Called by a platform's RPC server for an opcode it does not handle:
 * Port is the server's port, NumLanes the number of active lanes; returns
 * the RPC status. */
typedef uint32_t (*ol_platform_rpc_cb_t)(void *Port, unsigned NumLanes);

typedef struct ol_code_location_t {
  const char *FunctionName;
  const char *SourceFile;
  uint32_t LineNumber;
  uint32_t ColumnNumber;
} ol_code_location_t;

typedef struct ol_dimensions_t {
  uint32_t x;
  uint32_t y;
  uint32_t z;
} ol_dimensions_t;

typedef struct ol_error_struct_t {
  ol_errc_t Code;
  const char *Details;
} ol_error_struct_t;

/* Arguments of olInit: Size must be at least sizeof(ol_init_args_t);
 * NumPlatforms > 0 starts only the backends listed in Platforms (and the
 * host plugin, always). */
typedef struct ol_init_args_t {
  size_t Size;
  uint32_t NumPlatforms;
  const ol_platform_backend_t *Platforms;
} ol_init_args_t;

#define OL_INIT_ARGS_INIT {sizeof(ol_init_args_t), 0, NULL}

typedef struct ol_kernel_launch_size_args_t {
  size_t Dimensions;
  struct ol_dimensions_t NumGroups;
  struct ol_dimensions_t GroupSize;
  size_t DynSharedMemory;
} ol_kernel_launch_size_args_t;

/* Each function F has a twin FWithCodeLoc taking the caller's code location last. */
#define OL_DECLARE_(name, params, params_loc)                                  \
  OL_APIEXPORT ol_result_t OL_APICALL name params;                             \
  OL_APIEXPORT ol_result_t OL_APICALL name##WithCodeLoc params_loc;

OL_DECLARE_(olInit, (const ol_init_args_t *InitArgs),
            (const ol_init_args_t *InitArgs, ol_code_location_t *CodeLocation))
OL_DECLARE_(olShutDown, (void), (ol_code_location_t *CodeLocation))
OL_DECLARE_(olIterateDevices, (ol_device_iterate_cb_t Callback, void *UserData),
            (ol_device_iterate_cb_t Callback, void *UserData, ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetDeviceInfo,
            (ol_device_handle_t Device, ol_device_info_t PropName, size_t PropSize, void *PropValue),
            (ol_device_handle_t Device, ol_device_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetDeviceInfoSize, (ol_device_handle_t Device, ol_device_info_t PropName, size_t *PropSizeRet),
            (ol_device_handle_t Device, ol_device_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetPlatformInfo,
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t PropSize, void *PropValue),
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetPlatformInfoSize,
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t *PropSizeRet),
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olPlatformRegisterRPCCallback, (ol_platform_handle_t Platform, ol_platform_rpc_cb_t Callback),
            (ol_platform_handle_t Platform, ol_platform_rpc_cb_t Callback, ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemAlloc, (ol_device_handle_t Device, ol_alloc_type_t Type, size_t Size, void **AllocationOut),
            (ol_device_handle_t Device, ol_alloc_type_t Type, size_t Size, void **AllocationOut,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemFree, (void *Address), (void *Address, ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetMemInfo, (const void *Ptr, ol_mem_info_t PropName, size_t PropSize, void *PropValue),
            (const void *Ptr, ol_mem_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetMemInfoSize, (const void *Ptr, ol_mem_info_t PropName, size_t *PropSizeRet),
            (const void *Ptr, ol_mem_info_t PropName, size_t *PropSizeRet, ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemcpy,
            (ol_queue_handle_t Queue, void *DstPtr, ol_device_handle_t DstDevice, const void *SrcPtr,
             ol_device_handle_t SrcDevice, size_t Size),
            (ol_queue_handle_t Queue, void *DstPtr, ol_device_handle_t DstDevice, const void *SrcPtr,
             ol_device_handle_t SrcDevice, size_t Size, ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemFill,
            (ol_queue_handle_t Queue, void *Ptr, size_t PatternSize, const void *PatternPtr, size_t FillSize),
            (ol_queue_handle_t Queue, void *Ptr, size_t PatternSize, const void *PatternPtr, size_t FillSize,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemRegister,
            (ol_device_handle_t Device, void *Ptr, size_t Size, ol_memory_register_flags_t Flags, void **LockedPtr),
            (ol_device_handle_t Device, void *Ptr, size_t Size, ol_memory_register_flags_t Flags, void **LockedPtr,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemUnregister, (ol_device_handle_t Device, void *Ptr, ol_memory_register_flags_t Flags),
            (ol_device_handle_t Device, void *Ptr, ol_memory_register_flags_t Flags,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olCreateQueue, (ol_device_handle_t Device, ol_queue_handle_t *Queue),
            (ol_device_handle_t Device, ol_queue_handle_t *Queue, ol_code_location_t *CodeLocation))
OL_DECLARE_(olDestroyQueue, (ol_queue_handle_t Queue), (ol_queue_handle_t Queue, ol_code_location_t *CodeLocation))
OL_DECLARE_(olSyncQueue, (ol_queue_handle_t Queue), (ol_queue_handle_t Queue, ol_code_location_t *CodeLocation))
/* Non-blocking: *IsQueueWorkCompleted (optional) says whether everything enqueued has completed. */
OL_DECLARE_(olQueryQueue, (ol_queue_handle_t Queue, bool *IsQueueWorkCompleted),
            (ol_queue_handle_t Queue, bool *IsQueueWorkCompleted, ol_code_location_t *CodeLocation))
OL_DECLARE_(olWaitEvents, (ol_queue_handle_t Queue, ol_event_handle_t *Events, size_t NumEvents),
            (ol_queue_handle_t Queue, ol_event_handle_t *Events, size_t NumEvents,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetQueueInfo,
            (ol_queue_handle_t Queue, ol_queue_info_t PropName, size_t PropSize, void *PropValue),
            (ol_queue_handle_t Queue, ol_queue_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetQueueInfoSize, (ol_queue_handle_t Queue, ol_queue_info_t PropName, size_t *PropSizeRet),
            (ol_queue_handle_t Queue, ol_queue_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olLaunchHostFunction, (ol_queue_handle_t Queue, ol_host_function_cb_t Callback, void *UserData),
            (ol_queue_handle_t Queue, ol_host_function_cb_t Callback, void *UserData,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olCreateEvent, (ol_queue_handle_t Queue, ol_event_handle_t *Event),
            (ol_queue_handle_t Queue, ol_event_handle_t *Event, ol_code_location_t *CodeLocation))
OL_DECLARE_(olDestroyEvent, (ol_event_handle_t Event), (ol_event_handle_t Event, ol_code_location_t *CodeLocation))
OL_DECLARE_(olSyncEvent, (ol_event_handle_t Event), (ol_event_handle_t Event, ol_code_location_t *CodeLocation))
/* Milliseconds between two events of one device (both waited for). */
OL_DECLARE_(olGetEventElapsedTime, (ol_event_handle_t StartEvent, ol_event_handle_t EndEvent, float *ElapsedTime),
            (ol_event_handle_t StartEvent, ol_event_handle_t EndEvent, float *ElapsedTime,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetEventInfo,
            (ol_event_handle_t Event, ol_event_info_t PropName, size_t PropSize, void *PropValue),
            (ol_event_handle_t Event, ol_event_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetEventInfoSize, (ol_event_handle_t Event, ol_event_info_t PropName, size_t *PropSizeRet),
            (ol_event_handle_t Event, ol_event_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olIsValidBinary, (ol_device_handle_t Device, const void *ProgData, size_t ProgDataSize, bool *Valid),
            (ol_device_handle_t Device, const void *ProgData, size_t ProgDataSize, bool *Valid,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olCreateProgram,
            (ol_device_handle_t Device, const void *ProgData, size_t ProgDataSize, ol_program_handle_t *Program),
            (ol_device_handle_t Device, const void *ProgData, size_t ProgDataSize, ol_program_handle_t *Program,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olDestroyProgram, (ol_program_handle_t Program),
            (ol_program_handle_t Program, ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetSymbol,
            (ol_program_handle_t Program, const char *Name, ol_symbol_kind_t Kind, ol_symbol_handle_t *Symbol),
            (ol_program_handle_t Program, const char *Name, ol_symbol_kind_t Kind, ol_symbol_handle_t *Symbol,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetSymbolInfo,
            (ol_symbol_handle_t Symbol, ol_symbol_info_t PropName, size_t PropSize, void *PropValue),
            (ol_symbol_handle_t Symbol, ol_symbol_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetSymbolInfoSize, (ol_symbol_handle_t Symbol, ol_symbol_info_t PropName, size_t *PropSizeRet),
            (ol_symbol_handle_t Symbol, ol_symbol_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olLaunchKernel,
            (ol_queue_handle_t Queue, ol_device_handle_t Device, ol_symbol_handle_t Kernel,
             const void *ArgumentsData, size_t ArgumentsSize,
             const ol_kernel_launch_size_args_t *LaunchSizeArgs),
            (ol_queue_handle_t Queue, ol_device_handle_t Device, ol_symbol_handle_t Kernel,
             const void *ArgumentsData, size_t ArgumentsSize,
             const ol_kernel_launch_size_args_t *LaunchSizeArgs, ol_code_location_t *CodeLocation))
OL_DECLARE_(olCalculateOptimalOccupancy,
            (ol_device_handle_t Device, ol_symbol_handle_t Kernel, size_t SharedMemory, size_t *GroupSize),
            (ol_device_handle_t Device, ol_symbol_handle_t Kernel, size_t SharedMemory, size_t *GroupSize,
             ol_code_location_t *CodeLocation))

#undef OL_DECLARE_

#if defined(__cplusplus)
} // extern "C"
#endif
