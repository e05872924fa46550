/* tiny.c - saxpy as an ompx_bare kernel: real map clauses, a target update
 * inside target data, no device runtime at all (the body uses clang's
 * <gpuintrin.h> builtins on the GPU, OpenMP team numbers on the host). */
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
#if defined(__NVPTX__) || defined(__AMDGPU__)
#include <gpuintrin.h>                  /* header-only clang builtins */
#define GID    ((long)__gpu_block_id_x() * __gpu_num_threads_x() + __gpu_thread_id_x())
#define STRIDE ((long)__gpu_num_blocks_x() * __gpu_num_threads_x())
#else                                   /* host fallback: one thread per team */
#define GID    ((long)omp_get_team_num())
#define STRIDE ((long)omp_get_num_teams())
#endif

int main(void) {
  long n = 1 << 20;
  float a = 2.0f, *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (long i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f; }
#pragma omp target data map(to: x[0:n]) map(tofrom: y[0:n])
  {
#pragma omp target teams ompx_bare num_teams(1024) thread_limit(256) firstprivate(a, n)
    for (long i = GID; i < n; i += STRIDE) y[i] = a * x[i] + y[i];
#pragma omp target update from(y[0:8])
    printf("after kernel: y[3] = %g\n", y[3]);
  }
  long bad = 0;
  for (long i = 0; i < n; i++) bad += y[i] != 2.0f * i + 1.0f;
  printf("%s (%ld bad)\n", bad ? "FAILED" : "PASSED", bad);
  return bad != 0;
}
