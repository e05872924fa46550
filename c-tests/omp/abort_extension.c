// Explicit extension: enter data a[0:10], then target map(tofrom: a[0:20]) aborts.
#include <stdio.h>

int main(void) {
  int a[20] = {0};
#pragma omp target enter data map(to : a[0:10])
  printf("entered\n");
  fflush(stdout);
#pragma omp target map(tofrom : a[0:20])
  { a[15] = 1; }
  printf("not reached %d\n", a[15]);
  return 0;
}
