// target data region: data stays on the device across regions; update to/from.
#include <omp.h>
#include <stdio.h>

#define N 8

int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; i++)
    a[i] = i, b[i] = 0;
  int dev = omp_get_default_device();
#pragma omp target data map(to : a) map(from : b)
  {
    printf("inside data: present(a)=%d present(b)=%d\n", omp_target_is_present(a, dev),
           omp_target_is_present(b, dev));
    // host change is not seen by the device: a is already present, no copy
    a[0] = 100;
#pragma omp target map(to : a) map(tofrom : b)
    {
      for (int i = 0; i < N; i++)
        b[i] = a[i] + 1;
    }
    printf("b is not copied back inside the data region: b[0]=%d\n", b[0]);
#pragma omp target update from(b)
    printf("after update from: b[0]=%d b[7]=%d\n", b[0], b[7]);
    // now push the new host value of a
#pragma omp target update to(a)
#pragma omp target map(tofrom : b)
    {
      b[0] = a[0] * 2;
    }
    // the device's a is modified; the host a is not
#pragma omp target
    { a[1] = -1; }
    printf("host a[1]=%d (device wrote -1)\n", a[1]);
#pragma omp target update from(a)
    printf("after update from(a): a[1]=%d\n", a[1]);
  }
  printf("after data: b[0]=%d present(a)=%d present(b)=%d\n", b[0], omp_target_is_present(a, dev),
         omp_target_is_present(b, dev));

  // nested target data regions: inner map does not copy again
  int c = 1;
#pragma omp target data map(tofrom : c)
  {
#pragma omp target data map(tofrom : c)
    {
#pragma omp target map(tofrom : c) // present: no copies
      { c += 10; }
    }
    printf("inner data end does not copy back: c=%d\n", c);
  }
  printf("outer data end copies back: c=%d\n", c);
  return 0;
}
