/* Concurrency: throughput of T host threads offloading on private data.
 *
 *   conc <duration_ms> <reps> <T1> [<T2> ...]
 *
 * For every rep and every thread count T (interleaved), T pthreads each run
 * for <duration_ms> one of:
 *   conc_region_<T>t     target region map(tofrom:) of a thread-private scalar
 *   conc_enterexit_<T>t  target enter data + exit data of a thread-private
 *                        8-double buffer (not otherwise mapped)
 *   conc_cpu_<T>t        a fixed chunk of arithmetic, no runtime call: the
 *                        machine's own scaling, as a reference
 * and the sample is the total throughput in operations per second.
 * Plain pthreads (no OpenMP parallel region) so that no OpenMP barrier spins
 * while threads are measured.
 */
#include "bench.h"
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>

#define MAXT 64

static atomic_int stop;
static pthread_barrier_t start_barrier;
static int kind; /* 0 = region, 1 = enter/exit, 2 = cpu only */
#define NKINDS 3
static const char *kind_name[NKINDS] = {"region", "enterexit", "cpu"};

/* About a microsecond of register-only work (the reference "operation"). */
static unsigned long cpu_chunk(unsigned long x) {
  for (int i = 0; i < 400; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

struct worker {
  pthread_t tid;
  long ops;
  int ok;
  char pad[64];
};

static void *work(void *arg) {
  struct worker *w = arg;
  long ops = 0;
  w->ok = 1;
  if (kind == 0) {
    long x = 0;
    for (int i = 0; i < 4; i++) { /* warm-up (per-thread runtime set-up) */
#pragma omp target map(tofrom : x)
      { x++; }
    }
    pthread_barrier_wait(&start_barrier);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
#pragma omp target map(tofrom : x)
      { x++; }
      ops++;
    }
    if (x != ops + 4) w->ok = 0;
  } else if (kind == 2) {
    unsigned long x = (unsigned long)(uintptr_t)w | 1;
    pthread_barrier_wait(&start_barrier);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
      x = cpu_chunk(x);
      ops++;
    }
    BENCH_USE(x);
  } else {
    double b[8] = {0};
    for (int i = 0; i < 4; i++) {
#pragma omp target enter data map(to : b[0:8])
#pragma omp target exit data map(from : b[0:8])
    }
    pthread_barrier_wait(&start_barrier);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
#pragma omp target enter data map(to : b[0:8])
#pragma omp target exit data map(from : b[0:8])
      ops++;
    }
    if (omp_target_is_present(b, omp_get_default_device())) w->ok = 0;
  }
  w->ops = ops;
  return NULL;
}

static double run(int t, long dur_ms) {
  static struct worker ws[MAXT];
  atomic_store(&stop, 0);
  if (pthread_barrier_init(&start_barrier, NULL, (unsigned)t + 1))
    BENCH_FAIL("pthread_barrier_init");
  for (int i = 0; i < t; i++) {
    ws[i].ops = 0;
    if (pthread_create(&ws[i].tid, NULL, work, &ws[i]))
      BENCH_FAIL("pthread_create");
  }
  pthread_barrier_wait(&start_barrier);
  uint64_t t0 = bench_now_ns();
  struct timespec d = {dur_ms / 1000, (dur_ms % 1000) * 1000000L};
  nanosleep(&d, NULL);
  atomic_store(&stop, 1);
  uint64_t t1 = bench_now_ns();
  long total = 0;
  for (int i = 0; i < t; i++) {
    pthread_join(ws[i].tid, NULL);
    if (!ws[i].ok) BENCH_FAIL("thread %d: wrong result (kind %d)", i, kind);
    total += ws[i].ops;
  }
  pthread_barrier_destroy(&start_barrier);
  if (total < 1) BENCH_FAIL("no operation completed with %d threads", t);
  return (double)total * 1e9 / (double)(t1 - t0);
}

int main(int argc, char **argv) {
  long dur = bench_arg_long(argc, argv, 1, 200);
  long reps = bench_arg_long(argc, argv, 2, 3);
  if (argc < 4 || dur < 1 || reps < 1) BENCH_FAIL("usage: conc ms reps T...");
  if (omp_get_num_devices() < 1) BENCH_FAIL("no offload device");
  char name[64];
  for (long r = 0; r < reps; r++) {
    for (int a = 3; a < argc; a++) {
      int t = (int)strtol(argv[a], NULL, 10);
      if (t < 1 || t > MAXT) BENCH_FAIL("bad thread count %d", t);
      for (kind = 0; kind < NKINDS; kind++) {
        double thr = run(t, dur);
        snprintf(name, sizeof name, "conc_%s_%dt", kind_name[kind], t);
        bench_sample(name, thr);
      }
    }
  }
  bench_check("conc_ok", 1);
  return 0;
}
