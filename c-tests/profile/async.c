// nowait regions and synchronous omp_target_memcpy under
// LIBOMPTARGET_PROFILE on the GPU stand-ins (c-tests/profile.sh): their
// device-track events are timed on the device too. The first region's
// kernel sleeps 5 ms where it runs on the host (the stand-ins run the
// host-offload build's kernels).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#if !defined(__NVPTX__) && !defined(__AMDGCN__)
#include <unistd.h>
#endif
#define N 1000
int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = b[i] = i;
  int dev = omp_get_default_device(), host = omp_get_initial_device();
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target map(tofrom : a[0:N]) nowait
    {
      for (int i = 0; i < N; i++) a[i] += 1;
#if !defined(__NVPTX__) && !defined(__AMDGCN__)
      usleep(5000);
#endif
    }
#pragma omp target map(tofrom : b[0:N]) nowait
    for (int i = 0; i < N; i++) b[i] += 2;
#pragma omp taskwait
  }
  int *d = omp_target_alloc(N * sizeof(int), dev);
  omp_target_memcpy(d, a, N * sizeof(int), 0, 0, dev, host);
  omp_target_memcpy(b, d, N * sizeof(int), 0, 0, host, dev);
  omp_target_free(d, dev);
  printf("a[9]=%d b[9]=%d\n", a[9], b[9]);
  return 0;
}
