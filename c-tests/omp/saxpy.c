// saxpy: y = a*x + y on the default device, with a proof that it ran there.
#include <omp.h>
#include <stdio.h>

#define N 1000

int main(void) {
  static float x[N], y[N];
  const float a = 2.5f;
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    y[i] = (float)(N - i);
  }
  int on_host = -1;
#pragma omp target teams distribute parallel for map(to : x[0:N]) map(tofrom : y[0:N]) map(tofrom : on_host)
  for (int i = 0; i < N; i++) {
    y[i] = a * x[i] + y[i];
    if (i == 0)
      on_host = omp_is_initial_device();
  }
  double checksum = 0;
  int bad = 0;
  for (int i = 0; i < N; i++) {
    checksum += y[i];
    if (y[i] != a * (float)i + (float)(N - i))
      bad++;
  }
  printf("saxpy: on_host=%d bad=%d checksum=%.1f y[0]=%.1f y[999]=%.1f\n", on_host, bad, checksum, y[0], y[N - 1]);

  // map(to:) copy changed on the device must not change the host array
  x[0] = 42.0f;
#pragma omp target map(to : x[0:N])
  { x[0] = -1.0f; }
  printf("saxpy: host x[0] after device write to map(to:) copy = %.1f\n", x[0]);
  return bad != 0;
}
