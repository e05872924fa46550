/* Compile-time checks of the ABI struct layouts declared in abi.h against
 * abi-reference (2.1, 2.2, 3.1, 4.2, 1.7); prints them so a run also shows
 * them. Calls nothing in the runtime, but takes the address of
 * __tgt_register_lib so the program still depends on libomptarget (the
 * linker drops unused libraries with --as-needed) and the replace-mode
 * check of the loaded objects applies. */
#include <stddef.h>
#include <stdio.h>

#include "abi.h"

#define CHECK_SIZE(T, n) _Static_assert(sizeof(T) == (n), "sizeof " #T)
#define CHECK_OFF(T, f, n) _Static_assert(offsetof(T, f) == (n), "offsetof " #T "." #f)

CHECK_SIZE(ident_t, 24);
CHECK_OFF(ident_t, psource, 16);
CHECK_SIZE(tgt_offload_entry, 56);
CHECK_OFF(tgt_offload_entry, Version, 8);
CHECK_OFF(tgt_offload_entry, Kind, 10);
CHECK_OFF(tgt_offload_entry, Flags, 12);
CHECK_OFF(tgt_offload_entry, Address, 16);
CHECK_OFF(tgt_offload_entry, SymbolName, 24);
CHECK_OFF(tgt_offload_entry, Size, 32);
CHECK_OFF(tgt_offload_entry, Data, 40);
CHECK_OFF(tgt_offload_entry, AuxAddr, 48);
CHECK_SIZE(tgt_legacy_offload_entry, 32);
CHECK_OFF(tgt_legacy_offload_entry, Size, 16);
CHECK_OFF(tgt_legacy_offload_entry, Flags, 24);
CHECK_OFF(tgt_legacy_offload_entry, Data, 28);
CHECK_SIZE(__tgt_device_image, 32);
CHECK_SIZE(__tgt_bin_desc, 32);
CHECK_OFF(__tgt_bin_desc, DeviceImages, 8);
CHECK_OFF(__tgt_bin_desc, HostEntriesBegin, 16);
CHECK_OFF(__tgt_bin_desc, HostEntriesEnd, 24);
CHECK_SIZE(offload_binary_header, 32);
CHECK_SIZE(offload_binary_entry, 40);
CHECK_OFF(offload_binary_entry, StringOffset, 8);
CHECK_OFF(offload_binary_entry, ImageOffset, 24);
CHECK_OFF(offload_binary_entry, ImageSize, 32);
CHECK_SIZE(offload_binary_string, 16);
CHECK_SIZE(KernelArgsTy, 104);
CHECK_OFF(KernelArgsTy, NumArgs, 4);
CHECK_OFF(KernelArgsTy, ArgBasePtrs, 8);
CHECK_OFF(KernelArgsTy, ArgPtrs, 16);
CHECK_OFF(KernelArgsTy, ArgSizes, 24);
CHECK_OFF(KernelArgsTy, ArgTypes, 32);
CHECK_OFF(KernelArgsTy, ArgNames, 40);
CHECK_OFF(KernelArgsTy, ArgMappers, 48);
CHECK_OFF(KernelArgsTy, Tripcount, 56);
CHECK_OFF(KernelArgsTy, Flags, 64);
CHECK_OFF(KernelArgsTy, NumTeams, 72);
CHECK_OFF(KernelArgsTy, ThreadLimit, 84);
CHECK_OFF(KernelArgsTy, DynCGroupMem, 96);
_Static_assert(OMP_TGT_MAPTYPE_MEMBER_OF(0) == 0x0001000000000000LL, "MEMBER_OF encoding");

int main(void) {
  printf("ident_t=%zu entry=%zu legacy_entry=%zu device_image=%zu bin_desc=%zu\n", sizeof(ident_t),
         sizeof(tgt_offload_entry), sizeof(tgt_legacy_offload_entry), sizeof(__tgt_device_image),
         sizeof(__tgt_bin_desc));
  printf("offload_binary header=%zu entry=%zu string=%zu KernelArgsTy=%zu\n", sizeof(offload_binary_header),
         sizeof(offload_binary_entry), sizeof(offload_binary_string), sizeof(KernelArgsTy));
  void (*volatile reg)(__tgt_bin_desc *) = __tgt_register_lib;
  printf("__tgt_register_lib resolved=%d\n", reg != NULL);
  return 0;
}
