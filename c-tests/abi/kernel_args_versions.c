/* KernelArgsTy Versions 1, 2, 3 and 4 (abi-reference 4.2, 4.5, 5.2):
 * Version >= 3 kernels get the implicit dyn_ptr first; Version <= 2 do not.
 * A Version 1 struct is built as LLVM 16 laid it out (fields through
 * Tripcount); the rest of our 104-byte struct is zero. */
#include "abi_util.h"

static const char r_k3_add = 0, r_k3_dyn = 0, r_k2_add = 0, r_k2_first = 0;

static int launch_add(uint32_t version, const void *region, int *a, long n, long val) {
  void *kb[3] = {a, ABI_LIT(n), ABI_LIT(val)}, *kp[3] = {a, ABI_LIT(n), ABI_LIT(val)};
  int64_t ks[3] = {(int64_t)(n * (long)sizeof(int)), 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(version, 3, kb, kp, ks, kt);
  if (version >= 2)
    k.NumTeams[0] = 1;
  return __tgt_target_kernel(abi_loc(), 0, 1, 0, (void *)region, &k);
}

static uint64_t launch_first(uint32_t version, const void *region, uint64_t literal) {
  uint64_t out[1] = {0};
  void *kb[2] = {ABI_LIT(literal), out}, *kp[2] = {ABI_LIT(literal), out};
  int64_t ks[2] = {8, sizeof out};
  int64_t kt[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(version, 2, kb, kp, ks, kt);
  int rc = __tgt_target_kernel(abi_loc(), 0, 0, 0, (void *)region, &k);
  if (rc != 0)
    printf("launch failed rc=%d\n", rc);
  return out[0];
}

static uint64_t launch_dyn(uint32_t version) {
  uint64_t out[1] = {0};
  void *kb[1] = {out}, *kp[1] = {out};
  int64_t ks[1] = {sizeof out};
  int64_t kt[1] = {OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(version, 1, kb, kp, ks, kt);
  int rc = __tgt_target_kernel(abi_loc(), 0, 0, 0, (void *)&r_k3_dyn, &k);
  if (rc != 0)
    printf("launch failed rc=%d\n", rc);
  return out[0];
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[4];
  entries[0] = abi_kernel_entry((void *)&r_k3_add, "k3_add");
  entries[1] = abi_kernel_entry((void *)&r_k3_dyn, "k3_dyn");
  entries[2] = abi_kernel_entry((void *)&r_k2_add, "k2_add");
  entries[3] = abi_kernel_entry((void *)&r_k2_first, "k2_first");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[4]);
  __tgt_register_lib(&d.desc);

  int a[4] = {0, 0, 0, 0};
  int rc1 = launch_add(1, &r_k2_add, a, 4, 1);
  int rc2 = launch_add(2, &r_k2_add, a, 4, 10);
  int rc3 = launch_add(3, &r_k3_add, a, 4, 100);
  int rc4 = launch_add(4, &r_k3_add, a, 4, 1000);
  printf("add: rc v1=%d v2=%d v3=%d v4=%d a=%d,%d,%d,%d\n", rc1, rc2, rc3, rc4, a[0], a[1], a[2], a[3]);

  /* first parameter of the kernel: the literal for v1/v2, dyn_ptr for v3/v4 */
  printf("k2_first v1: 0x%llx\n", (unsigned long long)launch_first(1, &r_k2_first, 1234));
  printf("k2_first v2: 0x%llx\n", (unsigned long long)launch_first(2, &r_k2_first, 5678));
  /* k3_dyn(dyn, out): with one map entry, out is the first explicit parameter */
  printf("k3_dyn v3: 0x%llx\n", (unsigned long long)launch_dyn(3));
  printf("k3_dyn v4 (used as v3): 0x%llx\n", (unsigned long long)launch_dyn(4));

  __tgt_unregister_lib(&d.desc);
  return 0;
}
