/* Per-operation latency of the basic offloading operations.
 *
 *   lat <iters> <reps>        timing mode: for every rep, every metric runs a
 *                             timed loop of <iters> operations (after one
 *                             warm-up loop); prints "sample lat_<m> <ns/op>"
 *   lat cg <n1> <n2>          callgrind mode: for every metric, one loop of
 *                             <n1> then one of <n2> operations, each followed
 *                             by CALLGRIND_DUMP_STATS_AT("lat_<m>/<n>"), so
 *                             (Ir(n2) - Ir(n1)) / (n2 - n1) is the
 *                             instruction count of one operation with start-up
 *                             and per-loop constant costs cancelled out
 */
#include "bench.h"
#include <omp.h>

#define NARR 1024

static int dev, host;
static double v;                       /* 8 bytes, mapped */
static double eb[8];                   /* present buffer for enter/exit */
static double a0[NARR], a1[NARR], a2[NARR], a3[NARR], a4[NARR], a5[NARR],
    a6[NARR], a7[NARR];                /* 8 present arrays */
static void *dbuf;                     /* omp_target_alloc'ed 8 bytes */
static long long tofrom_count;         /* region_tofrom result */
static long long present8_count;       /* region_present8 increments */
static long long is_present_sum;
static double unmapped;                /* never mapped: is_present misses */
static long long is_present_miss_sum;

static void m_region_nomap(long n) {
  for (long i = 0; i < n; i++) {
#pragma omp target
    {
    }
  }
}

static void m_region_fp(long n) {
  for (long i = 0; i < n; i++) {
    long s = i;
#pragma omp target firstprivate(s)
    { BENCH_USE(s); }
  }
}

static void m_region_tofrom(long n) {
  long long x = tofrom_count;
  for (long i = 0; i < n; i++) {
#pragma omp target map(tofrom : x)
    { x++; }
  }
  tofrom_count = x;
}

static void m_region_present8(long n) {
  for (long i = 0; i < n; i++) {
#pragma omp target map(tofrom : a0[0:NARR], a1[0:NARR], a2[0:NARR],           \
                           a3[0:NARR], a4[0:NARR], a5[0:NARR], a6[0:NARR],     \
                           a7[0:NARR])
    {
      a0[0] += 1.0;
      BENCH_USE(a1[0] + a2[0] + a3[0] + a4[0] + a5[0] + a6[0] + a7[0]);
    }
  }
  present8_count += n;
}

static void m_enter_exit(long n) {
  for (long i = 0; i < n; i++) {
#pragma omp target enter data map(to : eb[0:8])
#pragma omp target exit data map(from : eb[0:8])
  }
}

static void m_update8(long n) {
  for (long i = 0; i < n; i++) {
#pragma omp target update to(v)
  }
}

static void m_alloc_free(long n) {
  for (long i = 0; i < n; i++) {
    void *p = omp_target_alloc(64, dev);
    if (!p) BENCH_FAIL("omp_target_alloc returned NULL");
    omp_target_free(p, dev);
  }
}

static void m_memcpy8(long n) {
  for (long i = 0; i < n; i++) {
    if (omp_target_memcpy(dbuf, &v, 8, 0, 0, dev, host))
      BENCH_FAIL("omp_target_memcpy failed");
  }
}

static void m_is_present(long n) {
  long long s = 0;
  for (long i = 0; i < n; i++)
    s += omp_target_is_present(&v, dev);
  is_present_sum += s;
}

static void m_is_present_miss(long n) {
  long long s = 0;
  for (long i = 0; i < n; i++)
    s += omp_target_is_present(&unmapped, dev);
  is_present_miss_sum += s;
}

struct metric {
  const char *name;
  void (*fn)(long);
};

