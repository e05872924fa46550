// target nowait + taskwait, depend chains, nowait enter/exit/update data.
#include <omp.h>
#include <stdio.h>

#define N 256
#define K 8

int main(void) {
  static int a[K][N];
  int done[K];
  for (int k = 0; k < K; k++)
    for (int i = 0; i < N; i++)
      a[k][i] = k;

  // independent nowait regions, then taskwait
  for (int k = 0; k < K; k++) {
#pragma omp target map(tofrom : a[k][0:N]) map(from : done[k:1]) nowait
    {
      for (int i = 0; i < N; i++)
        a[k][i] = a[k][i] * 2 + i;
      done[k] = !omp_is_initial_device();
    }
  }
#pragma omp taskwait
  long total = 0;
  int alldev = 1;
  for (int k = 0; k < K; k++) {
    alldev &= done[k];
    for (int i = 0; i < N; i++)
      total += a[k][i];
  }
  printf("independent: total=%ld all_on_device=%d\n", total, alldev);

  // a dependence chain: x = ((1 + 1) * 3) - 2, plus a host task in the middle
  int x = 1;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target map(tofrom : x) depend(inout : x) nowait
    { x += 1; }
#pragma omp task depend(inout : x)
    { x *= 3; }
#pragma omp target map(tofrom : x) depend(inout : x) nowait
    { x -= 2; }
#pragma omp taskwait
  }
  printf("chain: x=%d\n", x);

  // nowait data movement
  int b[N];
  for (int i = 0; i < N; i++)
    b[i] = 1;
#pragma omp target enter data map(to : b) depend(out : b) nowait
#pragma omp target depend(inout : b) nowait
  {
    for (int i = 0; i < N; i++)
      b[i] += i;
  }
#pragma omp target update from(b) depend(inout : b) nowait
#pragma omp taskwait
  long s = 0;
  for (int i = 0; i < N; i++)
    s += b[i];
  printf("nowait data: sum=%ld\n", s);
#pragma omp target exit data map(release : b) depend(inout : b) nowait
#pragma omp taskwait
  printf("present after exit nowait: %d\n", omp_target_is_present(b, omp_get_default_device()));

  // many nowait regions from several threads
  int counts[4] = {0, 0, 0, 0};
#pragma omp parallel for num_threads(2)
  for (int t = 0; t < 4; t++) {
    for (int j = 0; j < 5; j++) {
#pragma omp target map(tofrom : counts[t:1]) nowait
      { counts[t] += 1; }
#pragma omp taskwait
    }
  }
  printf("counts: %d %d %d %d\n", counts[0], counts[1], counts[2], counts[3]);
  return 0;
}
