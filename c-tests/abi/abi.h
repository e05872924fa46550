/* Declarations of the libomptarget (LLVM 22.1) ABI used by the C harnesses,
 * written from docs/abi-reference.md (sections 1.3, 1.7, 2.1, 2.2, 3.1, 4.2,
 * 6.1). Deliberately independent of the project's generated header.
 * Identifiers follow LLVM's names where they exist. */
#ifndef OMPTARGET_RS_CTESTS_ABI_H
#define OMPTARGET_RS_CTESTS_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ---- source location (1.7), 24 bytes ---- */
typedef struct ident_t {
  int32_t reserved_1;
  int32_t flags; /* 2 = KMP_IDENT_KMPC */
  int32_t reserved_2;
  int32_t reserved_3; /* strlen(psource) */
  const char *psource; /* ";file;function;line;col;;" */
} ident_t;

/* ---- offload entries (2.2) ---- */
/* current layout, 56 bytes (llvm::offloading::EntryTy) */
typedef struct tgt_offload_entry {
  uint64_t Reserved; /* 0 */
  uint16_t Version;  /* 1 */
  uint16_t Kind;     /* OFK_OpenMP = 1 */
  uint32_t Flags;
  void *Address;
  const char *SymbolName;
  uint64_t Size;
  uint64_t Data;
  void *AuxAddr;
} tgt_offload_entry;

/* legacy layout (clang <= 19), 32 bytes */
typedef struct tgt_legacy_offload_entry {
  void *Address;
  const char *SymbolName;
  size_t Size;
  int32_t Flags;
  int32_t Data;
} tgt_legacy_offload_entry;

#define OFK_OpenMP 1
#define OMP_DECLARE_TARGET_LINK 0x01
#define OMP_REGISTER_REQUIRES 0x10

/* ---- registration (2.1) ---- */
typedef struct __tgt_device_image {
  void *ImageStart;
  void *ImageEnd;
  void *EntriesBegin; /* tgt_offload_entry* or tgt_legacy_offload_entry* */
  void *EntriesEnd;
} __tgt_device_image;

typedef struct __tgt_bin_desc {
  int32_t NumDeviceImages;
  __tgt_device_image *DeviceImages;
  void *HostEntriesBegin;
  void *HostEntriesEnd;
} __tgt_bin_desc;

/* ---- OffloadBinary container (3.1) ---- */
#define OFFLOAD_BINARY_MAGIC 0xAD10FF10u /* bytes 10 FF 10 AD */
typedef struct offload_binary_header {
  uint32_t Magic;
  uint32_t Version; /* 1 */
  uint64_t Size;
  uint64_t EntryOffset;
  uint64_t EntrySize;
} offload_binary_header;

typedef struct offload_binary_entry {
  uint16_t TheImageKind;   /* IMG_Object = 1 */
  uint16_t TheOffloadKind; /* OFK_OpenMP = 1 */
  uint32_t Flags;
  uint64_t StringOffset;
  uint64_t NumStrings;
  uint64_t ImageOffset;
  uint64_t ImageSize;
} offload_binary_entry;

typedef struct offload_binary_string {
  uint64_t KeyOffset;
  uint64_t ValueOffset;
} offload_binary_string;

#define IMG_Object 1

/* ---- kernel launch (4.2) ---- */
typedef struct KernelArgsTy {
  uint32_t Version;
  uint32_t NumArgs;
  void **ArgBasePtrs;
  void **ArgPtrs;
  int64_t *ArgSizes;
  int64_t *ArgTypes;
  void **ArgNames;
  void **ArgMappers;
  uint64_t Tripcount;
  uint64_t Flags; /* bit 0 NoWait, bit 1 IsCUDA */
  uint32_t NumTeams[3];
  uint32_t ThreadLimit[3];
  uint32_t DynCGroupMem;
} KernelArgsTy;

/* ---- map-type bits (6.1) ---- */
#define OMP_TGT_MAPTYPE_NONE 0x0000
#define OMP_TGT_MAPTYPE_TO 0x0001
#define OMP_TGT_MAPTYPE_FROM 0x0002
#define OMP_TGT_MAPTYPE_ALWAYS 0x0004
#define OMP_TGT_MAPTYPE_DELETE 0x0008
#define OMP_TGT_MAPTYPE_PTR_AND_OBJ 0x0010
#define OMP_TGT_MAPTYPE_TARGET_PARAM 0x0020
#define OMP_TGT_MAPTYPE_RETURN_PARAM 0x0040
#define OMP_TGT_MAPTYPE_PRIVATE 0x0080
#define OMP_TGT_MAPTYPE_LITERAL 0x0100
#define OMP_TGT_MAPTYPE_IMPLICIT 0x0200
#define OMP_TGT_MAPTYPE_CLOSE 0x0400
#define OMP_TGT_MAPTYPE_PRESENT 0x1000
#define OMP_TGT_MAPTYPE_OMPX_HOLD 0x2000
#define OMP_TGT_MAPTYPE_ATTACH 0x4000
#define OMP_TGT_MAPTYPE_MEMBER_OF(i) ((int64_t)((uint64_t)((i) + 1) << 48))

