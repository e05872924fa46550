// target update to(present: x) of unmapped data aborts with the 'motion modifier' message.
#include <stdio.h>

int main(void) {
  int x[4] = {1, 2, 3, 4};
  printf("before\n");
  fflush(stdout);
#pragma omp target update to(present : x)
  printf("not reached\n");
  return 0;
}
