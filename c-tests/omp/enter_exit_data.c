// enter/exit data with reference counting, target update, omp_target_is_present.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 32

int main(void) {
  int dev = omp_get_default_device();
  int *p = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    p[i] = i;
  printf("before: present=%d\n", omp_target_is_present(p, dev));
#pragma omp target enter data map(to : p[0:N])
  printf("after enter #1: present=%d\n", omp_target_is_present(p, dev));
#pragma omp target enter data map(to : p[0:N]) // refcount 2, no copy
  p[0] = 500;                                   // host-only change
  int seen = -1;
#pragma omp target map(from : seen)
  { seen = p[0]; }
  printf("device sees stale p[0]=%d\n", seen);
#pragma omp target update to(p[0:1])
#pragma omp target map(from : seen)
  { seen = p[0]; }
  printf("after update to: device p[0]=%d\n", seen);
#pragma omp target
  {
    for (int i = 0; i < N; i++)
      p[i] *= 2;
  }
  printf("host p[3]=%d before update from\n", p[3]);
#pragma omp target update from(p[2:4])
  printf("after update from p[2:4]: p[1]=%d p[2]=%d p[5]=%d p[6]=%d\n", p[1], p[2], p[5], p[6]);
#pragma omp target exit data map(from : p[0:N]) // refcount 2 -> 1: no copy
  printf("after exit #1: present=%d p[10]=%d\n", omp_target_is_present(p, dev), p[10]);
#pragma omp target exit data map(from : p[0:N]) // 1 -> 0: copy back, remove
  printf("after exit #2: present=%d p[10]=%d\n", omp_target_is_present(p, dev), p[10]);

  // alloc map type: no copy in, and scalars
  int x = 7;
#pragma omp target enter data map(alloc : x)
#pragma omp target map(tofrom : x) // present: no copy in either direction
  { x = 99; }
  printf("alloc'd scalar: host x=%d\n", x);
#pragma omp target exit data map(from : x)
  printf("after exit from: x=%d present=%d\n", x, omp_target_is_present(&x, dev));

  // enter data on a sub-range, is_present on elements inside/outside
#pragma omp target enter data map(to : p[8:8])
  printf("subrange: p+8=%d p+15=%d p+16=%d p+7=%d\n", omp_target_is_present(p + 8, dev),
         omp_target_is_present(p + 15, dev), omp_target_is_present(p + 16, dev), omp_target_is_present(p + 7, dev));
#pragma omp target exit data map(release : p[8:8])
  printf("released: p+8=%d\n", omp_target_is_present(p + 8, dev));
  free(p);
  return 0;
}
