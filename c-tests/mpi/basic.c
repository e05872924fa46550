// Remote devices over MPI: every device (local and remote)
// computes a vector sum, a global's value and omp_target_alloc/memcpy
// round trips; prints one line per device and "ok" when all agree.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma omp declare target
int counter = 7;
#pragma omp end declare target

int main(void) {
  int n = omp_get_num_devices();
  printf("devices %d\n", n);
  int bad = 0;
  enum { N = 10000 };
  double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  for (int d = 0; d < n; d++) {
    for (int i = 0; i < N; i++) { a[i] = i; b[i] = 0; }
    double sum = 0;
    int dev_num = -1, initial = -1;
#pragma omp target teams distribute parallel for device(d) map(to: a[0:N]) map(from: b[0:N]) reduction(+: sum)
    for (int i = 0; i < N; i++) { b[i] = 2 * a[i]; sum += a[i]; }
#pragma omp target device(d) map(from: dev_num, initial)
    { dev_num = omp_get_device_num(); initial = omp_is_initial_device(); counter += d; }
    int c = 0;
#pragma omp target device(d) map(from: c)
    c = counter;
    int ok = sum == (double)N * (N - 1) / 2 && c == 7 + d && initial == 0;
    for (int i = 0; i < N; i++) ok &= b[i] == 2.0 * i;
    // omp_target_alloc + memcpy both ways + device-to-device on the same device.
    int *p = omp_target_alloc(N * sizeof(int), d), *q = omp_target_alloc(N * sizeof(int), d);
    int *h = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) h[i] = i * 3;
    ok &= p && q;
    ok &= !omp_target_memcpy(p, h, N * sizeof(int), 0, 0, d, omp_get_initial_device());
    ok &= !omp_target_memcpy(q, p, N * sizeof(int), 0, 0, d, d);
    memset(h, 0, N * sizeof(int));
    ok &= !omp_target_memcpy(h, q, N * sizeof(int), 0, 0, omp_get_initial_device(), d);
    for (int i = 0; i < N; i++) ok &= h[i] == i * 3;
    omp_target_free(p, d);
    omp_target_free(q, d);
    free(h);
    printf("device %d: %s\n", d, ok ? "ok" : "WRONG");
    bad |= !ok;
  }
  // A chain of device-to-device copies through every device in order:
  // local to local, local to remote, remote to remote on one server and
  // across servers, then back to the host.
  {
    int *h = malloc(N * sizeof(int)), *prev = NULL, ok = 1;
    for (int i = 0; i < N; i++) h[i] = 5 * i + 1;
    for (int d = 0; d < n; d++) {
      int *p = omp_target_alloc(N * sizeof(int), d);
      ok &= p != NULL;
      if (d == 0) ok &= !omp_target_memcpy(p, h, N * sizeof(int), 0, 0, 0, omp_get_initial_device());
      else ok &= !omp_target_memcpy(p, prev, N * sizeof(int), 0, 0, d, d - 1);
      if (prev) omp_target_free(prev, d - 1);
      prev = p;
    }
    memset(h, 0, N * sizeof(int));
    ok &= !omp_target_memcpy(h, prev, N * sizeof(int), 0, 0, omp_get_initial_device(), n - 1);
    omp_target_free(prev, n - 1);
    for (int i = 0; i < N; i++) ok &= h[i] == 5 * i + 1;
    printf("copy chain through %d devices: %s\n", n, ok ? "ok" : "WRONG");
    bad |= !ok;
    free(h);
  }
  printf("%s\n", bad ? "FAILED" : "ok");
  return bad;
}
