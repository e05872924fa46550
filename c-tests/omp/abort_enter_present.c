// target enter data map(present, to: x) of unmapped data (abi-reference 6.5
// step 5): the 'present' map-type message, then a fatal error (exit 134). The
// data-only construct has a shorter message tail than a target region.
#include <stdio.h>

int main(void) {
  int ok[3] = {0};
  int x[5] = {0};
#pragma omp target enter data map(to : ok)
#pragma omp target enter data map(present, to : ok) // mapped: fine
  printf("mapped ok\n");
  fflush(stdout);
#pragma omp target enter data map(present, to : x)
  printf("not reached %d\n", x[0]);
  return 0;
}
