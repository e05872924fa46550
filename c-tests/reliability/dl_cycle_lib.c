// The library of dlopen_cycles.c: a target region and a declare-target global.
#include <omp.h>

static int dev_counter = 0;
#pragma omp declare target to(dev_counter)

int lib_run(int *a, int n) {
  int on_host = -1, v = 0;
#pragma omp target map(tofrom : a[0 : n]) map(from : on_host, v)
  {
    for (int i = 0; i < n; i++) a[i] += 1;
    dev_counter += 1;
    v = dev_counter;
    on_host = omp_is_initial_device();
  }
  return on_host == 0 ? v : -1;
}
