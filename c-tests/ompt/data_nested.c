// target data with two nested regions, then enter/exit data and update.
#include <stdio.h>
int main(void) {
  int a[64], b[8];
  for (int i = 0; i < 64; i++) a[i] = i;
  for (int i = 0; i < 8; i++) b[i] = 0;
#pragma omp target data map(tofrom : a[0:64])
  {
#pragma omp target map(to : b[0:8])
    for (int i = 0; i < 64; i++) a[i] += b[i % 8] + 1;
#pragma omp target
    for (int i = 0; i < 64; i++) a[i] *= 2;
  }
#pragma omp target enter data map(to : b[0:8])
  for (int i = 0; i < 8; i++) b[i] = 10 + i;
#pragma omp target update to(b[0:8])
#pragma omp target
  for (int i = 0; i < 8; i++) b[i] += 1;
#pragma omp target update from(b[2:4])
#pragma omp target exit data map(release : b[0:8])
  printf("a[63]=%d b[2]=%d b[7]=%d\n", a[63], b[2], b[7]);
  return 0;
}
