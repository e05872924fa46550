// OMP_TARGET_OFFLOAD=mandatory and device(initial): runs on the host, not an error.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int on_host = -1;
  int dev = omp_get_initial_device();
#pragma omp target device(dev) map(from : on_host)
  { on_host = omp_is_initial_device(); }
  printf("on_host=%d\n", on_host);
  return 0;
}
