/* nowait: throughput of deferred target tasks.
 *
 *   nowait <n> <reps>          timed mode
 *   nowait cg <kind> <ctx> <n> callgrind mode: a warm-up, then n regions of
 *                              one kind and context (bench/nowait-cg.sh runs
 *                              it for two n and takes the difference per
 *                              thread: libomp's helper threads are separate
 *                              threads, so dumps from the main thread would
 *                              miss their cost)
 *
 * Each sample issues <n> target nowait regions followed by one taskwait and
 * reports ns per region, metric nowait_<kind>_<ctx>_hh<h>:
 *   kind  nomap   empty region, no maps
 *         tofrom  map(tofrom: a[i]) of a distinct element each, body
 *                 increments it
 *         dep     empty region, depend(inout: d) on one variable (a chain:
 *                 each region waits for the one before)
 *   ctx   1t      issued from the initial thread, outside any parallel
 *         ps      issued from a parallel region's single construct (the
 *                 other threads of the team wait at single's barrier)
 *   h     libomp's hidden helper threads: 0 when LIBOMP_USE_HIDDEN_HELPER_TASK
 *         is 0 (target tasks then run on the team's threads, or inline
 *         outside a parallel region), else 1 (libomp's default)
 */
#include "bench.h"
#include <omp.h>

enum kind { K_NOMAP, K_TOFROM, K_DEP, K_COUNT };
static const char *kind_name[K_COUNT] = {"nomap", "tofrom", "dep"};

static int dep_var;

/* n regions of one kind, then a taskwait. */
static void issue(enum kind k, int *a, long n) {
  switch (k) {
  case K_NOMAP:
    for (long i = 0; i < n; i++) {
#pragma omp target nowait
      {
      }
    }
    break;
  case K_TOFROM:
    for (long i = 0; i < n; i++) {
#pragma omp target nowait map(tofrom : a[i])
      { a[i]++; }
    }
    break;
  default:
    for (long i = 0; i < n; i++) {
#pragma omp target nowait depend(inout : dep_var)
      {
      }
    }
    break;
  }
#pragma omp taskwait
}

/* Runs issue() from one thread (ps = 0) or from parallel + single (ps = 1);
 * returns the elapsed ns. */
static uint64_t timed(enum kind k, int ps, int *a, long n) {
  uint64_t t0 = 0, t1 = 0;
  if (!ps) {
    t0 = bench_now_ns();
    issue(k, a, n);
    t1 = bench_now_ns();
  } else {
#pragma omp parallel
#pragma omp single
    {
      t0 = bench_now_ns();
      issue(k, a, n);
      t1 = bench_now_ns();
    }
  }
  return t1 - t0;
}

static enum kind parse_kind(const char *s) {
  for (int k = 0; k < K_COUNT; k++)
    if (strcmp(s, kind_name[k]) == 0) return (enum kind)k;
  BENCH_FAIL("unknown kind %s", s);
}

int main(int argc, char **argv) {
  int cg = argc > 1 && strcmp(argv[1], "cg") == 0;
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");
  const char *hh_env = getenv("LIBOMP_USE_HIDDEN_HELPER_TASK");
  int hh = !(hh_env && (strcmp(hh_env, "0") == 0 || strcmp(hh_env, "false") == 0));

  if (cg) {
    if (argc < 5) BENCH_FAIL("usage: nowait cg kind 1t|ps n");
    enum kind k = parse_kind(argv[2]);
    int ps = strcmp(argv[3], "ps") == 0;
    long n = strtol(argv[4], NULL, 10);
    if (n < 1) BENCH_FAIL("cg mode needs n >= 1");
    int *a = calloc((size_t)n, sizeof(int));
    if (!a) BENCH_FAIL("out of memory");
    timed(k, ps, a, n < 50 ? n : 50); /* warm-up: threads, images, pools */
    timed(k, ps, a, n);
    long long sum = 0;
    for (long i = 0; i < n; i++) sum += a[i];
    bench_check("nowait_cg_sum", sum);
    free(a);
    return 0;
  }

  long n = bench_arg_long(argc, argv, 1, 2000);
  long reps = bench_arg_long(argc, argv, 2, 5);
  if (n < 1 || reps < 1) BENCH_FAIL("usage: nowait n reps");
  int *a = calloc((size_t)n, sizeof(int));
  if (!a) BENCH_FAIL("out of memory");

  long rounds = 0;
  for (long r = -1; r < reps; r++) { /* r == -1: warm-up */
    for (int ps = 0; ps < 2; ps++) {
      for (int k = 0; k < K_COUNT; k++) {
        uint64_t dt = timed((enum kind)k, ps, a, n);
        if (k == K_TOFROM) rounds++;
        if (r >= 0) {
          char metric[64];
          snprintf(metric, sizeof metric, "nowait_%s_%s_hh%d", kind_name[k], ps ? "ps" : "1t", hh);
          bench_sample(metric, (double)dt / (double)n);
        }
      }
    }
  }
  long long sum = 0;
  for (long i = 0; i < n; i++) {
    if (a[i] != rounds) BENCH_FAIL("a[%ld] = %d, want %ld", i, a[i], rounds);
    sum += a[i];
  }
  if (omp_target_is_present(a, omp_get_default_device()))
    BENCH_FAIL("a still present after taskwait");
  bench_check("nowait_sum", sum);
  free(a);
  return 0;
}
