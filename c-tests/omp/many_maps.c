// A region with many map clauses of mixed kinds.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a0[4] = {0}, a1[4] = {1}, a2[4] = {2}, a3[4] = {3}, a4[4] = {4}, a5[4] = {5}, a6[4] = {6}, a7[4] = {7};
  double d0 = 0.5, d1 = 1.5, d2 = 2.5, d3 = 3.5;
  long l0 = 10, l1 = 11, l2 = 12, l3 = 13;
  char c[16] = "hello";
  int on_host = -1;
#pragma omp target map(tofrom : a0, a1, a2, a3) map(to : a4, a5) map(from : a6) map(alloc : a7) \
    map(tofrom : d0, d1) firstprivate(d2, d3) map(tofrom : l0, l1, l2, l3) map(tofrom : c, on_host)
  {
    a0[0] = a4[0] + a5[0];
    a1[1] = 1;
    a2[2] = 2;
    a3[3] = 3;
    a6[0] = 60;
    a7[0] = 70;
    d0 = d2 + d3;
    d1 = d1 * 2;
    l0 += l1 + l2 + l3;
    c[0] = 'j';
    on_host = omp_is_initial_device();
  }
  printf("a0[0]=%d a1[1]=%d a2[2]=%d a3[3]=%d a6[0]=%d a7[0]=%d d0=%.1f d1=%.1f l0=%ld c=%s on_host=%d\n", a0[0],
         a1[1], a2[2], a3[3], a6[0], a7[0], d0, d1, l0, c, on_host);
  return 0;
}
