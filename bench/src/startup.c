/* Start-up: a trivial offload program (one region, one tofrom scalar).
 * Built twice by run.sh: with offloading (startup) and with plain -fopenmp
 * (startup_plain, no libomptarget at all: the region runs as host code). */
#include <stdio.h>

int main(void) {
  int x = 41;
#pragma omp target map(tofrom : x)
  { x++; }
  if (x != 42) {
    fprintf(stderr, "startup: x = %d, want 42\n", x);
    return 1;
  }
  printf("%d\n", x);
  return 0;
}
