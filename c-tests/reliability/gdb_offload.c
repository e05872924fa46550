// Debugger check: an ordinary offloading program for
// `gdb -batch -ex run -ex bt`; gdb reads every loaded object's path from
// ld.so's link map, including the device images the host plugin loaded.
// `gdb_kernel_body` is a named device function to break in.
#include <omp.h>
#include <stdio.h>

#pragma omp declare target
__attribute__((noinline)) void gdb_kernel_body(int *a, int n) {
  for (int i = 0; i < n; i++) a[i] = i;
}
#pragma omp end declare target

int main(void) {
  int a[64] = {0}, on_device = 1;
#pragma omp target map(tofrom : a, on_device)
  {
    gdb_kernel_body(a, 64);
    on_device = !omp_is_initial_device();
  }
  int sum = 0;
  for (int i = 0; i < 64; i++) sum += a[i] == i;
  printf("gdb_offload: %d on device %d\n", sum, on_device);
  return sum == 64 && on_device ? 0 : 1;
}
