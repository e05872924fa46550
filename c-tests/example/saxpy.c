// The README's example: saxpy offloaded to device 0, with proof that it ran
// on a device (omp_is_initial_device() is 0 inside the region) and which
// runtime served it.
#include <omp.h>
#include <stdio.h>

#define N 1024

int main(void) {
  float x[N], y[N], a = 2.0f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  int on_host = -1;
#pragma omp target teams distribute parallel for map(to : x[0:N]) map(tofrom : y[0:N]) map(from : on_host) device(0)
  for (int i = 0; i < N; i++) {
    y[i] = a * x[i] + y[i];
    if (i == 0)
      on_host = omp_is_initial_device();
  }
  double sum = 0;
  for (int i = 0; i < N; i++)
    sum += y[i];
  printf("saxpy: y[10] = %.1f, sum = %.1f\n", y[10], sum);
  printf("computed on device 0 of %d (omp_is_initial_device() in the region: %d)\n", omp_get_num_devices(), on_host);
  return on_host == 0 ? 0 : 1;
}
