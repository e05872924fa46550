// A program linked against an offloading shared library (libso_util.so,
// NEEDED, rpath $ORIGIN): two descriptors registered at start-up.
#include <omp.h>
#include <stdio.h>

double util_dot(const double *x, const double *y, int n); // libso_util.so
int util_global_on_device(void);                          // libso_util.so
extern int util_global;

int main(void) {
  double x[100], y[100];
  for (int i = 0; i < 100; i++)
    x[i] = i, y[i] = 2;
  printf("dot=%.1f\n", util_dot(x, y, 100));
  double s = 0;
  int on_host = -1;
#pragma omp target teams distribute parallel for reduction(+ : s) map(to : x) map(tofrom : on_host)
  for (int i = 0; i < 100; i++) {
    s += x[i];
    if (i == 0)
      on_host = omp_is_initial_device();
  }
  printf("main sum=%.1f on_host=%d\n", s, on_host);
  util_global = 5; // host copy only
  printf("library global on device=%d\n", util_global_on_device());
#pragma omp target update to(util_global)
  printf("after update to=%d\n", util_global_on_device());
  return 0;
}
