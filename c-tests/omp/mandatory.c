// OMP_TARGET_OFFLOAD=mandatory (mandatory.env) with devices present: normal operation.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[3] = {1, 2, 3};
  int on_host = -1;
#pragma omp target map(tofrom : a, on_host)
  {
    a[2] = 30;
    on_host = omp_is_initial_device();
  }
  printf("a[2]=%d on_host=%d num_devices=%d\n", a[2], on_host, omp_get_num_devices());
  return 0;
}
