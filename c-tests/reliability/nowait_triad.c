// A HeCBench-style stream triad (triad-omp): every pass cuts the arrays
// into blocks and queues, per block, a `target update to` of the inputs, a
// `target teams distribute parallel for` kernel and a `target update from`
// of the result, all `nowait` and ordered by `depend` clauses, then waits
// for them with `taskwait`. Checks the result after the last pass.
//
// Each `nowait` construct is a target task that libomp gives to its
// hidden-helper threads. libomp 19 (the libomp.so.5 that clang-22 programs
// load here) aborts now and then with "Assertion failure at
// kmp_tasking.cpp(4368): task_team != NULL": a target task allocated while
// the hidden-helper thread it would be given to runs a kernel with a teams
// or parallel construct (serialized inside that thread, which then has no
// task team) gets no task team. See docs/reliability-libomp.md; the rate
// under our runtime and LLVM 22.1's is measured by libomp-rate.sh.
//
// Usage: nowait_triad [PASSES] (default 50).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 16, BLOCKS = 8, BS = N / BLOCKS };

int main(int argc, char **argv) {
  int passes = argc > 1 ? atoi(argv[1]) : 50;
  float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)), *c = malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) {
    a[i] = (float)(i % 1000);
    b[i] = (float)(i % 333);
    c[i] = -1.0f;
  }
  const float s = 1.75f;
#pragma omp target data map(alloc : a[0:N], b[0:N], c[0:N])
  {
    for (int p = 0; p < passes; p++) {
      for (int k = 0; k < BLOCKS; k++) {
        int off = k * BS;
#pragma omp target update to(a[off:BS], b[off:BS]) nowait depend(out : a[off], b[off])
#pragma omp target teams distribute parallel for nowait depend(in : a[off], b[off]) depend(out : c[off])
        for (int i = off; i < off + BS; i++)
          c[i] = a[i] + s * b[i];
#pragma omp target update from(c[off:BS]) nowait depend(inout : c[off])
      }
#pragma omp taskwait
    }
  }
  long wrong = 0;
  for (int i = 0; i < N; i++)
    wrong += c[i] != a[i] + s * b[i];
  printf("nowait_triad: %d passes, %ld wrong\n", passes, wrong);
  free(a);
  free(b);
  free(c);
  return wrong != 0;
}
