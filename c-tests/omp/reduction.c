// Reductions in target teams distribute parallel for (+, *, max, min, on ints and doubles).
#include <omp.h>
#include <stdio.h>

#define N 10000

int main(void) {
  static int v[N];
  for (int i = 0; i < N; i++)
    v[i] = (i * 7919) % 1000 - 300;

  long sum = 0;
  int mx = -1000000, mn = 1000000;
  double dsum = 0.0;
  int dev_flag = 0;
#pragma omp target teams distribute parallel for map(to : v[0:N]) reduction(+ : sum, dsum) \
    reduction(max : mx) reduction(min : mn) reduction(+ : dev_flag)
  for (int i = 0; i < N; i++) {
    sum += v[i];
    dsum += 0.5 * v[i];
    if (v[i] > mx)
      mx = v[i];
    if (v[i] < mn)
      mn = v[i];
    dev_flag += omp_is_initial_device() ? 0 : 1;
  }
  long hsum = 0;
  for (int i = 0; i < N; i++)
    hsum += v[i];
  printf("sum=%ld host_sum=%ld dsum=%.1f max=%d min=%d iterations_on_device=%d\n", sum, hsum, dsum, mx, mn,
         dev_flag);

  // product reduction with num_teams / thread_limit clauses
  long prod = 1;
#pragma omp target teams distribute parallel for num_teams(1) thread_limit(2) reduction(* : prod)
  for (int i = 1; i <= 15; i++)
    prod *= i;
  printf("15! = %ld\n", prod);

  // reduction over a plain target parallel for
  int cnt = 0;
#pragma omp target parallel for reduction(+ : cnt) map(to : v[0:N])
  for (int i = 0; i < N; i++)
    cnt += (v[i] > 0);
  int hcnt = 0;
  for (int i = 0; i < N; i++)
    hcnt += (v[i] > 0);
  printf("positives=%d host=%d\n", cnt, hcnt);
  return !(sum == hsum && cnt == hcnt && dev_flag == N);
}
