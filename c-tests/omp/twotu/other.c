#include <omp.h>

#pragma omp declare target
int triple(int x) { return 3 * x; }
#pragma omp end declare target

int other_tu_kernel(int *v, int n) {
  int sum = 0, on_host = -1;
#pragma omp target map(tofrom : v[0:n]) map(tofrom : sum, on_host)
  {
    for (int i = 0; i < n; i++) {
      v[i] += 1;
      sum += v[i];
    }
    on_host = omp_is_initial_device();
  }
  return on_host == 0 ? sum : -1;
}