static const struct metric metrics[] = {
    {"lat_region_nomap", m_region_nomap},
    {"lat_region_fp", m_region_fp},
    {"lat_region_tofrom", m_region_tofrom},
    {"lat_region_present8", m_region_present8},
    {"lat_enter_exit", m_enter_exit},
    {"lat_update8", m_update8},
    {"lat_alloc_free", m_alloc_free},
    {"lat_memcpy8", m_memcpy8},
    {"lat_is_present", m_is_present},
    {"lat_is_present_miss", m_is_present_miss},
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

int main(int argc, char **argv) {
  int cg = argc > 1 && strcmp(argv[1], "cg") == 0;
  long iters = bench_arg_long(argc, argv, 1 + cg, 10000);
  long reps = bench_arg_long(argc, argv, 2 + cg, 5);
  if (iters < 1 || reps < 1) BENCH_FAIL("bad arguments");

  dev = omp_get_default_device();
  host = omp_get_initial_device();
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");

  v = 1.5;
  for (int i = 0; i < NARR; i++)
    a0[i] = a1[i] = a2[i] = a3[i] = a4[i] = a5[i] = a6[i] = a7[i] = i;
#pragma omp target enter data map(to : v, eb[0:8])
#pragma omp target enter data map(to : a0[0:NARR], a1[0:NARR], a2[0:NARR],    \
                                      a3[0:NARR], a4[0:NARR], a5[0:NARR],      \
                                      a6[0:NARR], a7[0:NARR])
  dbuf = omp_target_alloc(8, dev);
  if (!dbuf) BENCH_FAIL("omp_target_alloc(8) failed");

  long long total = 0; /* operations per metric, for the checks */
  if (cg) {
    long n1 = iters, n2 = reps;
    if (n2 <= n1) BENCH_FAIL("cg mode needs n2 > n1");
    char label[128];
    for (size_t m = 0; m < NMETRICS; m++) {
      metrics[m].fn(10); /* warm-up: first-use initialisation */
      CALLGRIND_ZERO_STATS;
      metrics[m].fn(n1);
      snprintf(label, sizeof label, "%s/%ld", metrics[m].name, n1);
      CALLGRIND_DUMP_STATS_AT(label);
      metrics[m].fn(n2);
      snprintf(label, sizeof label, "%s/%ld", metrics[m].name, n2);
      CALLGRIND_DUMP_STATS_AT(label);
    }
    total = 10 + n1 + n2;
  } else {
    for (size_t m = 0; m < NMETRICS; m++)
      metrics[m].fn(iters / 10 + 1); /* warm-up */
    total = iters / 10 + 1;
    for (long r = 0; r < reps; r++) {
      for (size_t m = 0; m < NMETRICS; m++) {
        uint64_t t0 = bench_now_ns();
        metrics[m].fn(iters);
        uint64_t t1 = bench_now_ns();
        bench_sample(metrics[m].name, (double)(t1 - t0) / (double)iters);
      }
    }
    total += iters * reps;
  }

  /* Validate and publish results. */
  if (tofrom_count != total)
    BENCH_FAIL("region_tofrom: x=%lld, expected %lld", tofrom_count, total);
  if (is_present_sum != total)
    BENCH_FAIL("is_present: %lld of %lld present", is_present_sum, total);
  if (is_present_miss_sum != 0)
    BENCH_FAIL("is_present_miss: %lld hits on unmapped data", is_present_miss_sum);
  double back = 0;
  if (omp_target_memcpy(&back, dbuf, 8, 0, 0, host, dev))
    BENCH_FAIL("omp_target_memcpy back failed");
  if (back != v) BENCH_FAIL("memcpy8: read back %g, expected %g", back, v);
#pragma omp target exit data map(from : a0[0:NARR]) map(release : a1[0:NARR], \
                                     a2[0:NARR], a3[0:NARR], a4[0:NARR],      \
                                     a5[0:NARR], a6[0:NARR], a7[0:NARR])
#pragma omp target exit data map(release : v, eb[0:8])
  if (a0[0] != (double)present8_count)
    BENCH_FAIL("region_present8: a0[0]=%g, expected %lld", a0[0],
               present8_count);
  omp_target_free(dbuf, dev);
  if (omp_target_is_present(&v, dev)) BENCH_FAIL("v still present at end");

  bench_check("lat_ops_per_metric", total);
  bench_check("lat_tofrom", tofrom_count);
  bench_check("lat_present8", (long long)a0[0]);
  bench_check("lat_is_present", is_present_sum);
  return 0;
}
