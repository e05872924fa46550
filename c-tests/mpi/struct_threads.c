// Threads map one host struct's pointer members to different remote
// devices at once (the XSBench-spread pattern): 4 threads, devices
// FIRST..FIRST+3, 20 rounds of enter data / region / exit data. Each
// region checks on the device that the struct's pointers are that device's
// (not the host's) and reads the arrays through them. A runtime that
// writes a device address into the shared host struct when copying the
// pointer members back (LLVM 22.1 does, then restores it) lets another
// thread attach through it: the server's kernel then reads a program-rank
// address and dies (SIGSEGV). Prints "ok".
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  int *a;
  double *b;
  long la, lb;
} S;
enum { N = 1 << 20, ROUNDS = 20 };

static void map_once(S sd, int dev) {
#pragma omp target enter data device(dev) map(to: sd.a[:sd.la]) map(to: sd.b[:sd.lb])
}
static void unmap(S sd, int dev) {
#pragma omp target exit data device(dev) map(delete: sd.a[:sd.la]) map(delete: sd.b[:sd.lb])
}

int main(int argc, char **argv) {
  int first = argc > 1 ? atoi(argv[1]) : 4, ndev = 4;
  S sd = {7, malloc(N * sizeof(int)), malloc(N * sizeof(double)), N, N};
  for (int i = 0; i < N; i++) { sd.a[i] = i; sd.b[i] = i; }
  int bad = 0;
  for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel num_threads(ndev)
    map_once(sd, first + omp_get_thread_num());
#pragma omp parallel num_threads(ndev) reduction(| : bad)
    {
      int dev = first + omp_get_thread_num(), e = 0;
      uintptr_t ha = (uintptr_t)sd.a, hb = (uintptr_t)sd.b;
#pragma omp target teams distribute parallel for device(dev) map(to: sd.n) map(to: sd.a[:sd.la]) map(to: sd.b[:sd.lb]) map(tofrom: e)
      for (int i = 0; i < N; i += 4096)
        if ((uintptr_t)sd.a == ha || (uintptr_t)sd.b == hb || sd.a[i] != i || sd.b[i] != i) e = 1;
      bad |= e;
    }
#pragma omp parallel num_threads(ndev)
    unmap(sd, first + omp_get_thread_num());
  }
  bad |= sd.a[5] != 5 || sd.b[5] != 5;
  printf("%s\n", bad ? "WRONG" : "ok");
  return bad;
}
