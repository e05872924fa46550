// OpenMP 5.2's omp_initial_device (-1; LLVM 22.1's omp.h does
// not define it) names the host in the device memory routines (OpenMP 5.2
// §18.8): omp_target_alloc(n, -1) is host memory, omp_target_memcpy/_rect/
// memset/is_present/get_mapped_ptr/free with -1 treat it as the host.
// LLVM 22.1 aborts at the first such call ("device number '-1' out of range"),
// which .expected/.exit record; ours follows the standard (.divergence, .ours).
// Not covered: `target device(d)` with d == -1 -- clang passes -1 for a target
// construct without a device clause too (OMP_DEVICEID_UNDEF), so a runtime
// cannot tell the two apart and both use the default device, as in 22.1.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define INITIAL (-1)

int main(void) {
  printf("devices=%d\n", omp_get_num_devices());
  fflush(stdout);
  int *h = omp_target_alloc(4 * sizeof(int), INITIAL);
  printf("alloc on the initial device: %s\n", h ? "ok" : "NULL");
  for (int i = 0; i < 4; i++)
    h[i] = i + 1; // host memory: writable here
  printf("is_present=%d mapped_ptr is itself=%d\n", omp_target_is_present(h, INITIAL),
         omp_get_mapped_ptr(h, INITIAL) == h);

  int *d = omp_target_alloc(4 * sizeof(int), 0);
  int rc = omp_target_memcpy(d, h, 4 * sizeof(int), 0, 0, 0, INITIAL);
  int sum = -1;
#pragma omp target is_device_ptr(d) map(from : sum) device(0)
  {
    sum = 0;
    for (int i = 0; i < 4; i++) {
      sum += d[i];
      d[i] *= 10;
    }
  }
  printf("memcpy host->dev rc=%d, device sum=%d\n", rc, sum);
  int back[4] = {0};
  rc = omp_target_memcpy(back, d, sizeof back, 0, 0, INITIAL, 0);
  printf("memcpy dev->host rc=%d: %d %d %d %d\n", rc, back[0], back[1], back[2], back[3]);

  int other[4] = {0};
  rc = omp_target_memcpy(other, h, sizeof other, 0, 4, INITIAL, INITIAL);
  printf("memcpy host->host rc=%d: %d %d %d\n", rc, other[0], other[1], other[2]);
  size_t vol[1] = {2}, zero[1] = {0}, one[1] = {1}, dims[1] = {4};
  memset(other, 0, sizeof other);
  rc = omp_target_memcpy_rect(other, h, sizeof(int), 1, vol, zero, one, dims, dims, INITIAL, INITIAL);
  printf("memcpy_rect rc=%d: %d %d %d\n", rc, other[0], other[1], other[2]);
  omp_target_memset(h, 0, 2 * sizeof(int), INITIAL);
  printf("memset: %d %d %d %d\n", h[0], h[1], h[2], h[3]);
  printf("is_accessible=%d\n", omp_target_is_accessible(h, 4, INITIAL));
  omp_target_free(h, INITIAL);
  omp_target_free(d, 0);
  printf("done\n");
  return 0;
}
