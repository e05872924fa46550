// 8 threads offloading at once to remote devices: thread t runs
// 40 regions on device FIRST + t % COUNT (argv: FIRST COUNT), each mapping
// its own array tofrom and a scalar; prints "ok" when every result is right.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int first = atoi(argv[1]), count = atoi(argv[2]);
  int bad = 0;
#pragma omp parallel num_threads(8) reduction(| : bad)
  {
    int t = omp_get_thread_num(), d = first + t % count;
    enum { N = 4096 };
    long *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++) a[i] = i;
    for (int r = 0; r < 40; r++) {
      long s = 0;
#pragma omp target device(d) map(tofrom: a[0:N]) map(tofrom: s)
      for (int i = 0; i < N; i++) { a[i] += t; s += a[i]; }
      long want = 0;
      for (int i = 0; i < N; i++) want += i + (long)t * (r + 1);
      bad |= s != want;
    }
    for (int i = 0; i < N; i++) bad |= a[i] != i + 40L * t;
    free(a);
  }
  printf("%s\n", bad ? "WRONG" : "ok");
  return bad;
}
