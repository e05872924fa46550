// Built as dl_globals.so (offloading, -shared -fPIC), dlopen'ed by main.c.
// Its own declare target globals, exported setters/getters that move them
// with target update, and a region that uses them.
#include <omp.h>

int lib_counter = 1;
double lib_table[8] = {0, 1, 2, 3, 4, 5, 6, 7};
#pragma omp declare target to(lib_counter, lib_table)

// host value -> device (target update to)
void lib_set_counter(int v, int dev) {
  lib_counter = v;
#pragma omp target update to(lib_counter) device(dev)
}

// device value -> host (target update from), returned
int lib_fetch_counter(int dev) {
#pragma omp target update from(lib_counter) device(dev)
  return lib_counter;
}

// host-side value, without any update
int lib_host_counter(void) { return lib_counter; }

// copies table[i0:n] from the caller's array into the host table and pushes it
void lib_load_table(const double *src, int i0, int n, int dev) {
  for (int i = 0; i < n; i++)
    lib_table[i0 + i] = src[i];
#pragma omp target update to(lib_table[i0:n]) device(dev)
}

// device: counter += sum(table); table[i] *= 2; returns on_host flag
int lib_kernel(int dev) {
  int on_host = -1;
#pragma omp target device(dev) map(from : on_host)
  {
    double s = 0;
    for (int i = 0; i < 8; i++) {
      s += lib_table[i];
      lib_table[i] *= 2;
    }
    lib_counter += (int)s;
    on_host = omp_is_initial_device();
  }
  return on_host;
}

void lib_fetch_table(double *dst, int dev) {
#pragma omp target update from(lib_table) device(dev)
  for (int i = 0; i < 8; i++)
    dst[i] = lib_table[i];
}

// address of the library's global, for presence checks from the program
void *lib_counter_addr(void) { return &lib_counter; }
