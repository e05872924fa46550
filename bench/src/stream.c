/* A BabelStream-like program, timed as a whole process by run.sh (launch):
 * three arrays of 2^<log2n> doubles (default 2^25, 256 MiB each) on device
 * 0 in one target data region (map(tofrom: a) map(to: b) map(alloc: c)),
 * <iters> iterations (default 20) of BabelStream's five kernels (copy, mul,
 * add, triad, dot), then the arrays come back and are checked against the
 * same recurrence on scalars (BabelStream's check). Exits 1 on a wrong
 * result.
 *
 *   stream [log2n] [iters]
 */
#include "bench.h"
#include <math.h>

static const double START_A = 0.1, START_B = 0.2, START_C = 0.0, SCALAR = 0.4;

int main(int argc, char **argv) {
  long log2n = bench_arg_long(argc, argv, 1, 25), iters = bench_arg_long(argc, argv, 2, 20);
  if (log2n < 10 || log2n > 30 || iters < 1) BENCH_FAIL("usage: stream [log2n 10..30] [iters]");
  size_t n = (size_t)1 << log2n;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c) BENCH_FAIL("out of memory");
  for (size_t i = 0; i < n; i++) {
    a[i] = START_A;
    b[i] = START_B;
    c[i] = START_C;
  }
  double sum = 0;
#pragma omp target data map(tofrom : a[0:n]) map(to : b[0:n]) map(alloc : c[0:n]) device(0)
  {
    for (long k = 0; k < iters; k++) {
#pragma omp target teams distribute parallel for device(0)
      for (size_t i = 0; i < n; i++) c[i] = a[i];
#pragma omp target teams distribute parallel for device(0)
      for (size_t i = 0; i < n; i++) b[i] = SCALAR * c[i];
#pragma omp target teams distribute parallel for device(0)
      for (size_t i = 0; i < n; i++) c[i] = a[i] + b[i];
#pragma omp target teams distribute parallel for device(0)
      for (size_t i = 0; i < n; i++) a[i] = b[i] + SCALAR * c[i];
      sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(tofrom : sum) device(0)
      for (size_t i = 0; i < n; i++) sum += a[i] * b[i];
    }
#pragma omp target update from(b[0:n], c[0:n]) device(0)
  }
  /* The same recurrence on scalars. */
  double ga = START_A, gb = START_B, gc = START_C;
  for (long k = 0; k < iters; k++) {
    gc = ga;
    gb = SCALAR * gc;
    gc = ga + gb;
    ga = gb + SCALAR * gc;
  }
  double gsum = ga * gb * (double)n;
  double ea = 0, eb = 0, ec = 0;
  for (size_t i = 0; i < n; i++) {
    ea += fabs(a[i] - ga);
    eb += fabs(b[i] - gb);
    ec += fabs(c[i] - gc);
  }
  ea /= (double)n;
  eb /= (double)n;
  ec /= (double)n;
  if (ea > 1e-8 * fabs(ga) || eb > 1e-8 * fabs(gb) || ec > 1e-8 * fabs(gc) || fabs(sum - gsum) / gsum > 1e-8)
    BENCH_FAIL("stream: wrong result (errors %g %g %g, dot %.17g want %.17g)", ea, eb, ec, sum, gsum);
  printf("stream: 3 x 2^%ld doubles, %ld iterations: ok (dot %.6g)\n", log2n, iters, sum);
  free(a);
  free(b);
  free(c);
  return 0;
}
