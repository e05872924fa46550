// map(present, to: p[0:0]) of unmapped memory (abi-reference 6.5 step 5, 6.6):
// zero-length sections of unmapped memory are allowed without 'present'
// (first construct), but with 'present' the lookup failure is an error even
// for 0 bytes: fatal (exit 134).
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int *p = malloc(4 * sizeof(int));
#pragma omp target enter data map(to : p[0:0])
  printf("zero-length without present ok\n");
  fflush(stdout);
#pragma omp target enter data map(present, to : p[0:0])
  printf("not reached\n");
  free(p);
  return 0;
}
