// target exit data map(present, release: x) of unmapped data aborts.
#include <stdio.h>

int main(void) {
  int x[10] = {0};
  printf("before\n");
  fflush(stdout);
#pragma omp target exit data map(present, release : x)
  printf("not reached\n");
  return 0;
}
