/* __tgt_target_kernel on device 7 with 4 devices: fatal error 7, abort (134). */
#include "abi_util.h"

static const char r_add = 0;

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  printf("num_devices=%d\n", omp_get_num_devices());
  int a[4] = {0};
  void *kb[3] = {a, ABI_LIT(4), ABI_LIT(1)}, *kp[3] = {a, ABI_LIT(4), ABI_LIT(1)};
  int64_t ks[3] = {sizeof a, 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  int rc = __tgt_target_kernel(abi_loc(), 7, 0, 0, (void *)&r_add, &k);
  printf("not reached: rc=%d\n", rc);
  return 0;
}
