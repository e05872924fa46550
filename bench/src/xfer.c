/* Transfers: bandwidth of target update to/from versus plain memcpy.
 *
 *   xfer <reps> <MiB1> [<MiB2> ...]
 *
 * For each size S a host buffer of S bytes is mapped once (enter data
 * map(alloc)), every path is warmed up once (page faults out of the way), and
 * then, <reps> times, with the three paths alternating operation by operation:
 *   xfer_to_<S>      target update to(a[0:S])    (host -> device)
 *   xfer_from_<S>    target update from(a[0:S])  (device -> host)
 *   xfer_memcpy_<S>  memcpy(dst, src, S) between two warm host buffers
 *   region_map_to_<S>  #pragma omp target map(to: b[0:S]) of a warm host
 *                    buffer that is not mapped: allocate, copy in, run, free
 * Each sample is ns per transfer: the median over the transfers of one sample
 * (as many as move 64 MiB; one at 64 MiB and above).
 */
#include "bench.h"
#include <omp.h>

#define MAX_INNER 64 /* 64 MiB moved per sample at the smallest size, 1 MiB */

static double t_to[MAX_INNER], t_from[MAX_INNER], t_mc[MAX_INNER], t_rg[MAX_INNER];

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, long n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void size_name(char *buf, size_t n, const char *what, long mib) {
  snprintf(buf, n, "xfer_%s_%ldM", what, mib);
}

int main(int argc, char **argv) {
  long reps = bench_arg_long(argc, argv, 1, 5);
  if (argc < 3 || reps < 1) BENCH_FAIL("usage: xfer reps MiB...");
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");
  char name[64];
  long long checked = 0;
  for (int ai = 2; ai < argc; ai++) {
    long mib = strtol(argv[ai], NULL, 10);
    if (mib < 1) BENCH_FAIL("bad size %ld", mib);
    size_t bytes = (size_t)mib << 20, n = bytes;
    long inner = (64l << 20) / (long)bytes;
    if (inner < 1) inner = 1;
    if (inner > MAX_INNER) inner = MAX_INNER;
    unsigned char *a = malloc(bytes), *src = malloc(bytes), *dst = malloc(bytes), *b = malloc(bytes);
    if (!a || !src || !dst || !b) BENCH_FAIL("out of memory for %ld MiB", mib);
    memset(b, 4, bytes);
    unsigned long seen = 0;
    memset(a, 1, bytes);
    memset(src, 2, bytes);
    memset(dst, 3, bytes);
    /* Let src and dst escape: otherwise clang proves src is all 2s and turns
     * memcpy(dst, src) into a (write-only, ~2.5x faster) memset. */
    __asm__ volatile("" : : "r"(src), "r"(dst) : "memory");
#pragma omp target enter data map(alloc : a[0:n])
    /* Warm-up: fault in the device buffer and every path once. */
#pragma omp target update to(a[0:n])
#pragma omp target update from(a[0:n])
    memcpy(dst, src, bytes);
#pragma omp target map(to : b[0:n]) map(tofrom : seen)
    seen += b[n - 1];

    for (long r = 0; r < reps; r++) {
      /* The three paths alternate operation by operation, so that a noisy
       * phase of the machine hits all three alike; the sample is the median
       * of the per-operation times (robust against short bursts). */
      for (long i = 0; i < inner; i++) {
        uint64_t t0 = bench_now_ns();
#pragma omp target update to(a[0:n])
        uint64_t t1 = bench_now_ns();
#pragma omp target update from(a[0:n])
        uint64_t t2 = bench_now_ns();
        memcpy(dst, src, bytes);
        __asm__ volatile("" : : "r"(dst), "r"(src) : "memory");
        uint64_t t3 = bench_now_ns();
#pragma omp target map(to : b[0:n]) map(tofrom : seen)
        seen += b[n - 1];
        uint64_t t4 = bench_now_ns();
        t_rg[i] = (double)(t4 - t3);
        t_to[i] = (double)(t1 - t0);
        t_from[i] = (double)(t2 - t1);
        t_mc[i] = (double)(t3 - t2);
      }
      size_name(name, sizeof name, "to", mib);
      bench_sample(name, median(t_to, inner));
      size_name(name, sizeof name, "from", mib);
      bench_sample(name, median(t_from, inner));
      size_name(name, sizeof name, "memcpy", mib);
      bench_sample(name, median(t_mc, inner));
      snprintf(name, sizeof name, "region_map_to_%ldM", mib);
      bench_sample(name, median(t_rg, inner));
    }

    /* Validate: a pattern goes to the device and comes back. */
    for (size_t i = 0; i < bytes; i += 4096) a[i] = (unsigned char)(i >> 12);
#pragma omp target update to(a[0:n])
    memset(a, 0, bytes);
#pragma omp target exit data map(from : a[0:n])
    for (size_t i = 0; i < bytes; i += 4096) {
      unsigned char want = (unsigned char)(i >> 12);
      if (a[i] != want) BENCH_FAIL("%ld MiB: byte %zu is %d, want %d", mib, i, a[i], want);
      checked++;
    }
    if (dst[bytes - 1] != 2) BENCH_FAIL("memcpy destination wrong");
    if (seen != 4ul * (1 + (unsigned long)(reps * inner))) BENCH_FAIL("map(to:) region saw %lu", seen);
    free(b);
    free(a);
    free(src);
    free(dst);
  }
  bench_check("xfer_pages_checked", checked);
  return 0;
}
