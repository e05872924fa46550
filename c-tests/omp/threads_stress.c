// Thread safety of the mapping table and launches (abi-reference 6.3, 6.5,
// 6.9): 8 host threads (omp parallel num_threads(8)), each doing 600
// iterations of: a region on its own slice of a shared array that stays
// mapped (refcount churn on one shared entry), an enter/exit data pair on the
// whole shared array, a region that adds to a shared device counter with
// 'atomic', and a region on thread-private data that is created and deleted
// every time (plus an enter/update/exit sequence on other private data).
// Results are deterministic sums; every region checks it runs on the device.
#include <omp.h>
#include <stdio.h>

#define T 8
#define ITER 600
#define W 64

static int shared_acc[T][W];
static int counter[1];

int main(void) {
  int dev = omp_get_default_device();
#pragma omp target enter data map(to : shared_acc, counter)
  int bad[T] = {0};
  long priv_sums[T] = {0};
#pragma omp parallel num_threads(T)
  {
    int t = omp_get_thread_num();
    int nthr = omp_get_num_threads();
    for (int tt = t; tt < T; tt += nthr) { // works also if fewer threads are given
      int priv[32];
      int other[16];
      for (int i = 0; i < 32; i++)
        priv[i] = 0;
      for (int i = 0; i < 16; i++)
        other[i] = tt;
      for (int it = 0; it < ITER; it++) {
        int on_host = -1;
#pragma omp target map(tofrom : shared_acc[tt][0:W]) map(from : on_host)
        {
          for (int i = 0; i < W; i++)
            shared_acc[tt][i] += 1;
          on_host = omp_is_initial_device();
        }
        bad[tt] += on_host != 0;
#pragma omp target enter data map(to : shared_acc)
#pragma omp target exit data map(release : shared_acc)
#pragma omp target map(alloc : counter)
        {
#pragma omp atomic update
          counter[0] += 1;
        }
#pragma omp target map(tofrom : priv)
        {
          for (int i = 0; i < 32; i++)
            priv[i] += i;
        }
        if (it % 50 == 0) {
#pragma omp target enter data map(to : other)
#pragma omp target map(alloc : other)
          {
            for (int i = 0; i < 16; i++)
              other[i] += 1;
          }
#pragma omp target update from(other[0:8])
#pragma omp target exit data map(from : other)
        }
      }
      long s = 0;
      for (int i = 0; i < 32; i++)
        s += priv[i];
      for (int i = 0; i < 16; i++)
        s += other[i];
      priv_sums[tt] = s;
    }
  }
#pragma omp target exit data map(from : shared_acc, counter)
  int ok = 1;
  for (int t = 0; t < T; t++)
    for (int i = 0; i < W; i++)
      if (shared_acc[t][i] != ITER)
        ok = 0;
  printf("shared slices all %d: %d\n", ITER, ok);
  printf("device atomic counter=%d (expected %d)\n", counter[0], T * ITER);
  for (int t = 0; t < T; t++)
    printf("thread-task %d: private sum=%ld bad=%d\n", t, priv_sums[t], bad[t]);
  printf("present after: %d %d\n", omp_target_is_present(shared_acc, dev), omp_target_is_present(counter, dev));
  return 0;
}
