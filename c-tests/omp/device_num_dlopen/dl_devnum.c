// Built as dl_devnum.so (-shared -fPIC, with offloading); loaded by main.c.
#include <omp.h>

int lib_device_num(int d) {
  int r = -99;
  #pragma omp target device(d) map(from: r)
  r = omp_get_device_num() + 100;
  return r;
}
