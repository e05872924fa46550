#include <omp.h>

int util_global = 42;
#pragma omp declare target to(util_global)

double util_dot(const double *x, const double *y, int n) {
  double s = 0;
#pragma omp target teams distribute parallel for reduction(+ : s) map(to : x[0:n], y[0:n])
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}

int util_global_on_device(void) {
  int v = -1;
#pragma omp target map(from : v)
  { v = omp_is_initial_device() ? -1 : util_global; }
  return v;
}
