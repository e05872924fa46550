// Concurrent map/unmap of one variable: host threads in a
// parallel for each run `target map(tofrom: counter)` on the same variable
// with an atomic increment inside, so one thread's release (count 1 -> 0,
// copy back, free, remove) races another's re-map of the same address
// (0 -> 1, allocate, copy in). OpenMP requires them to be ordered: the count
// must be exact. Also with enter/exit data pairs and with a scalar that
// another construct keeps mapped for a while.
//
// Usage: map_race_tofrom [regions-per-thread [runs [threads]]]; the
// differential suite runs the defaults, c-tests/stress/map-race.sh the
// 8 threads x 10^4 regions x 200 runs of the issue.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int per_thread = argc > 1 ? atoi(argv[1]) : 2000;
  int runs = argc > 2 ? atoi(argv[2]) : 5;
  int threads = argc > 3 ? atoi(argv[3]) : 8;
  long n = (long)per_thread * threads;
  int wrong = 0, on_host = 0;
  for (int r = 0; r < runs; r++) {
    long counter = 0;
    double sum = 0;
#pragma omp parallel for num_threads(threads) schedule(static, 1) reduction(+ : on_host)
    for (long i = 0; i < n; i++) {
      int h = 1;
#pragma omp target map(tofrom : counter) map(from : h)
      {
#pragma omp atomic update
        counter += 1;
        h = omp_is_initial_device();
      }
      on_host += h;
    }
    // enter/exit pairs around the region, on a second variable.
#pragma omp parallel for num_threads(threads) schedule(static, 1)
    for (long i = 0; i < n / 4; i++) {
#pragma omp target enter data map(to : sum)
#pragma omp target map(tofrom : sum)
      {
#pragma omp atomic update
        sum += 1.0;
      }
#pragma omp target exit data map(from : sum)
    }
    if (counter != n || sum != (double)(n / 4)) {
      wrong++;
      if (wrong <= 3)
        printf("run %d: counter = %ld (expected %ld), sum = %.0f (expected %ld)\n", r, counter, n, sum, n / 4);
    }
  }
  printf("%d of %d runs wrong (%d threads x %d regions), %d regions on the host\n", wrong, runs, threads, per_thread, on_host);
  return wrong != 0;
}
