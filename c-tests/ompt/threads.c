// Several host threads, each running its own target region: the callbacks
// of one thread stay in order (the runner compares them per thread).
#include <omp.h>
#include <stdio.h>
int main(void) {
  int out[4] = {0};
#pragma omp parallel num_threads(4)
  {
    int t = omp_get_thread_num();
    int a[16];
    for (int i = 0; i < 16; i++) a[i] = t;
#pragma omp target map(tofrom : a[0:16])
    for (int i = 0; i < 16; i++) a[i] += 1;
    out[t] = a[15];
  }
  printf("%d %d %d %d\n", out[0], out[1], out[2], out[3]);
  return 0;
}
