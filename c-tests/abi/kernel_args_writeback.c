/* What __tgt_target_kernel writes back into the caller's KernelArgsTy
 * (abi-reference 4.4, 4.6, 11.2 item 6). Observed with LLVM 22.1:
 * NumTeams[0] = 1 when the call's NumTeams is -1, and zero NumTeams /
 * ThreadLimit dims 1 and 2 become 1 -- but NumArgs is NOT rewritten to the
 * number of kernel parameters (4 map entries, 3 parameters: stays 4),
 * although abi-reference 4.6 says it is. The reference calls treating Args as
 * const "compatible", so a difference here is a candidate "known divergence",
 * isolated in this one test. */
#include "abi_util.h"

static const char r_add = 0;

static void show(const char *what, const KernelArgsTy *k) {
  printf("%s: NumArgs=%u NumTeams=[%d,%u,%u] ThreadLimit=[%u,%u,%u]\n", what, k->NumArgs, (int)k->NumTeams[0],
         k->NumTeams[1], k->NumTeams[2], k->ThreadLimit[0], k->ThreadLimit[1], k->ThreadLimit[2]);
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);

  int a[4] = {0, 0, 0, 0};
  int extra = 5;
  /* 4 map entries; the 4th (extra) is mapped but is not a kernel parameter */
  void *kb[4] = {a, ABI_LIT(4), ABI_LIT(1), &extra}, *kp[4] = {a, ABI_LIT(4), ABI_LIT(1), &extra};
  int64_t ks[4] = {sizeof a, 8, 8, sizeof extra};
  int64_t kt[4] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM, OMP_TGT_MAPTYPE_TO};
  KernelArgsTy k = abi_kargs(3, 4, kb, kp, ks, kt);
  k.NumTeams[0] = (uint32_t)-1;
  show("before (plain target)", &k);
  int rc = __tgt_target_kernel(abi_loc(), 0, -1, 0, (void *)&r_add, &k);
  show("after", &k);
  printf("rc=%d a[0]=%d\n", rc, a[0]);

  k = abi_kargs(3, 4, kb, kp, ks, kt);
  k.NumTeams[0] = 8;
  k.ThreadLimit[0] = 64;
  show("before (teams num_teams(8) thread_limit(64))", &k);
  rc = __tgt_target_kernel(abi_loc(), 0, 8, 64, (void *)&r_add, &k);
  show("after", &k);
  printf("rc=%d a[0]=%d\n", rc, a[0]);
  __tgt_unregister_lib(&d.desc);
  return 0;
}
