// A target region on device(7) with 4 devices is fatal.
#include <stdio.h>

int main(void) {
  int x = 0;
  printf("before\n");
  fflush(stdout);
#pragma omp target device(7) map(tofrom : x)
  { x = 1; }
  printf("not reached %d\n", x);
  return 0;
}
