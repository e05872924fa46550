// use_device_ptr / use_device_addr / is_device_ptr / has_device_addr.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16

static void fill_on_device(int *dp, int n, int v) {
#pragma omp target is_device_ptr(dp)
  {
    for (int i = 0; i < n; i++)
      dp[i] = v + i;
  }
}

int main(void) {
  int dev = omp_get_default_device();
  int *p = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    p[i] = 0;
  int a[N];
  for (int i = 0; i < N; i++)
    a[i] = 0;

#pragma omp target data map(tofrom : p[0:N])
  {
    int *host_p = p;
    int same = -1, matches_mapped = -1;
#pragma omp target data use_device_ptr(p)
    {
      same = (p == host_p);
      matches_mapped = (p == (int *)omp_get_mapped_ptr(host_p, dev));
      fill_on_device(p, N, 100);
    }
    printf("use_device_ptr: differs from host=%d equals omp_get_mapped_ptr=%d restored=%d\n", !same,
           matches_mapped, p == host_p);
    printf("host copy before region end: p[3]=%d\n", p[3]);
  }
  printf("after data end: p[3]=%d\n", p[3]);

#pragma omp target data map(tofrom : a)
  {
    int *dev_a = NULL;
#pragma omp target data use_device_addr(a)
    { dev_a = &a[0]; }
    printf("use_device_addr differs from host=%d equals mapped=%d\n", dev_a != &a[0],
           dev_a == omp_get_mapped_ptr(a, dev));
    fill_on_device(dev_a, N, 7);
  }
  printf("a[0]=%d a[15]=%d\n", a[0], a[N - 1]);

  // use_device_ptr of an unmapped pointer keeps the host address
  int *q = malloc(4 * sizeof(int));
  int *q_host = q;
#pragma omp target data use_device_ptr(q)
  { printf("unmapped use_device_ptr keeps host address=%d\n", q == q_host); }

  // omp_target_alloc'd memory with is_device_ptr and has_device_addr
  int *d = omp_target_alloc(N * sizeof(int), dev);
  fill_on_device(d, N, 1000);
  int out[N];
  omp_target_memcpy(out, d, sizeof out, 0, 0, omp_get_initial_device(), dev);
  printf("target_alloc + is_device_ptr: out[0]=%d out[15]=%d\n", out[0], out[N - 1]);
  int sum = 0;
#pragma omp target has_device_addr(d[0:N]) map(tofrom : sum)
  {
    for (int i = 0; i < N; i++)
      sum += d[i];
  }
  printf("has_device_addr sum=%d\n", sum);
  omp_target_free(d, dev);
  free(q);
  free(p);
  return 0;
}
