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
 *         floor   libomp alone: the target tasks of `nomap` with an empty
 *                 body and no offload runtime call (see floor_entry)
 *         floordep  the same with the dependence of `dep`
 *   ctx   1t      issued from the initial thread, outside any parallel
 *         ps      issued from a parallel region's single construct (the
 *                 other threads of the team wait at single's barrier)
 *   h     libomp's hidden helper threads: 0 when LIBOMP_USE_HIDDEN_HELPER_TASK
 *         is 0 (target tasks then run on the team's threads, or inline
 *         outside a parallel region), else 1 (libomp's default)
 */
#include "bench.h"
#include <omp.h>

enum kind { K_NOMAP, K_TOFROM, K_DEP, K_FLOOR, K_FLOORDEP, K_COUNT };
static const char *kind_name[K_COUNT] = {"nomap", "tofrom", "dep", "floor", "floordep"};

static int dep_var;

/* The floor: the target tasks clang emits for `target nowait`, made through
 * libomp's entry points exactly as clang makes them (flags 1 = tied, a
 * 40-byte task, no shareds, device -1), with a body that does nothing, so no
 * offload runtime call at all: libomp's own cost per region, which every
 * offload runtime pays on top of its own. */
typedef struct {
  int reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} bench_ident_t;
typedef struct {
  intptr_t base_addr;
  size_t len;
  unsigned char flags; /* 1 = in, 2 = out */
} bench_depend_t;
typedef int (*bench_task_entry_t)(int, void *);
extern void *__kmpc_omp_target_task_alloc(bench_ident_t *, int, int, size_t, size_t, bench_task_entry_t, int64_t);
extern int __kmpc_omp_task(bench_ident_t *, int, void *);
extern int __kmpc_omp_task_with_deps(bench_ident_t *, int, void *, int, bench_depend_t *, int, bench_depend_t *);
extern int __kmpc_global_thread_num(bench_ident_t *);
static bench_ident_t floor_loc = {0, 2, 0, 22, ";nowait.c;issue;0;0;;"};
static int floor_entry(int gtid, void *task) {
  (void)gtid;
  (void)task;
  return 0;
}

/* Issues n regions of one kind (out of line: bench/nowait-cg.sh reads its
 * inclusive cost as the issuing thread's share). */
__attribute__((noinline)) static void issue(enum kind k, int *a, long n) {
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
  case K_DEP:
    for (long i = 0; i < n; i++) {
#pragma omp target nowait depend(inout : dep_var)
      {
      }
    }
    break;
  default: {
    int gtid = __kmpc_global_thread_num(&floor_loc);
    bench_depend_t dep = {(intptr_t)&dep_var, sizeof dep_var, 3};
    for (long i = 0; i < n; i++) {
      void *t = __kmpc_omp_target_task_alloc(&floor_loc, gtid, 1, 40, 0, floor_entry, -1);
      if (k == K_FLOOR)
        __kmpc_omp_task(&floor_loc, gtid, t);
      else
        __kmpc_omp_task_with_deps(&floor_loc, gtid, t, 1, &dep, 0, NULL);
    }
    break;
  }
  }
}

/* issue() and the taskwait that completes the regions. */
static void issue_wait(enum kind k, int *a, long n) {
  issue(k, a, n);
#pragma omp taskwait
}

/* Runs issue_wait() from one thread (ps = 0) or from parallel + single (ps = 1);
 * returns the elapsed ns. */
static uint64_t timed(enum kind k, int ps, int *a, long n) {
  uint64_t t0 = 0, t1 = 0;
  if (!ps) {
    t0 = bench_now_ns();
    issue_wait(k, a, n);
    t1 = bench_now_ns();
  } else {
#pragma omp parallel
#pragma omp single
    {
      t0 = bench_now_ns();
      issue_wait(k, a, n);
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
