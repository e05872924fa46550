/* Legacy entry points (abi-reference 4.8, 1.3.2): __tgt_target_mapper and
 * __tgt_target_teams_mapper build a Version 1 KernelArgsTy (so kernels get
 * NO dyn_ptr), the non-mapper data functions, nowait forms, tripcount push. */
#include "abi_util.h"

static const char r_k2_add = 0, r_k2_first = 0;

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[2];
  entries[0] = abi_kernel_entry((void *)&r_k2_add, "k2_add");
  entries[1] = abi_kernel_entry((void *)&r_k2_first, "k2_first");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[2]);
  __tgt_register_lib(&d.desc);

  int a[6] = {0, 1, 2, 3, 4, 5};
  void *b[3] = {a, ABI_LIT(6), ABI_LIT(10)}, *p[3] = {a, ABI_LIT(6), ABI_LIT(10)};
  int64_t s[3] = {sizeof a, 8, 8};
  int64_t t[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                  OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                  OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  __kmpc_push_target_tripcount_mapper(abi_loc(), 0, 6);
  int rc = __tgt_target_mapper(abi_loc(), 0, (void *)&r_k2_add, 3, b, p, s, t, NULL, NULL);
  printf("__tgt_target_mapper rc=%d a[5]=%d\n", rc, a[5]);
  rc = __tgt_target_teams_mapper(abi_loc(), 1, (void *)&r_k2_add, 3, b, p, s, t, NULL, NULL, 1, 1);
  printf("__tgt_target_teams_mapper rc=%d a[5]=%d\n", rc, a[5]);
  rc = __tgt_target(2, (void *)&r_k2_add, 3, b, p, s, t);
  printf("__tgt_target rc=%d a[5]=%d\n", rc, a[5]);
  rc = __tgt_target_teams(3, (void *)&r_k2_add, 3, b, p, s, t, 0, 0);
  printf("__tgt_target_teams rc=%d a[5]=%d\n", rc, a[5]);
  rc = __tgt_target_nowait_mapper(abi_loc(), 0, (void *)&r_k2_add, 3, b, p, s, t, NULL, NULL, 0, NULL, 0, NULL);
  printf("__tgt_target_nowait_mapper rc=%d a[5]=%d\n", rc, a[5]);

  /* the legacy path passes no dyn_ptr: k2_first sees the literal */
  uint64_t out[1] = {0};
  void *fb[2] = {ABI_LIT(777), out}, *fp[2] = {ABI_LIT(777), out};
  int64_t fs[2] = {8, sizeof out};
  int64_t ft[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  rc = __tgt_target_mapper(abi_loc(), 0, (void *)&r_k2_first, 2, fb, fp, fs, ft, NULL, NULL);
  printf("first kernel parameter via __tgt_target_mapper: rc=%d value=%llu\n", rc, (unsigned long long)out[0]);

  /* legacy data functions */
  int x[3] = {1, 2, 3};
  void *xb[1] = {x}, *xp[1] = {x};
  int64_t xs[1] = {sizeof x}, xt_to[1] = {OMP_TGT_MAPTYPE_TO}, xt_from[1] = {OMP_TGT_MAPTYPE_FROM};
  __tgt_target_data_begin(2, 1, xb, xp, xs, xt_to);
  printf("legacy begin: present=%d\n", omp_target_is_present(x, 2));
  x[0] = 50;
  __tgt_target_data_update(2, 1, xb, xp, xs, xt_to);
  x[0] = 0;
  __tgt_target_data_update(2, 1, xb, xp, xs, xt_from);
  printf("legacy update to+from: x[0]=%d\n", x[0]);
  __tgt_target_data_end(2, 1, xb, xp, xs, xt_from);
  printf("legacy end: present=%d\n", omp_target_is_present(x, 2));
  __tgt_unregister_lib(&d.desc);
  return 0;
}
