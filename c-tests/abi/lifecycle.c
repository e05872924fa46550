/* Runtime lifecycle (abi-reference 2.6, 2.9, 11.2 item 22): an all-zero
 * descriptor (old rustc style) registered/unregistered around a launch,
 * __tgt_init_all_rtls, explicit __tgt_rtl_init/deinit, repeated
 * register/unregister cycles of a real descriptor, and the obsolete
 * __tgt_register_requires. */
#include "abi_util.h"

static const char r_add = 0;

static int launch(int *a) {
  void *kb[3] = {a, ABI_LIT(2), ABI_LIT(1)}, *kp[3] = {a, ABI_LIT(2), ABI_LIT(1)};
  int64_t ks[3] = {2 * sizeof(int), 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  return __tgt_target_kernel(abi_loc(), 0, 0, 0, (void *)&r_add, &k);
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);

  __tgt_bin_desc zero = {0, NULL, NULL, NULL};
  __tgt_register_lib(&zero);
  __tgt_init_all_rtls();
  printf("zero descriptor + init_all_rtls: num_devices=%d\n", omp_get_num_devices());
  __tgt_unregister_lib(&zero);

  __tgt_register_lib(&d.desc);
  int a[2] = {0, 0};
  int rc = launch(a);
  printf("launch: rc=%d a[0]=%d\n", rc, a[0]);
  /* old-rustc pattern around a launch: zero descriptor register/unregister */
  __tgt_register_lib(&zero);
  __tgt_init_all_rtls();
  rc = launch(a);
  __tgt_unregister_lib(&zero);
  printf("launch inside zero-descriptor bracket: rc=%d a[0]=%d\n", rc, a[0]);
  __tgt_unregister_lib(&d.desc);

  for (int cycle = 0; cycle < 3; cycle++) {
    __tgt_rtl_init();
    __tgt_register_lib(&d.desc);
    rc = launch(a);
    __tgt_unregister_lib(&d.desc);
    __tgt_rtl_deinit();
    printf("cycle %d: rc=%d a[0]=%d\n", cycle, rc, a[0]);
  }
  __tgt_register_requires(1);
  printf("done\n");
  return 0;
}
