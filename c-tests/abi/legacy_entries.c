/* A descriptor with LEGACY 32-byte offload entries (clang <= 19 layout,
 * abi-reference 2.2): the runtime detects them by the non-zero first qword,
 * upgrades them, and unregisters through the same descriptor address. */
#include "abi_util.h"

static const char region_add = 0, region_count = 0;
static int host_counter = 7; /* host side of dev_counter */

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_legacy_offload_entry entries[3];
  entries[0] = (tgt_legacy_offload_entry){(void *)&region_add, "k3_add", 0, 0, 0};
  entries[1] = (tgt_legacy_offload_entry){&host_counter, "dev_counter", sizeof(int), 0, 0};
  entries[2] = (tgt_legacy_offload_entry){(void *)&region_count, "k3_count", 0, 0, 0};
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[3]);
  __tgt_register_lib(&d.desc);
  printf("num_devices=%d\n", omp_get_num_devices());

  int a[5] = {1, 2, 3, 4, 5};
  void *kb[3] = {a, ABI_LIT(5), ABI_LIT(-1)}, *kp[3] = {a, ABI_LIT(5), ABI_LIT(-1)};
  int64_t ks[3] = {sizeof a, 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  int rc = __tgt_target_kernel(abi_loc(), 1, 0, 0, (void *)&region_add, &k);
  printf("k3_add via legacy entry on device 1: rc=%d a=%d,%d,%d,%d,%d\n", rc, a[0], a[1], a[2], a[3], a[4]);

  long out[1] = {0};
  void *cb[2] = {ABI_LIT(3), out}, *cp[2] = {ABI_LIT(3), out};
  int64_t cs[2] = {8, sizeof out};
  int64_t ct[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  k = abi_kargs(3, 2, cb, cp, cs, ct);
  rc = __tgt_target_kernel(abi_loc(), 1, 0, 0, (void *)&region_count, &k);
  printf("legacy global entry: rc=%d device counter=%ld present=%d\n", rc, out[0],
         omp_target_is_present(&host_counter, 1));
  __tgt_unregister_lib(&d.desc);
  printf("unregistered\n");
  return 0;
}
