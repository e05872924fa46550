/* Mapping-table scaling: per-operation cost with many live mappings.
 *
 *   scale <iters> <reps> <L1> [<L2> ...]    (levels ascending)
 *
 * For each level L, the table is grown (target enter data) to L live
 * mappings of 32 bytes each, 64 bytes apart in one pool, then two metrics are
 * sampled <reps> times over <iters> operations each:
 *   scale_region_<L>     target region map(tofrom:) of an existing mapping
 *                        (the one in the middle of the pool)
 *   scale_enterexit_<L>  target enter data + exit data of a fresh buffer that
 *                        is not mapped (one insertion and one removal)
 */
#include "bench.h"
#include <omp.h>

#define STRIDE 16 /* ints between mappings (64 bytes) */
#define LEN 8     /* ints per mapping (32 bytes) */

static void level_name(char *buf, size_t n, const char *what, long l) {
  if (l % 1000 == 0)
    snprintf(buf, n, "scale_%s_%ldk", what, l / 1000);
  else
    snprintf(buf, n, "scale_%s_%ld", what, l);
}

int main(int argc, char **argv) {
  long iters = bench_arg_long(argc, argv, 1, 10000);
  long reps = bench_arg_long(argc, argv, 2, 5);
  if (argc < 4 || iters < 1 || reps < 1) BENCH_FAIL("usage: scale iters reps L...");
  long maxl = 0;
  for (int i = 3; i < argc; i++) {
    long l = strtol(argv[i], NULL, 10);
    if (l <= maxl) BENCH_FAIL("levels must be ascending and positive");
    maxl = l;
  }
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");

  int *pool = aligned_alloc(64, (size_t)maxl * STRIDE * sizeof(int));
  int *fresh = aligned_alloc(64, 64);
  if (!pool || !fresh) BENCH_FAIL("out of memory");
  memset(pool, 0, (size_t)maxl * STRIDE * sizeof(int));
  memset(fresh, 0, 64);

  long live = 0;
  long long region_ops = 0, ee_ops = 0;
  char name[64];
  for (int li = 3; li < argc; li++) {
    long l = strtol(argv[li], NULL, 10);
    for (; live < l; live++) {
      int *p = pool + live * STRIDE;
#pragma omp target enter data map(to : p[0:LEN])
    }
    int *h = pool + (l / 2) * STRIDE;
    if (!omp_target_is_present(h, omp_get_default_device()))
      BENCH_FAIL("mapping %ld not present", l / 2);

    for (long r = -1; r < reps; r++) { /* r == -1: warm-up */
      long n = r < 0 ? iters / 10 + 1 : iters;
      uint64_t t0 = bench_now_ns();
      for (long i = 0; i < n; i++) {
#pragma omp target map(tofrom : h[0:LEN])
        { h[0]++; }
      }
      uint64_t t1 = bench_now_ns();
      for (long i = 0; i < n; i++) {
#pragma omp target enter data map(to : fresh[0:LEN])
#pragma omp target exit data map(from : fresh[0:LEN])
      }
      uint64_t t2 = bench_now_ns();
      region_ops += n;
      ee_ops += n;
      if (r >= 0) {
        level_name(name, sizeof name, "region", l);
        bench_sample(name, (double)(t1 - t0) / (double)n);
        level_name(name, sizeof name, "enterexit", l);
        bench_sample(name, (double)(t2 - t1) / (double)n);
      }
    }
    if (omp_target_is_present(fresh, omp_get_default_device()))
      BENCH_FAIL("fresh buffer still present after exit data");
  }

  /* Read back the device-side counters of every level's hot mapping, then
   * release the whole table. */
  long long sum = 0;
  for (long i = 0; i < live; i++) {
    int *p = pool + i * STRIDE;
#pragma omp target exit data map(from : p[0:LEN])
    sum += p[0];
  }
  if (sum != region_ops)
    BENCH_FAIL("device-side increments %lld, expected %lld", sum, region_ops);
  bench_check("scale_live", live);
  bench_check("scale_region_ops", sum);
  bench_check("scale_enterexit_ops", ee_ops);
  free(pool);
  free(fresh);
  return 0;
}
