// omp_target_memcpy_async / memset_async are deferred tasks (OpenMP 5.1
// §18.8.7): the call returns while the depend object's producer task still
// runs, the copy then sees the producer's data, and taskwait waits for it.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 64

int main(void) {
  int dev = 0, host = omp_get_initial_device();
  static int h[N], back[N];
  int *d = omp_target_alloc(sizeof h, dev);
  volatile int produced = 0;
  int returned_early = -1, rc = -1;
  omp_depend_t obj;
  int token = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(out : token) shared(produced)
    {
      usleep(300000);
      for (int i = 0; i < N; i++)
        h[i] = 100 + i;
      produced = 1;
    }
#pragma omp depobj(obj) depend(in : token)
    rc = omp_target_memcpy_async(d, h, sizeof h, 0, 0, dev, host, 1, &obj);
    returned_early = !produced;
#pragma omp taskwait
#pragma omp depobj(obj) destroy
  }
  omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);
  printf("memcpy_async: rc=%d returned before its dependence=%d back[0]=%d back[63]=%d\n", rc, returned_early, back[0],
         back[N - 1]);

  // memset_async after a producer, then a dependent memcpy_async back
  produced = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    omp_depend_t o2;
#pragma omp task depend(out : token) shared(produced)
    {
      usleep(200000);
      produced = 1;
    }
#pragma omp depobj(o2) depend(inout : token)
    void *p = omp_target_memset_async(d, 7, sizeof h, dev, 1, &o2);
    returned_early = !produced;
    rc = omp_target_memcpy_async(back, d, sizeof back, 0, 0, host, dev, 1, &o2);
#pragma omp taskwait
#pragma omp depobj(o2) destroy
    printf("memset_async: same pointer=%d returned before its dependence=%d rc=%d back[3]=%#x\n", p == d, returned_early,
           rc, back[3]);
  }
  printf("null args: memcpy_async=%d rect_async(NULL,NULL)=%d memset_async(NULL)=%p\n",
         omp_target_memcpy_async(NULL, h, 4, 0, 0, dev, host, 0, NULL),
         omp_target_memcpy_rect_async(NULL, NULL, 4, 1, NULL, NULL, NULL, NULL, NULL, dev, host, 0, NULL),
         omp_target_memset_async(NULL, 0, 4, dev, 0, NULL));
  omp_target_free(d, dev);
  return 0;
}
