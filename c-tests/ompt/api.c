// The omp_target_* API: alloc, memcpy both ways, associate/disassociate, free.
#include <omp.h>
#include <stdio.h>
int main(void) {
  int h[16], back[16];
  for (int i = 0; i < 16; i++) h[i] = i;
  int host = omp_get_initial_device();
  int *d = omp_target_alloc(sizeof h, 0);
  int *d1 = omp_target_alloc(sizeof h, 1);
  omp_target_memcpy(d, h, sizeof h, 0, 0, 0, host);
  omp_target_memcpy(d1, h, sizeof h, 0, 0, 1, host);
  omp_target_memcpy(back, d1, sizeof h, 0, 0, host, 1);
  omp_target_associate_ptr(h, d, sizeof h, 0, 0);
#pragma omp target map(tofrom : h[0:16])
  h[0] = 42;
  omp_target_disassociate_ptr(h, 0);
  omp_target_free(d1, 1);
  omp_target_free(d, 0);
  printf("back[15]=%d h[0]=%d\n", back[15], h[0]);
  return 0;
}
