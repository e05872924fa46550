/* An image whose offload entries name a kernel the image does not contain
 * (what clang 22 leaves behind for some metadirective variants): 22.1 reports
 * "Failed to load kernel <name>" when the image is loaded, registers the rest
 * (kernels and globals) and runs them; only a launch of the missing kernel
 * fails. 22.1 then launches the host's region id as if it were the kernel
 * and crashes (SIGSEGV); ours fails that launch with a clear error (exit 134,
 * "Failed to load kernel k3_not_in_the_image: ..."). The differential run
 * stops before that launch; c-tests/missing-kernel.sh runs the launch
 * ("launch-missing" argument) on ours. */
#include "abi_util.h"

static const char r_count = 0, r_missing = 0;
static int host_counter = 7; /* <-> dev_counter */

static int launch(const void *region, int dev, long inc, long *out) {
  void *b[2] = {ABI_LIT(inc), out}, *p[2] = {ABI_LIT(inc), out};
  int64_t s[2] = {8, sizeof *out};
  int64_t t[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                  OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 2, b, p, s, t);
  return __tgt_target_kernel(abi_loc(), dev, 0, 0, (void *)region, &k);
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[3];
  entries[0] = abi_kernel_entry((void *)&r_missing, "k3_not_in_the_image");
  entries[1] = abi_global_entry(&host_counter, "dev_counter", sizeof host_counter, 0);
  entries[2] = abi_kernel_entry((void *)&r_count, "k3_count");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[3]);
  __tgt_register_lib(&d.desc);

  long out = 0;
  int rc = launch(&r_count, 0, 1, &out);
  printf("k3_count rc=%d out=%ld\n", rc, out);
  printf("global present=%d\n", omp_target_is_present(&host_counter, 0));
  rc = launch(&r_count, 1, 5, &out);
  printf("k3_count on dev1 rc=%d out=%ld\n", rc, out);
  if (argc > 2 && strcmp(argv[2], "launch-missing") == 0) {
    fflush(stdout);
    rc = launch(&r_missing, 0, 1, &out);
    printf("missing kernel rc=%d\n", rc);
  }
  __tgt_unregister_lib(&d.desc);
  return 0;
}
