// OMP_TARGET_OFFLOAD=disabled (set in offload_disabled.env): everything runs on the host.
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("num_devices=%d initial_device=%d\n", omp_get_num_devices(), omp_get_initial_device());
  int a[4] = {1, 2, 3, 4};
  int on_host = -1;
#pragma omp target map(to : a) map(from : on_host)
  {
    a[0] = 100; // host fallback: writes the host array directly
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d a[0]=%d\n", on_host, a[0]);
  int x = 1;
#pragma omp target enter data map(to : x)
  printf("is_present after enter data=%d\n", omp_target_is_present(&x, omp_get_default_device()));
#pragma omp target exit data map(delete : x)
  long s = 0;
#pragma omp target teams distribute parallel for reduction(+ : s)
  for (int i = 0; i < 100; i++)
    s += i;
  printf("reduction=%ld\n", s);
  return 0;
}
