/* Global offload entries (Size != 0, like declare target variables): each
 * device gets its own copy, mapped with an infinite reference count when the
 * image is loaded; __tgt_target_data_update_mapper moves data. */
#include "abi_util.h"

static const char r_count = 0, r_table = 0;
static int host_counter = 7;                            /* <-> dev_counter */
static double host_table[4] = {0.5, 1.5, 2.5, 3.5};     /* <-> dev_table */

static long run(const void *region, int dev, long inc) {
  long out[1] = {0};
  if (region == &r_count) {
    void *b[2] = {ABI_LIT(inc), out}, *p[2] = {ABI_LIT(inc), out};
    int64_t s[2] = {8, sizeof out};
    int64_t t[2] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                    OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
    KernelArgsTy k = abi_kargs(3, 2, b, p, s, t);
    __tgt_target_kernel(abi_loc(), dev, 0, 0, (void *)region, &k);
  } else {
    void *b[1] = {out}, *p[1] = {out};
    int64_t s[1] = {sizeof out};
    int64_t t[1] = {OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
    KernelArgsTy k = abi_kargs(3, 1, b, p, s, t);
    __tgt_target_kernel(abi_loc(), dev, 0, 0, (void *)region, &k);
  }
  return out[0];
}

static void update(int dev, void *host, int64_t size, int64_t type) {
  void *b[1] = {host}, *p[1] = {host};
  int64_t s[1] = {size}, t[1] = {type};
  __tgt_target_data_update_mapper(abi_loc(), dev, 1, b, p, s, t, NULL, NULL);
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[4];
  entries[0] = abi_global_entry(&host_counter, "dev_counter", sizeof host_counter, 0);
  entries[1] = abi_kernel_entry((void *)&r_count, "k3_count");
  entries[2] = abi_global_entry(host_table, "dev_table", sizeof host_table, 0);
  entries[3] = abi_kernel_entry((void *)&r_table, "k3_table");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[4]);
  __tgt_register_lib(&d.desc);

  long c1 = run(&r_count, 0, 1);
  long c2 = run(&r_count, 0, 1);
  printf("dev0 counter: %ld %ld\n", c1, c2);
  printf("dev1 counter (own copy): %ld\n", run(&r_count, 1, 100));
  printf("present: dev0=%d dev1=%d dev2=%d (the query loads the image)\n", omp_target_is_present(&host_counter, 0),
         omp_target_is_present(&host_counter, 1), omp_target_is_present(&host_counter, 2));
  update(0, &host_counter, sizeof host_counter, OMP_TGT_MAPTYPE_FROM);
  printf("update from dev0: host_counter=%d\n", host_counter);
  host_counter = 1000;
  update(1, &host_counter, sizeof host_counter, OMP_TGT_MAPTYPE_TO);
  printf("after update to dev1: dev1 counter=%ld\n", run(&r_count, 1, 1));

  printf("table sum*10 on dev3: %ld\n", run(&r_table, 3, 0));
  host_table[0] = 100.0;
  update(3, host_table, sizeof host_table, OMP_TGT_MAPTYPE_TO);
  printf("after update to: %ld (dev0 still %ld)\n", run(&r_table, 3, 0), run(&r_table, 0, 0));
  /* mapping a global with a map-exiting FROM does not copy (infinite refcount) */
  host_table[0] = -1;
  void *b[1] = {host_table}, *p[1] = {host_table};
  int64_t s[1] = {sizeof host_table}, t[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM};
  __tgt_target_data_begin_mapper(abi_loc(), 3, 1, b, p, s, t, NULL, NULL);
  __tgt_target_data_end_mapper(abi_loc(), 3, 1, b, p, s, t, NULL, NULL);
  printf("begin/end tofrom of a global: host_table[0]=%.1f still present=%d\n", host_table[0],
         omp_target_is_present(host_table, 3));
  void *mp = omp_get_mapped_ptr(&host_counter, 0);
  printf("mapped ptr of global on dev0 non-null=%d differs from host=%d\n", mp != NULL, mp != (void *)&host_counter);
  __tgt_unregister_lib(&d.desc);
  return 0;
}
