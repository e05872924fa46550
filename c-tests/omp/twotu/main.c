// Two translation units, each with target regions; a declare-target function
// defined in the other TU is called from a region here.
#include <omp.h>
#include <stdio.h>

int other_tu_kernel(int *v, int n); // in other.c
#pragma omp declare target
int triple(int x); // defined in other.c
#pragma omp end declare target

int main(void) {
  int v[16];
  for (int i = 0; i < 16; i++)
    v[i] = i;
  int on_host = -1;
#pragma omp target map(tofrom : v, on_host)
  {
    for (int i = 0; i < 16; i++)
      v[i] = triple(v[i]);
    on_host = omp_is_initial_device();
  }
  printf("main.c region: v[5]=%d v[15]=%d on_host=%d\n", v[5], v[15], on_host);
  int r = other_tu_kernel(v, 16);
  printf("other.c region: returned %d v[5]=%d\n", r, v[5]);
  return 0;
}
