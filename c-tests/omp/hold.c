// ompx_hold map-type modifier: hold reference counts survive dynamic releases.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int x[4] = {1, 2, 3, 4};
#pragma omp target data map(ompx_hold, tofrom : x)
  {
#pragma omp target exit data map(delete : x) // hold count > 0: not removed
    printf("inside hold region after delete: present=%d\n", omp_target_is_present(x, dev));
#pragma omp target enter data map(to : x)
#pragma omp target exit data map(release : x)
    printf("after dynamic enter+release: present=%d\n", omp_target_is_present(x, dev));
#pragma omp target
    { x[0] = 100; }
  }
  printf("after hold region: present=%d x[0]=%d\n", omp_target_is_present(x, dev), x[0]);

  // hold + a dynamic reference that outlives the structured region
  int y = 1;
#pragma omp target data map(ompx_hold, tofrom : y)
  {
#pragma omp target enter data map(to : y)
  }
  printf("dynamic ref outlives hold: present=%d\n", omp_target_is_present(&y, dev));
#pragma omp target exit data map(release : y)
  printf("released: present=%d\n", omp_target_is_present(&y, dev));
  return 0;
}
