// Known program for the LIBOMPTARGET_PROFILE test (c-tests/profile.sh):
// one target data region with two kernels inside, one update. The second
// kernel sleeps KERNEL_SLEEP_US where it runs on the host (the host plugin,
// and the GPU stand-ins, which run the host-offload build's kernels), so its
// device-track duration is known.
#include <stdio.h>
#if !defined(__NVPTX__) && !defined(__AMDGCN__)
#include <unistd.h>
#endif
#define KERNEL_SLEEP_US 20000
int main(void) {
  int a[1000], b[10];
  for (int i = 0; i < 1000; i++) a[i] = i;
  for (int i = 0; i < 10; i++) b[i] = 1;
#pragma omp target data map(tofrom : a[0:1000]) map(to : b[0:10])
  {
#pragma omp target teams distribute parallel for num_teams(2)
    for (int i = 0; i < 1000; i++) a[i] += b[i % 10];
#pragma omp target
    {
      for (int i = 0; i < 1000; i++) a[i] *= 2;
#if !defined(__NVPTX__) && !defined(__AMDGCN__)
      usleep(KERNEL_SLEEP_US);
#endif
    }
#pragma omp target update from(a[0:1000])
  }
  printf("a[999]=%d\n", a[999]);
  return 0;
}
