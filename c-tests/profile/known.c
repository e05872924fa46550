// Known program for the LIBOMPTARGET_PROFILE test (c-tests/profile.sh):
// one target data region with two kernels inside, one update.
#include <stdio.h>
int main(void) {
  int a[1000], b[10];
  for (int i = 0; i < 1000; i++) a[i] = i;
  for (int i = 0; i < 10; i++) b[i] = 1;
#pragma omp target data map(tofrom : a[0:1000]) map(to : b[0:10])
  {
#pragma omp target teams distribute parallel for num_teams(2)
    for (int i = 0; i < 1000; i++) a[i] += b[i % 10];
#pragma omp target
    for (int i = 0; i < 1000; i++) a[i] *= 2;
#pragma omp target update from(a[0:1000])
  }
  printf("a[999]=%d\n", a[999]);
  return 0;
}
