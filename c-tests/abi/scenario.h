/* The basic register / map / launch / unregister scenario shared by
 * register_raw.c and register_wrapped.c. */
#ifndef OMPTARGET_RS_CTESTS_SCENARIO_H
#define OMPTARGET_RS_CTESTS_SCENARIO_H

#include "abi_util.h"

/* region ids: unique addresses (clang uses 1-byte weak constants) */
static const char scen_region_add = 0, scen_region_dyn = 0, scen_region_mul = 0, scen_region_count = 0;
static int scen_host_counter = 7; /* host side of device global dev_counter */

static inline int abi_basic_scenario(const char *label, abi_buf image) {
  static tgt_offload_entry entries[5];
  entries[0] = abi_kernel_entry((void *)&scen_region_add, "k3_add");
  entries[1] = abi_kernel_entry((void *)&scen_region_dyn, "k3_dyn");
  entries[2] = abi_kernel_entry((void *)&scen_region_mul, "k3_mul");
  entries[3] = abi_global_entry(&scen_host_counter, "dev_counter", sizeof(int), 0);
  entries[4] = abi_kernel_entry((void *)&scen_region_count, "k3_count");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[5]);

  __tgt_register_lib(&d.desc);
  printf("[%s] registered: num_devices=%d initial_device=%d\n", label, omp_get_num_devices(),
         omp_get_initial_device());

  /* target enter data map(tofrom: a) on the default device */
  int a[8];
  for (int i = 0; i < 8; i++)
    a[i] = i;
  void *b[1] = {a}, *p[1] = {a};
  int64_t s[1] = {sizeof a}, t[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM};
  __tgt_target_data_begin_mapper(abi_loc(), -1, 1, b, p, s, t, NULL, NULL);
  printf("[%s] after begin: present(dev0)=%d present(dev1)=%d\n", label, omp_target_is_present(a, 0),
         omp_target_is_present(a, 1));

  /* kernel k3_add(dyn, a, n=8, val=100): a is present (no copy), n and val literals */
  void *kb[3] = {a, ABI_LIT(8), ABI_LIT(100)};
  void *kp[3] = {a, ABI_LIT(8), ABI_LIT(100)};
  int64_t ks[3] = {sizeof a, 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  k.NumTeams[0] = (uint32_t)-1; /* plain 'target' (4.4) */
  int rc = __tgt_target_kernel(abi_loc(), -1, -1, 0, (void *)&scen_region_add, &k);
  printf("[%s] k3_add rc=%d host a[1]=%d (still mapped: not copied back)\n", label, rc, a[1]);
  __tgt_target_data_end_mapper(abi_loc(), -1, 1, b, p, s, t, NULL, NULL);
  printf("[%s] after end: a[1]=%d a[7]=%d present=%d\n", label, a[1], a[7], omp_target_is_present(a, 0));

  /* kernel k3_dyn(dyn, out): the implicit first argument */
  uint64_t out[1] = {0};
  void *db[1] = {out}, *dp[1] = {out};
  int64_t dsz[1] = {sizeof out};
  int64_t dt[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  k = abi_kargs(3, 1, db, dp, dsz, dt);
  rc = __tgt_target_kernel(abi_loc(), 0, 0, 0, (void *)&scen_region_dyn, &k);
  printf("[%s] k3_dyn rc=%d dyn_ptr=0x%016llx\n", label, rc, (unsigned long long)out[0]);

  /* kernel k3_mul(dyn, 6, 7, out) on device 2 */
  long prod[1] = {0};
  void *mb[3] = {ABI_LIT(6), ABI_LIT(7), prod}, *mp[3] = {ABI_LIT(6), ABI_LIT(7), prod};
  int64_t ms[3] = {8, 8, sizeof prod};
  int64_t mt[3] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  k = abi_kargs(3, 3, mb, mp, ms, mt);
  rc = __tgt_target_kernel(abi_loc(), 2, 0, 0, (void *)&scen_region_mul, &k);
  printf("[%s] k3_mul on device 2 rc=%d prod=%ld\n", label, rc, prod[0]);

  /* device global through its entry: k3_count increments dev_counter */
  long cnt[1] = {0};
  void *cb[2] = {ABI_LIT(5), cnt}, *cp[2] = {ABI_LIT(5), cnt};
  int64_t cs[2] = {8, sizeof cnt};
  int64_t ct[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  k = abi_kargs(3, 2, cb, cp, cs, ct);
  rc = __tgt_target_kernel(abi_loc(), 0, 0, 0, (void *)&scen_region_count, &k);
  printf("[%s] k3_count rc=%d device counter=%ld host counter=%d global present=%d\n", label, rc, cnt[0],
         scen_host_counter, omp_target_is_present(&scen_host_counter, 0));
  void *gb[1] = {&scen_host_counter}, *gp[1] = {&scen_host_counter};
  int64_t gs[1] = {sizeof(int)}, gt[1] = {OMP_TGT_MAPTYPE_FROM};
  __tgt_target_data_update_mapper(abi_loc(), 0, 1, gb, gp, gs, gt, NULL, NULL);
  printf("[%s] after update from: host counter=%d\n", label, scen_host_counter);

  __tgt_unregister_lib(&d.desc);
  printf("[%s] unregistered\n", label);
  return 0;
}

#endif
