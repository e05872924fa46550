// Built as dl_kernels.so with -fopenmp -fopenmp-targets=... -shared -fPIC.
#include <omp.h>

static int dev_counter = 0;
#pragma omp declare target to(dev_counter)

int lib_scale(int *a, int n, int f) {
  int on_host = -1;
#pragma omp target map(tofrom : a[0:n]) map(from : on_host)
  {
    for (int i = 0; i < n; i++)
      a[i] *= f;
    on_host = omp_is_initial_device();
  }
  return on_host == 0;
}

int lib_device_counter(void) {
  int v = 0;
#pragma omp target map(from : v)
  {
    dev_counter += 1;
    v = dev_counter;
  }
  return v;
}
