/* Device numbers that take the host path (abi-reference 4.6, 4.9, 9.1):
 * DeviceId == initial device -> __tgt_target_kernel returns -1 and data calls
 * do nothing; DeviceId -1 -> the default device (0); Flags.NoWait outside any
 * OpenMP task runs synchronously. */
#include "abi_util.h"

static const char r_add = 0;

static int launch(int64_t dev, int *a, uint64_t flags) {
  void *kb[3] = {a, ABI_LIT(4), ABI_LIT(1)}, *kp[3] = {a, ABI_LIT(4), ABI_LIT(1)};
  int64_t ks[3] = {4 * sizeof(int), 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  k.Flags = flags;
  return __tgt_target_kernel(abi_loc(), dev, 0, 0, (void *)&r_add, &k);
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  int host = omp_get_initial_device();
  printf("initial device=%d\n", host);

  int a[4] = {0, 0, 0, 0};
  int rc = launch(host, a, 0);
  printf("launch on the initial device: rc=%d a[0]=%d\n", rc, a[0]);
  rc = launch(-1, a, 0);
  printf("launch on device -1 (default): rc=%d a[0]=%d\n", rc, a[0]);
  rc = launch(0, a, 1 /* NoWait */);
  printf("NoWait outside a task: rc=%d a[0]=%d (completed on return)\n", rc, a[0]);

  /* data calls on the initial device are no-ops */
  void *b[1] = {a}, *p[1] = {a};
  int64_t s[1] = {sizeof a}, t[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM};
  __tgt_target_data_begin_mapper(abi_loc(), host, 1, b, p, s, t, NULL, NULL);
  printf("begin on the initial device: present on dev0=%d on host=%d\n", omp_target_is_present(a, 0),
         omp_target_is_present(a, host));
  __tgt_target_data_end_mapper(abi_loc(), host, 1, b, p, s, t, NULL, NULL);

  /* omp_target_alloc / memcpy through the initial device */
  int *h = omp_target_alloc(sizeof a, host);
  int rcm = omp_target_memcpy(h, a, sizeof a, 0, 0, host, host);
  printf("alloc+memcpy on the initial device: rc=%d h[0]=%d\n", rcm, h[0]);
  omp_target_free(h, host);
  printf("mapped ptr on the initial device is identity=%d\n", omp_get_mapped_ptr(a, host) == (void *)a);
  __tgt_unregister_lib(&d.desc);
  return 0;
}
