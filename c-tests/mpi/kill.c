// A server killed mid-run. Run as
//   mpirun --enable-recovery -np 1 kill : -np 1 server --devices 1 : -np 1 server --devices 1 --die-after 12
// Devices: the local ones, then rank 1's (LOCAL), then rank 2's (LOCAL+1),
// which dies after a few requests. Copies to it must fail with an error (no
// hang) while the local devices and rank 1's device keep working.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int compute(int d) {
  int x[64], ok = 1;
  for (int i = 0; i < 64; i++) x[i] = i;
#pragma omp target device(d) map(tofrom: x)
  for (int i = 0; i < 64; i++) x[i] *= 3;
  for (int i = 0; i < 64; i++) ok &= x[i] == 3 * i;
  return ok;
}

int main(int argc, char **argv) {
  int local = argc > 1 ? atoi(argv[1]) : 4;
  int n = omp_get_num_devices(), dying = local + 1, host = omp_get_initial_device();
  printf("devices %d\n", n);
  int buf[256] = {0}, failed_at = -1;
  int *p = omp_target_alloc(sizeof buf, dying);
  for (int i = 0; p && i < 1000; i++) {
    if (omp_target_memcpy(p, buf, sizeof buf, 0, 0, dying, host) || omp_target_memcpy(buf, p, sizeof buf, 0, 0, host, dying)) {
      failed_at = i;
      break;
    }
  }
  printf("dying server: %s\n", failed_at >= 0 || !p ? "failed with an error" : "never failed");
  // Later calls to it fail at once.
  printf("again: %s\n", omp_target_alloc(16, dying) == NULL ? "refused" : "allocated");
  printf("local device 0: %s\n", compute(0) ? "ok" : "WRONG");
  printf("remote device %d (rank 1): %s\n", local, compute(local) ? "ok" : "WRONG");
  return 0;
}
