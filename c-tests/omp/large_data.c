// Large mappings (above the memory manager's threshold) and many allocations.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  size_t n = 4u << 20; // 4 Mi doubles = 32 MiB
  double *x = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++)
    x[i] = (double)(i % 1000);
  double s = 0;
#pragma omp target teams distribute parallel for map(tofrom : x[0:n]) reduction(+ : s)
  for (size_t i = 0; i < n; i++) {
    x[i] = x[i] * 2;
    s += x[i];
  }
  printf("sum=%.0f x[n-1]=%.0f\n", s, x[n - 1]);
  // many small mappings alive at the same time
  enum { K = 200 };
  static int small[K][3];
  for (int k = 0; k < K; k++) {
    small[k][0] = k;
#pragma omp target enter data map(to : small[k][0:3])
  }
  long total = 0;
  for (int k = 0; k < K; k++) {
#pragma omp target map(tofrom : total) map(to : small[k][0:3])
    { total += small[k][0]; }
  }
  int present = 0;
  for (int k = 0; k < K; k++) {
    present += omp_target_is_present(small[k], 0);
#pragma omp target exit data map(release : small[k][0:3])
  }
  printf("small mappings: total=%ld present=%d\n", total, present);
  free(x);
  return 0;
}
