/* Device memory: how the host plugin's device buffers behave when a program
 * touches them for the first time, reuses them, and reads them at random.
 * Three patterns of real offload programs, each timed in-process from the
 * first mapping to the last unmapping (page faults included):
 *
 *   mem fresh <MiB> <iters>
 *     BabelStream-like: every iteration maps three buffers of <MiB> each
 *     (target data map(to: a) map(alloc: t) map(from: c)), one kernel writes
 *     t = 2a, a second writes c = a + t, and the data region ends (every
 *     device buffer is freed). Samples: mem_fresh_first (the first
 *     iteration: fresh device memory), mem_fresh_total (all iterations).
 *   mem hash <MiB> <buffers>
 *     murmurhash-like: <buffers> host buffers of <MiB> each are mapped to the
 *     device at once (enter data map(to:)), so every device buffer is fresh
 *     memory, then one kernel per buffer hashes it once, then all are
 *     unmapped. Sample: mem_hash_total.
 *   mem table <MiB> <lookups>
 *     XSBench-like: a lookup table of <MiB> and one of <MiB>/8 are mapped
 *     to the device once (map(to:)), then four kernels each make <lookups>
 *     random reads into both (index from an LCG), and the tables are
 *     unmapped. Samples: mem_table_total, mem_table_lookup (the kernels
 *     alone).
 *
 * Each pattern also reports its system CPU time (mem_<p>_sys, ms, getrusage
 * of the whole process over the same span): page faults and zeroing land
 * there. One pattern per process (run.sh runs each in a fresh process), so
 * memory a pattern freed never serves the next one.
 */
#include "bench.h"
#include <omp.h>
#include <sys/resource.h>

static double sys_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
}

static double ms_since(uint64_t t0) { return (double)(bench_now_ns() - t0) / 1e6; }

static double *alloc_doubles(size_t n, double v) {
  double *p = malloc(n * sizeof *p);
  if (!p) BENCH_FAIL("out of memory (%zu doubles)", n);
  for (size_t i = 0; i < n; i++) p[i] = v;
  return p;
}

static int fresh(long mib, long iters) {
  size_t n = ((size_t)mib << 20) / sizeof(double);
  double *a = alloc_doubles(n, 1.5), *t = alloc_doubles(n, 0), *c = alloc_doubles(n, 0);
  double s0 = sys_ms();
  uint64_t t0 = bench_now_ns();
  double first = 0;
  for (long it = 0; it < iters; it++) {
    uint64_t ti = bench_now_ns();
#pragma omp target data map(to : a[0:n]) map(alloc : t[0:n]) map(from : c[0:n])
    {
#pragma omp target teams distribute parallel for
      for (size_t i = 0; i < n; i++) t[i] = 2 * a[i];
#pragma omp target teams distribute parallel for
      for (size_t i = 0; i < n; i++) c[i] = a[i] + t[i];
    }
    if (it == 0) first = ms_since(ti);
  }
  double total = ms_since(t0), sys = sys_ms() - s0;
  for (size_t i = 0; i < n; i += 4096)
    if (c[i] != 4.5) BENCH_FAIL("fresh: c[%zu] = %g, want 4.5", i, c[i]);
  if (t[0] != 0) BENCH_FAIL("fresh: map(alloc:) buffer came back");
  bench_sample("mem_fresh_first", first);
  bench_sample("mem_fresh_total", total);
  bench_sample("mem_fresh_sys", sys);
  bench_check("mem_fresh_c", (long long)(c[n - 1] * 10));
  free(a);
  free(t);
  free(c);
  return 0;
}

