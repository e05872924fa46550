// omp_invalid_device (-2 in LLVM 22.1's omp.h) in a device memory routine is
// runtime error termination (OpenMP 5.2 §18.8); LLVM 22.1 and ours abort with
// "device number '-2' out of range". -1 (omp_initial_device)
// names the host in ours (initial_device_api.c), -2 must stay fatal.
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("devices=%d\n", omp_get_num_devices());
  fflush(stdout);
  int x = 0;
  printf("is_present=%d\n", omp_target_is_present(&x, omp_invalid_device));
  return 0;
}
