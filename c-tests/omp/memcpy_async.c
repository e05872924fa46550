// omp_target_memcpy_async / omp_target_memset_async (+ depend objects) and taskwait.
#include <omp.h>
#include <stdio.h>

#define N 128

int main(void) {
  int dev = 0, host = omp_get_initial_device();
  int h[N], back[N];
  for (int i = 0; i < N; i++)
    h[i] = i, back[i] = -1;
  int *d = omp_target_alloc(sizeof h, dev);
  int rc = omp_target_memcpy_async(d, h, sizeof h, 0, 0, dev, host, 0, NULL);
#pragma omp taskwait
#pragma omp target is_device_ptr(d) device(dev)
  {
    for (int i = 0; i < N; i++)
      d[i] *= 2;
  }
  rc |= omp_target_memcpy_async(back, d, sizeof back, 0, 0, host, dev, 0, NULL);
#pragma omp taskwait
  printf("rc=%d back[1]=%d back[127]=%d\n", rc, back[1], back[N - 1]);

  // with a depend object ordering two asynchronous copies
  omp_depend_t obj;
  int token = 0;
#pragma omp depobj(obj) depend(inout : token)
  omp_target_memset_async(d, 0, sizeof h, dev, 1, &obj);
  rc = omp_target_memcpy_async(back, d, sizeof back, 0, 0, host, dev, 1, &obj);
#pragma omp taskwait
#pragma omp depobj(obj) destroy
  printf("after memset+copy: rc=%d back[5]=%d back[100]=%d\n", rc, back[5], back[100]);

  // rect async
  int m[4][4], mb[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      m[i][j] = i * 4 + j, mb[i][j] = 0;
  int *dm = omp_target_alloc(sizeof m, dev);
  omp_target_memset(dm, 0, sizeof m, dev);
  size_t vol[2] = {2, 2}, off[2] = {1, 1}, dims[2] = {4, 4};
  rc = omp_target_memcpy_rect_async(dm, m, sizeof(int), 2, vol, off, off, dims, dims, dev, host, 0, NULL);
#pragma omp taskwait
  omp_target_memcpy(mb, dm, sizeof mb, 0, 0, host, dev);
  printf("rect async rc=%d: %d %d %d %d / %d %d\n", rc, mb[0][0], mb[1][1], mb[1][2], mb[2][2], mb[2][1], mb[3][3]);
  omp_target_free(dm, dev);
  omp_target_free(d, dev);
  return 0;
}