/* ---- exported functions (1.3) ---- */
void __tgt_register_lib(__tgt_bin_desc *Desc);
void __tgt_unregister_lib(__tgt_bin_desc *Desc);
void __tgt_init_all_rtls(void);
void __tgt_register_requires(int64_t Flags);
void __tgt_rtl_init(void);
void __tgt_rtl_deinit(void);

void __tgt_target_data_begin_mapper(ident_t *Loc, int64_t DeviceId, int32_t ArgNum, void **ArgsBase, void **Args,
                                    int64_t *ArgSizes, int64_t *ArgTypes, void **ArgNames, void **ArgMappers);
void __tgt_target_data_end_mapper(ident_t *Loc, int64_t DeviceId, int32_t ArgNum, void **ArgsBase, void **Args,
                                  int64_t *ArgSizes, int64_t *ArgTypes, void **ArgNames, void **ArgMappers);
void __tgt_target_data_update_mapper(ident_t *Loc, int64_t DeviceId, int32_t ArgNum, void **ArgsBase, void **Args,
                                     int64_t *ArgSizes, int64_t *ArgTypes, void **ArgNames, void **ArgMappers);
void __tgt_target_data_begin(int64_t DeviceId, int32_t ArgNum, void **ArgsBase, void **Args, int64_t *ArgSizes,
                             int64_t *ArgTypes);
void __tgt_target_data_end(int64_t DeviceId, int32_t ArgNum, void **ArgsBase, void **Args, int64_t *ArgSizes,
                           int64_t *ArgTypes);
void __tgt_target_data_update(int64_t DeviceId, int32_t ArgNum, void **ArgsBase, void **Args, int64_t *ArgSizes,
                              int64_t *ArgTypes);

int __tgt_target_kernel(ident_t *Loc, int64_t DeviceId, int32_t NumTeams, int32_t ThreadLimit, void *HostPtr,
                        KernelArgsTy *Args);
int __tgt_target_kernel_nowait(ident_t *Loc, int64_t DeviceId, int32_t NumTeams, int32_t ThreadLimit, void *HostPtr,
                               KernelArgsTy *Args, int32_t DepNum, void *DepList, int32_t NoAliasDepNum,
                               void *NoAliasDepList);
int __tgt_target_mapper(ident_t *Loc, int64_t DeviceId, void *HostPtr, int32_t ArgNum, void **ArgsBase, void **Args,
                        int64_t *ArgSizes, int64_t *ArgTypes, void **ArgNames, void **ArgMappers);
int __tgt_target_teams_mapper(ident_t *Loc, int64_t DeviceId, void *HostPtr, int32_t ArgNum, void **ArgsBase,
                              void **Args, int64_t *ArgSizes, int64_t *ArgTypes, void **ArgNames, void **ArgMappers,
                              int32_t NumTeams, int32_t ThreadLimit);
int __tgt_target(int64_t DeviceId, void *HostPtr, int32_t ArgNum, void **ArgsBase, void **Args, int64_t *ArgSizes,
                 int64_t *ArgTypes);
int __tgt_target_teams(int64_t DeviceId, void *HostPtr, int32_t ArgNum, void **ArgsBase, void **Args,
                       int64_t *ArgSizes, int64_t *ArgTypes, int32_t NumTeams, int32_t ThreadLimit);
int __tgt_target_nowait_mapper(ident_t *Loc, int64_t DeviceId, void *HostPtr, int32_t ArgNum, void **ArgsBase,
                               void **Args, int64_t *ArgSizes, int64_t *ArgTypes, void **ArgNames,
                               void **ArgMappers, int32_t DepNum, void *DepList, int32_t NoAliasDepNum,
                               void *NoAliasDepList);
void __kmpc_push_target_tripcount_mapper(ident_t *Loc, int64_t DeviceId, uint64_t LoopTripcount);

int omp_get_num_devices(void);
int omp_get_initial_device(void);
int omp_target_is_present(const void *Ptr, int DeviceNum);
void *omp_get_mapped_ptr(const void *Ptr, int DeviceNum);
void *omp_target_alloc(size_t Size, int DeviceNum);
void omp_target_free(void *Ptr, int DeviceNum);
int omp_target_memcpy(void *Dst, const void *Src, size_t Length, size_t DstOffset, size_t SrcOffset, int DstDevice,
                      int SrcDevice);

#endif
