/* nowait: throughput of deferred target tasks.
 *
 *   nowait <n> <reps>
 *
 * Each sample issues <n> target nowait regions from the initial thread
 * (outside any parallel region, so the runtime defers them to its hidden
 * helper threads) followed by one taskwait, and reports ns per region:
 *   nowait_nomap   empty region, no maps
 *   nowait_tofrom  region map(tofrom: a[i]) of a distinct element each, body
 *                  increments it
 */
#include "bench.h"
#include <omp.h>

int main(int argc, char **argv) {
  long n = bench_arg_long(argc, argv, 1, 2000);
  long reps = bench_arg_long(argc, argv, 2, 5);
  if (n < 1 || reps < 1) BENCH_FAIL("usage: nowait n reps");
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");
  int *a = calloc((size_t)n, sizeof(int));
  if (!a) BENCH_FAIL("out of memory");

  for (long r = -1; r < reps; r++) { /* r == -1: warm-up */
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < n; i++) {
#pragma omp target nowait
      {
      }
    }
#pragma omp taskwait
    uint64_t t1 = bench_now_ns();
    for (long i = 0; i < n; i++) {
#pragma omp target nowait map(tofrom : a[i])
      { a[i]++; }
    }
#pragma omp taskwait
    uint64_t t2 = bench_now_ns();
    if (r >= 0) {
      bench_sample("nowait_nomap", (double)(t1 - t0) / (double)n);
      bench_sample("nowait_tofrom", (double)(t2 - t1) / (double)n);
    }
  }
  long long sum = 0;
  for (long i = 0; i < n; i++) {
    if (a[i] != reps + 1) BENCH_FAIL("a[%ld] = %d, want %ld", i, a[i], reps + 1);
    sum += a[i];
  }
  if (omp_target_is_present(a, omp_get_default_device()))
    BENCH_FAIL("a still present after taskwait");
  bench_check("nowait_sum", sum);
  free(a);
  return 0;
}