static int hash(long mib, long nbuf) {
  size_t nw = ((size_t)mib << 20) / sizeof(uint64_t);
  uint64_t **bufs = calloc((size_t)nbuf, sizeof *bufs);
  if (!bufs) BENCH_FAIL("out of memory");
  for (long b = 0; b < nbuf; b++) {
    bufs[b] = malloc(nw * sizeof(uint64_t));
    if (!bufs[b]) BENCH_FAIL("out of memory (buffer %ld)", b);
    for (size_t i = 0; i < nw; i++) bufs[b][i] = (uint64_t)b << 40 ^ i * 0x9e3779b97f4a7c15ull;
  }
  uint64_t all = 0;
  double s0 = sys_ms();
  uint64_t t0 = bench_now_ns();
  for (long b = 0; b < nbuf; b++) {
    uint64_t *p = bufs[b];
#pragma omp target enter data map(to : p[0:nw])
  }
  for (long b = 0; b < nbuf; b++) {
    uint64_t *p = bufs[b], h = 0;
    /* One pass over the buffer: a murmur-style mix of every word, combined
     * with xor (order-independent, so the result is the same whatever the
     * schedule). */
#pragma omp target teams distribute parallel for reduction(^ : h) map(tofrom : h)
    for (size_t i = 0; i < nw; i++) {
      uint64_t k = p[i] * 0x87c37b91114253d5ull;
      k = (k << 31 | k >> 33) * 0x4cf5ad432745937full;
      h ^= k ^ (k >> 29);
    }
    all ^= h + (uint64_t)b;
  }
  for (long b = 0; b < nbuf; b++) {
    uint64_t *p = bufs[b];
#pragma omp target exit data map(delete : p[0:nw])
  }
  double total = ms_since(t0), sys = sys_ms() - s0;
  bench_sample("mem_hash_total", total);
  bench_sample("mem_hash_sys", sys);
  bench_check("mem_hash", (long long)(all >> 1));
  for (long b = 0; b < nbuf; b++) free(bufs[b]);
  free(bufs);
  return 0;
}

static int table(long mib, long lookups) {
  size_t n1 = ((size_t)mib << 20) / sizeof(double), n2 = n1 / 8;
  double *big = malloc(n1 * sizeof *big), *small = malloc(n2 * sizeof *small);
  if (!big || !small) BENCH_FAIL("out of memory");
  for (size_t i = 0; i < n1; i++) big[i] = (double)(i % 1000);
  for (size_t i = 0; i < n2; i++) small[i] = (double)(i % 7);
  const long chunks = 4096; /* independent LCG streams, one per iteration */
  long per = lookups / chunks;
  if (per < 1) per = 1;
  double result = 0, lookup_ms = 0;
  double s0 = sys_ms();
  uint64_t t0 = bench_now_ns();
#pragma omp target data map(to : big[0:n1], small[0:n2])
  {
    uint64_t tl = bench_now_ns();
    for (int k = 0; k < 4; k++) {
      double sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(tofrom : sum)
      for (long c = 0; c < chunks; c++) {
        uint64_t x = (uint64_t)(c + 1) * 2862933555777941757ull + (uint64_t)k;
        for (long j = 0; j < per; j++) {
          x = x * 6364136223846793005ull + 1442695040888963407ull;
          size_t i = (size_t)(x >> 17) % n1;
          sum += big[i] + small[i % n2];
        }
      }
      result += sum;
    }
    lookup_ms = ms_since(tl);
  }
  double total = ms_since(t0), sys = sys_ms() - s0;
  bench_sample("mem_table_total", total);
  bench_sample("mem_table_lookup", lookup_ms);
  bench_sample("mem_table_sys", sys);
  bench_check("mem_table", (long long)result);
  free(big);
  free(small);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) BENCH_FAIL("usage: mem fresh|hash|table <MiB> <count>");
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");
  long mib = strtol(argv[2], NULL, 10), count = strtol(argv[3], NULL, 10);
  if (mib < 1 || count < 1) BENCH_FAIL("bad arguments");
  if (!strcmp(argv[1], "fresh")) return fresh(mib, count);
  if (!strcmp(argv[1], "hash")) return hash(mib, count);
  if (!strcmp(argv[1], "table")) return table(mib, count);
  BENCH_FAIL("unknown pattern %s", argv[1]);
}
