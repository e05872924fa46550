/* Launching a region id that no registered descriptor knows: LLVM reports
 * "Host ptr ... does not have a matching target pointer." and aborts (134). */
#include "abi_util.h"

static const char r_add = 0, r_unknown = 0;

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  printf("registered, launching an unknown region id\n");
  KernelArgsTy k = abi_kargs(3, 0, NULL, NULL, NULL, NULL);
  int rc = __tgt_target_kernel(abi_loc_named(), 0, 0, 0, (void *)&r_unknown, &k);
  printf("not reached: rc=%d\n", rc);
  __tgt_unregister_lib(&d.desc);
  return 0;
}
