// Teardown with work in flight, case "nowait": target
// nowait regions still outstanding when main returns; libomp's exit waits for
// its hidden-helper threads, which launch them then. The runtime must keep
// the program's kernels and globals usable until then: exit status 0 (22.1
// and ours before teardown waited for it: "does not have a matching target pointer", 134).
// Case "exit" (argv[1]): exit(0) from inside a parallel region while the
// other threads offload.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
static double buf[8][N];
static int glob = 0;
#pragma omp declare target to(glob)

static void work(int k) {
  double *b = buf[k];
#pragma omp target map(tofrom : b[0 : N])
  for (int r = 0; r < 200; r++)
    for (int i = 0; i < N; i++) b[i] = b[i] * 0.5 + r + glob;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "exit")) {
#pragma omp parallel num_threads(4)
    {
      int t = omp_get_thread_num();
      for (int k = 0; k < 200; k++) {
        if (t == 0 && k == 20) {
          printf("exit from parallel\n");
          fflush(stdout);
          exit(0);
        }
        work(t);
      }
    }
    return 1;
  }
  for (int k = 0; k < 8; k++) {
    double *b = buf[k];
#pragma omp target nowait map(tofrom : b[0 : N]) firstprivate(k)
    for (int r = 0; r < 2000; r++)
      for (int i = 0; i < N; i++) b[i] = b[i] * 0.5 + r + k + glob;
  }
  printf("main returns with 8 target nowait regions queued\n");
  return 0;
}
