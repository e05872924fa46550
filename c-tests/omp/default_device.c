// OMP_DEFAULT_DEVICE=2 (default_device.env): regions without device() go to device 2.
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("default device=%d\n", omp_get_default_device());
  int x[4] = {1, 2, 3, 4};
#pragma omp target enter data map(to : x)
  printf("present on 0=%d 1=%d 2=%d 3=%d\n", omp_target_is_present(x, 0), omp_target_is_present(x, 1),
         omp_target_is_present(x, 2), omp_target_is_present(x, 3));
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    x[0] = 100;
    on_host = omp_is_initial_device();
  }
#pragma omp target exit data map(from : x)
  printf("x[0]=%d on_host=%d\n", x[0], on_host);
  omp_set_default_device(1);
#pragma omp target enter data map(to : x)
  printf("after omp_set_default_device(1): present on 1=%d 2=%d\n", omp_target_is_present(x, 1),
         omp_target_is_present(x, 2));
#pragma omp target exit data map(release : x)
  return 0;
}
