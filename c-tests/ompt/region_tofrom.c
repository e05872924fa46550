// One target region with map(tofrom: a[0:100]): the sequence.
#include <stdio.h>
int main(void) {
  int a[100];
  for (int i = 0; i < 100; i++) a[i] = i;
#pragma omp target map(tofrom : a[0:100])
  for (int i = 0; i < 100; i++) a[i] += 1;
  printf("a[99]=%d\n", a[99]);
  return 0;
}
