// OMP_TARGET_OFFLOAD=disabled (.env): device(7) regions just run on the host,
// omp_target_alloc(8, 0) is a host allocation (0 is the initial device when
// there are no devices), but omp_target_alloc(8, 99) is still fatal.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int on_host = -1;
#pragma omp target device(7) map(from : on_host)
  { on_host = omp_is_initial_device(); }
  printf("device(7) under disabled: on_host=%d\n", on_host);
  void *p = omp_target_alloc(8, 0);
  printf("omp_target_alloc(8, 0) non-null=%d\n", p != NULL);
  omp_target_free(p, 0);
  fflush(stdout);
  void *q = omp_target_alloc(8, 99);
  printf("not reached %d\n", q != NULL);
  return 0;
}
