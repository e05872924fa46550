// The traced program: a region with copies both ways, a data
// region with an update, a nowait region; flush; more; stop; one region
// after the stop (no record may come).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#define N 1000
// The tool's trace_ctl (libomp loaded it RTLD_LOCAL: looked up in its handle).
static void ctl(int what) {
  const char *path = getenv("OMP_TOOL_LIBRARIES");
  void *h = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : NULL;
  void (*f)(int) = h ? (void (*)(int))dlsym(h, "trace_ctl") : NULL;
  if (f) f(what);
}
int main(void) {
  static double a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = i;
#pragma omp target teams distribute parallel for num_teams(3) map(tofrom: a[0:N])
  for (int i = 0; i < N; i++) a[i] *= 2;
  ctl(1);
#pragma omp target enter data map(to: a[0:N]) map(alloc: b[0:N])
#pragma omp target teams distribute parallel for num_teams(3) map(present, alloc: a[0:N], b[0:N])
  for (int i = 0; i < N; i++) b[i] = a[i] + 1;
#pragma omp target update from(b[0:N])
#pragma omp target exit data map(delete: a[0:N], b[0:N])
#pragma omp target teams distribute parallel for num_teams(3) map(tofrom: a[0:N]) nowait
  for (int i = 0; i < N; i++) a[i] += 1;
#pragma omp taskwait
  ctl(2);
#pragma omp target teams distribute parallel for num_teams(3) map(tofrom: a[0:N])
  for (int i = 0; i < N; i++) a[i] -= 1;
  ctl(3);
  printf("a[10]=%g b[10]=%g\n", a[10], b[10]);
  return 0;
}
