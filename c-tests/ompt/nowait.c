// Two nowait regions and a nowait enter data, joined by taskwait.
#include <stdio.h>
int main(void) {
  int a[32], b[32];
  for (int i = 0; i < 32; i++) a[i] = b[i] = i;
#pragma omp parallel num_threads(1)
#pragma omp single
  {
#pragma omp target enter data map(to : a[0:32]) nowait
#pragma omp taskwait
#pragma omp target map(tofrom : a[0:32]) nowait
    for (int i = 0; i < 32; i++) a[i] += 1;
#pragma omp taskwait
#pragma omp target map(tofrom : b[0:32]) nowait
    for (int i = 0; i < 32; i++) b[i] += 2;
#pragma omp taskwait
#pragma omp target exit data map(from : a[0:32]) nowait
#pragma omp taskwait
  }
  printf("a[31]=%d b[31]=%d\n", a[31], b[31]);
  return 0;
}
