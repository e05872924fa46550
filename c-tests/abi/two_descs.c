/* Two descriptors (two "modules", as an executable plus an offloading shared
 * library register them), each with its own entry table and region ids for the
 * same image. Unregistering one leaves the other usable. */
#include "abi_util.h"

static const char r_a = 0, r_b = 0;
static int counter_a = 7, counter_b = 7; /* each module's dev_counter */
static const char r_count_a = 0, r_count_b = 0;

static int add(const void *region, int64_t dev, int *a, long val) {
  void *kb[3] = {a, ABI_LIT(2), ABI_LIT(val)}, *kp[3] = {a, ABI_LIT(2), ABI_LIT(val)};
  int64_t ks[3] = {2 * sizeof(int), 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  return __tgt_target_kernel(abi_loc(), dev, 0, 0, (void *)region, &k);
}

static long count(const void *region, int64_t dev) {
  long out[1] = {0};
  void *b[2] = {ABI_LIT(1), out}, *p[2] = {ABI_LIT(1), out};
  int64_t s[2] = {8, sizeof out};
  int64_t t[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                  OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 2, b, p, s, t);
  __tgt_target_kernel(abi_loc(), dev, 0, 0, (void *)region, &k);
  return out[0];
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  abi_buf image2 = abi_read_file(argv[1]); /* a second copy of the bytes */
  static tgt_offload_entry ea[3], eb[3];
  ea[0] = abi_kernel_entry((void *)&r_a, "k3_add");
  ea[1] = abi_global_entry(&counter_a, "dev_counter", sizeof(int), 0);
  ea[2] = abi_kernel_entry((void *)&r_count_a, "k3_count");
  eb[0] = abi_kernel_entry((void *)&r_b, "k3_add");
  eb[1] = abi_global_entry(&counter_b, "dev_counter", sizeof(int), 0);
  eb[2] = abi_kernel_entry((void *)&r_count_b, "k3_count");
  abi_desc da, db;
  abi_make_desc(&da, image, &ea[0], &ea[3]);
  abi_make_desc(&db, image2, &eb[0], &eb[3]);
  __tgt_register_lib(&da.desc);
  __tgt_register_lib(&db.desc);
  printf("num_devices=%d\n", omp_get_num_devices());

  int x[2] = {0, 0};
  int rca = add(&r_a, 0, x, 1);
  int rcb = add(&r_b, 0, x, 10);
  printf("both modules on dev0: rc=%d,%d x=%d,%d\n", rca, rcb, x[0], x[1]);
  /* each module's image is a separate load: separate globals */
  long ca = count(&r_count_a, 0);
  long cb = count(&r_count_b, 0);
  long ca2 = count(&r_count_a, 0);
  printf("module globals: a=%ld b=%ld a=%ld\n", ca, cb, ca2);

  __tgt_unregister_lib(&da.desc);
  rcb = add(&r_b, 2, x, 100);
  printf("after unregistering module a: module b on dev2 rc=%d x=%d,%d count_b=%ld\n", rcb, x[0], x[1],
         count(&r_count_b, 0));
  __tgt_unregister_lib(&db.desc);
  printf("done\n");
  return 0;
}
