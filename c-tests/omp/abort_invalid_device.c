// omp_target_alloc on a device number that does not exist is fatal.
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("devices=%d\n", omp_get_num_devices());
  fflush(stdout);
  void *p = omp_target_alloc(8, 99);
  printf("not reached %d\n", p != NULL);
  return 0;
}
