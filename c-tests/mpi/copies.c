// Large copies to and between remote devices. Run as
//   mpirun -np 1 copies FIRST RACE : -np 2 omptarget-rs-device [--devices N]
// FIRST: the first remote device (the number of local devices). Every
// remote device gets a copy of 40 MiB + 3 bytes there and back (pieces of
// 8 MiB on the wire, the last one short); then the data goes through every
// remote device in turn, first to last and last to first, by
// device-to-device copies (within one server and from one server straight
// to the next) at odd offsets, and back to the host. RACE >= 0: 8 threads map one array to device RACE at once (the
// late ones wait for the first one's copy: an event on the remote queue)
// and each sums it on the device.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BIG = (40 << 20) + 3, RACE_N = 1 << 20 };

static uint64_t sum_bytes(const unsigned char *p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++) s = s * 31 + p[i];
  return s;
}

int main(int argc, char **argv) {
  int first = argc > 1 ? atoi(argv[1]) : 4, race = argc > 2 ? atoi(argv[2]) : -1;
  int n = omp_get_num_devices(), host = omp_get_initial_device(), bad = 0;
  printf("devices %d, remote %d\n", n, n - first);
  unsigned char *h = malloc(BIG), *back = malloc(BIG);
  for (size_t i = 0; i < BIG; i++) h[i] = (unsigned char)(i * 7 + i / 4093);
  uint64_t want = sum_bytes(h, BIG);
  for (int d = first; d < n; d++) {
    unsigned char *p = omp_target_alloc(BIG, d);
    memset(back, 0, BIG);
    int ok = p && !omp_target_memcpy(p, h, BIG, 0, 0, d, host) && !omp_target_memcpy(back, p, BIG, 0, 0, host, d) &&
             sum_bytes(back, BIG) == want;
    omp_target_free(p, d);
    printf("device %d: 40 MiB + 3 there and back: %s\n", d, ok ? "ok" : "WRONG");
    bad |= !ok;
  }
  // Through every remote device, first to last and back: 5 bytes in at the
  // first, moved by 1 byte at each step (unaligned pieces), out of the last.
  for (int dir = 0; dir < 2; dir++) {
    int steps = n - first, ok = 1, prev_d = -1;
    size_t size = BIG - steps - 8;
    unsigned char *prev = NULL;
    for (int k = 0; k < steps; k++) {
      int d = dir == 0 ? first + k : n - 1 - k;
      unsigned char *p = omp_target_alloc(BIG, d);
      ok &= p != NULL;
      if (!p) break;
      if (k == 0) ok &= !omp_target_memcpy(p, h, size, 5, 0, d, host);
      else ok &= !omp_target_memcpy(p, prev, size, 5 + k, 5 + k - 1, d, prev_d);
      if (prev) omp_target_free(prev, prev_d);
      prev = p;
      prev_d = d;
    }
    memset(back, 0, BIG);
    ok &= prev && !omp_target_memcpy(back, prev, size, 0, 5 + (steps - 1), host, prev_d);
    omp_target_free(prev, prev_d);
    ok &= sum_bytes(back, size) == sum_bytes(h, size);
    printf("chain through %d remote devices, %s: %s\n", steps, dir == 0 ? "first to last" : "last to first", ok ? "ok" : "WRONG");
    bad |= !ok;
  }
  if (race >= 0) {
    int *a = malloc(RACE_N * sizeof(int));
    long long sums[8] = {0}, expect = 0;
    for (int i = 0; i < RACE_N; i++) { a[i] = i % 1000; expect += i % 1000; }
    int ok = 1;
    for (int round = 0; round < 60; round++) {
      // A new value each round: a late thread that did not wait for the
      // first one's copy would sum the old one.
      for (int i = 0; i < RACE_N; i++) a[i] = (i + round) % 1000;
      expect = 0;
      for (int i = 0; i < RACE_N; i++) expect += a[i];
#pragma omp parallel num_threads(8)
      {
        int t = omp_get_thread_num();
        long long s = 0;
#pragma omp target device(race) map(to: a[0:RACE_N]) map(tofrom: s)
        for (int i = 0; i < RACE_N; i++) s += a[i];
        sums[t] = s;
      }
      for (int t = 0; t < 8; t++) ok &= sums[t] == expect;
    }
    printf("8 threads map one array to device %d at once, 60 rounds: %s\n", race, ok ? "ok" : "WRONG");
    bad |= !ok;
    free(a);
  }
  free(h);
  free(back);
  printf("%s\n", bad ? "FAILED" : "ok");
  return bad;
}
