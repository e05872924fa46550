// A server killed mid-run. Run as
//   mpirun --enable-recovery -np 1 kill : -np 1 server --devices 1 : -np 1 server --devices 1 --die-after 12
// Devices: the local ones, then rank 1's (LOCAL), then rank 2's (LOCAL+1),
// which dies after a few requests. Copies to it must fail with an error (no
// hang) while the local devices and rank 1's device keep working. Each
// round copies host -> dying -> host, then dying -> rank 1 and rank 1 ->
// dying device to device (straight between the two servers), so the
// server dies in the request --die-after picks: 12 a copy to rank 1, 13 a
// copy from it, 14 a copy from the host.
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
  int *r1 = omp_target_alloc(sizeof buf, local);
  for (int i = 0; p && r1 && i < 1000; i++) {
    if (omp_target_memcpy(p, buf, sizeof buf, 0, 0, dying, host) || omp_target_memcpy(buf, p, sizeof buf, 0, 0, host, dying) ||
        omp_target_memcpy(r1, p, sizeof buf, 0, 0, local, dying) || omp_target_memcpy(p, r1, sizeof buf, 0, 0, dying, local)) {
      failed_at = i;
      break;
    }
  }
  printf("dying server: %s\n", failed_at >= 0 || !p ? "failed with an error" : "never failed");
  // Later calls to it fail at once.
  printf("again: %s\n", omp_target_alloc(16, dying) == NULL ? "refused" : "allocated");
  // Rank 1 still copies device to device, within itself.
  int *r2 = omp_target_alloc(sizeof buf, local), same = r1 && r2;
  for (int i = 0; i < 256; i++) buf[i] = i;
  same = same && !omp_target_memcpy(r1, buf, sizeof buf, 0, 0, local, host) && !omp_target_memcpy(r2, r1, sizeof buf, 0, 0, local, local);
  for (int i = 0; i < 256; i++) buf[i] = 0;
  same = same && !omp_target_memcpy(buf, r2, sizeof buf, 0, 0, host, local);
  for (int i = 0; i < 256; i++) same &= buf[i] == i;
  printf("rank 1 copies: %s\n", same ? "ok" : "WRONG");
  printf("local device 0: %s\n", compute(0) ? "ok" : "WRONG");
  printf("remote device %d (rank 1): %s\n", local, compute(local) ? "ok" : "WRONG");
  return 0;
}
