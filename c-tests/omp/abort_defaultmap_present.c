// defaultmap(present: aggregate) (abi-reference 6.5, 4.7): an array used in the
// region without being mapped aborts with the 'present' map-type message.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[6] = {0};
  int b[2] = {0};
#pragma omp target enter data map(to : b)
#pragma omp target defaultmap(present : aggregate)
  { b[0] = 1; } // mapped: fine
  printf("mapped array ok\n");
  fflush(stdout);
#pragma omp target defaultmap(present : aggregate)
  { a[0] = 1; }
  printf("not reached %d\n", a[0]);
  return 0;
}
