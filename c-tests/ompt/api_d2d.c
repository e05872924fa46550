// omp_target_memcpy between two devices and omp_target_memset.
#include <omp.h>
#include <stdio.h>
int main(void) {
  int h[16], back[16];
  for (int i = 0; i < 16; i++) h[i] = i;
  int host = omp_get_initial_device();
  int *d = omp_target_alloc(sizeof h, 0);
  int *d1 = omp_target_alloc(sizeof h, 1);
  omp_target_memcpy(d, h, sizeof h, 0, 0, 0, host);
  omp_target_memcpy(d1, d, sizeof h, 0, 0, 1, 0);
  omp_target_memset(d, 0, sizeof h, 0);
  omp_target_memcpy(back, d1, sizeof h, 0, 0, host, 1);
  omp_target_free(d1, 1);
  omp_target_free(d, 0);
  printf("back[15]=%d\n", back[15]);
  return 0;
}
