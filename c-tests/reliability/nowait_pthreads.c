// 8 plain pthreads (not OpenMP threads: each becomes a libomp root of its
// own) each queue `target teams distribute parallel for nowait` regions on
// their own array, ordered by a `depend` clause, and wait for them with
// `taskwait`, round after round; each thread returns as soon as its rounds
// are done, while the others still offload. Checks every array.
//
// libomp 19 (the libomp.so.5 that clang-22 programs load here) aborts now
// and then with "Assertion failure at kmp_tasking.cpp(4368): task_team !=
// NULL" when a root thread ends while others still create target tasks (the
// same program with all threads waiting for each other before they return
// never aborts). See docs/reliability-libomp.md; libomp-rate.sh measures the
// rate under our runtime and LLVM 22.1's.
//
// Usage: nowait_pthreads [ROUNDS] (default 100).
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 8, N = 256, PER_ROUND = 4 };

static int rounds = 100;
static int wrong_threads;

static void *worker(void *unused) {
  (void)unused;
  int a[N];
  for (int i = 0; i < N; i++)
    a[i] = i;
  for (int r = 0; r < rounds; r++) {
    for (int k = 0; k < PER_ROUND; k++) {
#pragma omp target teams distribute parallel for map(tofrom : a[0:N]) nowait depend(inout : a[0])
      for (int i = 0; i < N; i++)
        a[i] += 1;
    }
#pragma omp taskwait
  }
  for (int i = 0; i < N; i++) {
    if (a[i] != i + PER_ROUND * rounds) {
      __atomic_add_fetch(&wrong_threads, 1, __ATOMIC_RELAXED);
      break;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1)
    rounds = atoi(argv[1]);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  printf("nowait_pthreads: %d threads x %d rounds, %d threads with wrong results\n", THREADS, rounds, wrong_threads);
  return wrong_threads != 0;
}
