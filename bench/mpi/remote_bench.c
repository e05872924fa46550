// Remote devices over MPI: per-operation times on each device
// given on the command line (a local one and remote ones), in one run.
//   empty     #pragma omp target (nothing mapped)
//   scalar    #pragma omp target map(tofrom: x), x an int
//   copy64    64 MiB omp_target_memcpy host -> device, then device -> host
// An argument A:B instead of a device times 64 MiB omp_target_memcpy from
// device A to device B ("A:B d2d64 us").
// Prints "DEVICE OP us" lines (median of the repetitions).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp);
  return v[n / 2];
}

int main(int argc, char **argv) {
  int reps = getenv("REPS") ? atoi(getenv("REPS")) : 2000;
  int copies = getenv("COPIES") ? atoi(getenv("COPIES")) : 10;
  size_t big = 64u << 20;
  char *h = malloc(big);
  memset(h, 1, big);
  double *t = malloc(sizeof(double) * (reps > copies ? reps : copies));
  for (int a = 1; a < argc; a++) {
    int d = atoi(argv[a]), e;
    if (sscanf(argv[a], "%d:%d", &d, &e) == 2) {
      char *p = omp_target_alloc(big, d), *q = omp_target_alloc(big, e);
      omp_target_memcpy(p, h, big, 0, 0, d, omp_get_initial_device());
      omp_target_memcpy(q, p, big, 0, 0, e, d);
      for (int i = 0; i < copies; i++) {
        double s = now();
        omp_target_memcpy(q, p, big, 0, 0, e, d);
        t[i] = now() - s;
      }
      memset(h, 0, big);
      omp_target_memcpy(h, q, big, 0, 0, omp_get_initial_device(), e);
      for (size_t i = 0; i < big; i += 4096)
        if (h[i] != 1) { printf("%s WRONG d2d\n", argv[a]); break; }
      memset(h, 1, big);
      printf("%s d2d64 %.2f\n", argv[a], median(t, copies));
      omp_target_free(p, d);
      omp_target_free(q, e);
      continue;
    }
    // Warm-up: the image loads on first use.
#pragma omp target device(d)
    {}
    for (int i = 0; i < reps; i++) {
      double s = now();
#pragma omp target device(d)
      {}
      t[i] = now() - s;
    }
    printf("%d empty %.2f\n", d, median(t, reps));
    int x = 0;
    for (int i = 0; i < reps; i++) {
      double s = now();
#pragma omp target device(d) map(tofrom: x)
      x++;
      t[i] = now() - s;
    }
    printf("%d scalar %.2f\n", d, median(t, reps));
    if (x != reps) printf("%d WRONG scalar %d\n", d, x);
    char *p = omp_target_alloc(big, d);
    omp_target_memcpy(p, h, big, 0, 0, d, omp_get_initial_device());
    for (int i = 0; i < copies; i++) {
      double s = now();
      omp_target_memcpy(p, h, big, 0, 0, d, omp_get_initial_device());
      omp_target_memcpy(h, p, big, 0, 0, omp_get_initial_device(), d);
      t[i] = (now() - s) / 2;
    }
    printf("%d copy64 %.2f\n", d, median(t, copies));
    omp_target_free(p, d);
  }
  return 0;
}
