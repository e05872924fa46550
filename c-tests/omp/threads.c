// Several host threads launching target regions concurrently, on all devices.
#include <omp.h>
#include <stdio.h>

#define T 8
#define N 1000

int main(void) {
  static int buf[T][N];
  long sums[T];
  int nd = omp_get_num_devices();
#pragma omp parallel for num_threads(4) schedule(static, 1)
  for (int t = 0; t < T; t++) {
    int dev = t % nd;
    for (int i = 0; i < N; i++)
      buf[t][i] = t;
    long s = 0;
    for (int rep = 0; rep < 5; rep++) {
#pragma omp target device(dev) map(tofrom : buf[t][0:N])
      {
        for (int i = 0; i < N; i++)
          buf[t][i] += 1;
      }
    }
#pragma omp target device(dev) map(to : buf[t][0:N]) map(tofrom : s)
    {
      for (int i = 0; i < N; i++)
        s += buf[t][i];
    }
    sums[t] = s;
  }
  for (int t = 0; t < T; t++)
    printf("thread-task %d: sum=%ld\n", t, sums[t]);

  // concurrent enter/exit data of the same variable from many threads
  int shared_x[16] = {0};
#pragma omp parallel num_threads(4)
  {
    for (int k = 0; k < 50; k++) {
#pragma omp target enter data map(to : shared_x)
#pragma omp target exit data map(release : shared_x)
    }
  }
  printf("after concurrent enter/exit: present=%d\n", omp_target_is_present(shared_x, omp_get_default_device()));
  return 0;
}
