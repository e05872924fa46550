/* OffloadAPI.h - liboffload's C API as LLVM 21 defines it
 * (libLLVMOffload.so.21.1), for programs run on omptarget-rs
 * (target/release/libLLVMOffload.so.21.1).
 *
 * Written by omptarget-rs from the API definitions of that era
 * (offload/liboffload/API/ *.td); the values it shares with LLVM 22.1's
 * header are checked against that header by tests/offload_header.rs.
 * Compile with -I<omptarget-rs>/include/liboffload-21 and include it as
 * <offload/OffloadAPI.h>, as with LLVM's.
 *
 * What differs from 22.1: kernels come from olGetKernel (an
 * ol_kernel_handle_t), queues and events are waited for with olWaitQueue
 * and olWaitEvent, olMemcpy and olLaunchKernel return an optional event
 * (EventOut), ol_device_info_t has six values of its own numbering
 * (MAX_WORK_GROUP_SIZE is an ol_dimensions_t), and there are no memory,
 * symbol, queue or event info queries, fills, host functions or
 * registered memory.
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
typedef struct ol_kernel_impl_t *ol_kernel_handle_t;

typedef enum ol_alloc_type_t {
  OL_ALLOC_TYPE_HOST = 0,
  OL_ALLOC_TYPE_DEVICE = 1,
  OL_ALLOC_TYPE_MANAGED = 2,
  OL_ALLOC_TYPE_LAST = 3,
  OL_ALLOC_TYPE_FORCE_UINT32 = 0x7fffffff
} ol_alloc_type_t;

/* Property types in the comments: what olGetDeviceInfo writes. */
typedef enum ol_device_info_t {
  OL_DEVICE_INFO_TYPE = 0,               /* ol_device_type_t */
  OL_DEVICE_INFO_PLATFORM = 1,           /* ol_platform_handle_t */
  OL_DEVICE_INFO_NAME = 2,               /* char[] */
  OL_DEVICE_INFO_VENDOR = 3,             /* char[] */
  OL_DEVICE_INFO_DRIVER_VERSION = 4,     /* char[] */
  OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE = 5, /* ol_dimensions_t: the maximum per dimension */
  OL_DEVICE_INFO_LAST = 6,
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
  OL_ERRC_LAST = 24,
  OL_ERRC_FORCE_UINT32 = 0x7fffffff
} ol_errc_t;

typedef enum ol_platform_backend_t {
  OL_PLATFORM_BACKEND_UNKNOWN = 0,
  OL_PLATFORM_BACKEND_CUDA = 1,
  OL_PLATFORM_BACKEND_AMDGPU = 2,
  OL_PLATFORM_BACKEND_HOST = 3,
  OL_PLATFORM_BACKEND_LAST = 4,
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

typedef const struct ol_error_struct_t *ol_result_t;

typedef bool (*ol_device_iterate_cb_t)(ol_device_handle_t Device, void *UserData);

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

OL_DECLARE_(olInit, (void), (ol_code_location_t *CodeLocation))
OL_DECLARE_(olShutDown, (void), (ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetPlatformInfo,
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t PropSize, void *PropValue),
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetPlatformInfoSize,
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t *PropSizeRet),
            (ol_platform_handle_t Platform, ol_platform_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olIterateDevices, (ol_device_iterate_cb_t Callback, void *UserData),
            (ol_device_iterate_cb_t Callback, void *UserData, ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetDeviceInfo,
            (ol_device_handle_t Device, ol_device_info_t PropName, size_t PropSize, void *PropValue),
            (ol_device_handle_t Device, ol_device_info_t PropName, size_t PropSize, void *PropValue,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetDeviceInfoSize, (ol_device_handle_t Device, ol_device_info_t PropName, size_t *PropSizeRet),
            (ol_device_handle_t Device, ol_device_info_t PropName, size_t *PropSizeRet,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemAlloc, (ol_device_handle_t Device, ol_alloc_type_t Type, size_t Size, void **AllocationOut),
            (ol_device_handle_t Device, ol_alloc_type_t Type, size_t Size, void **AllocationOut,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olMemFree, (void *Address), (void *Address, ol_code_location_t *CodeLocation))
/* Queue may be NULL (the copy is then synchronous); EventOut is optional. */
OL_DECLARE_(olMemcpy,
            (ol_queue_handle_t Queue, void *DstPtr, ol_device_handle_t DstDevice, void *SrcPtr,
             ol_device_handle_t SrcDevice, size_t Size, ol_event_handle_t *EventOut),
            (ol_queue_handle_t Queue, void *DstPtr, ol_device_handle_t DstDevice, void *SrcPtr,
             ol_device_handle_t SrcDevice, size_t Size, ol_event_handle_t *EventOut,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olCreateQueue, (ol_device_handle_t Device, ol_queue_handle_t *Queue),
            (ol_device_handle_t Device, ol_queue_handle_t *Queue, ol_code_location_t *CodeLocation))
OL_DECLARE_(olDestroyQueue, (ol_queue_handle_t Queue), (ol_queue_handle_t Queue, ol_code_location_t *CodeLocation))
OL_DECLARE_(olWaitQueue, (ol_queue_handle_t Queue), (ol_queue_handle_t Queue, ol_code_location_t *CodeLocation))
OL_DECLARE_(olWaitEvent, (ol_event_handle_t Event), (ol_event_handle_t Event, ol_code_location_t *CodeLocation))
OL_DECLARE_(olDestroyEvent, (ol_event_handle_t Event), (ol_event_handle_t Event, ol_code_location_t *CodeLocation))
OL_DECLARE_(olCreateProgram,
            (ol_device_handle_t Device, const void *ProgData, size_t ProgDataSize, ol_program_handle_t *Program),
            (ol_device_handle_t Device, const void *ProgData, size_t ProgDataSize, ol_program_handle_t *Program,
             ol_code_location_t *CodeLocation))
OL_DECLARE_(olDestroyProgram, (ol_program_handle_t Program),
            (ol_program_handle_t Program, ol_code_location_t *CodeLocation))
OL_DECLARE_(olGetKernel, (ol_program_handle_t Program, const char *KernelName, ol_kernel_handle_t *Kernel),
            (ol_program_handle_t Program, const char *KernelName, ol_kernel_handle_t *Kernel,
             ol_code_location_t *CodeLocation))
/* Queue may be NULL (the launch is then synchronous); EventOut is optional. */
OL_DECLARE_(olLaunchKernel,
            (ol_queue_handle_t Queue, ol_device_handle_t Device, ol_kernel_handle_t Kernel,
             const void *ArgumentsData, size_t ArgumentsSize,
             const ol_kernel_launch_size_args_t *LaunchSizeArgs, ol_event_handle_t *EventOut),
            (ol_queue_handle_t Queue, ol_device_handle_t Device, ol_kernel_handle_t Kernel,
             const void *ArgumentsData, size_t ArgumentsSize,
             const ol_kernel_launch_size_args_t *LaunchSizeArgs, ol_event_handle_t *EventOut,
             ol_code_location_t *CodeLocation))

#undef OL_DECLARE_

#if defined(__cplusplus)
} // extern "C"
#endif
