// declare target link: the global is only mapped on demand.
#include <omp.h>
#include <stdio.h>

int lvar = 5;
int larr[6] = {1, 2, 3, 4, 5, 6};
#pragma omp declare target link(lvar, larr)

int main(void) {
  int dev = omp_get_default_device();
  int r = 0, on_host = -1;
#pragma omp target map(tofrom : lvar) map(from : r, on_host)
  {
    r = lvar * 2;
    lvar = 50;
    on_host = omp_is_initial_device();
  }
  printf("r=%d lvar=%d on_host=%d\n", r, lvar, on_host);

#pragma omp target enter data map(to : larr)
  printf("present after enter: %d\n", omp_target_is_present(larr, dev));
  larr[0] = 100; // host only
#pragma omp target map(from : r)
  {
    r = larr[0] + larr[5];
    larr[1] = 20;
  }
  printf("device sees larr[0]+larr[5]=%d\n", r);
  printf("host larr[1]=%d before update\n", larr[1]);
#pragma omp target update from(larr)
  printf("host larr[1]=%d larr[0]=%d after update\n", larr[1], larr[0]);
#pragma omp target exit data map(release : larr)
  printf("present after release: %d\n", omp_target_is_present(larr, dev));

#pragma omp target data map(tofrom : larr[2:2])
  {
#pragma omp target
    { larr[2] = 300; larr[3] = 400; }
  }
  printf("section: larr[2]=%d larr[3]=%d\n", larr[2], larr[3]);
  return 0;
}
