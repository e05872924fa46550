// map(present, tofrom: a[0:10]) of unmapped data: LLVM aborts (exit 134).
#include <stdio.h>

int main(void) {
  int a[10] = {0};
  printf("before\n");
  fflush(stdout);
#pragma omp target map(present, tofrom : a[0:10])
  { a[0] = 1; }
  printf("not reached %d\n", a[0]);
  return 0;
}
