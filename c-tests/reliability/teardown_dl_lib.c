// The library of teardown_dl.c: target nowait regions of a dlopen'd object
// (its kernels, its buffers, its declare-target global) left outstanding,
// and a last nowait region that depends on all of them and checks their
// results on the device, printing the verdict itself: it runs after main
// has returned, while libomp's destructor waits for its hidden helpers.
#include <stdio.h>

#define N 4096
#define K 8
static double tdl_buf[K][N];
static char tdl_done[K];
int tdl_glob = 3;
#pragma omp declare target to(tdl_glob)

// Queues the K regions and the checking region, and returns at once.
void tdl_launch(void) {
  for (int k = 0; k < K; k++) {
    double *b = tdl_buf[k];
    for (int i = 0; i < N; i++) b[i] = i;
#pragma omp target nowait map(tofrom : b[0 : N]) firstprivate(k) depend(out : tdl_done[k])
    for (int r = 0; r < 2000; r++)
      for (int i = 0; i < N; i++) b[i] = b[i] * 0.5 + r + k + tdl_glob;
  }
  double *all = &tdl_buf[0][0];
#pragma omp target nowait map(to : all[0 : K * N]) depend(in : tdl_done[0], tdl_done[1], tdl_done[2], tdl_done[3], tdl_done[4], tdl_done[5], tdl_done[6], tdl_done[7])
  {
    int wrong = 0;
    for (int k = 0; k < K; k++)
      for (int i = 0; i < N; i += 97) {
        double v = i;
        for (int r = 0; r < 2000; r++) v = v * 0.5 + r + k + 3;
        if (all[k * N + i] != v) wrong++;
      }
    if (wrong)
      printf("teardown_dl: %d wrong values\n", wrong);
    else
      printf("teardown_dl: %d regions complete, results ok\n", K);
    fflush(stdout);
  }
}
