// OMPX_HOLD (abi-reference 6.3, 6.9, 9.2): map(ompx_hold, tofrom: x) on a
// target data region, then exit data map(delete: x) inside it must not remove
// x (the hold count is not reset by a dynamic delete), and the data is still
// copied back at the end of the hold region. Hold on a target region, nested
// hold regions, hold + dynamic refs with from, and omp_target_disassociate_ptr
// refused while a hold reference exists.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  int x[4] = {1, 2, 3, 4};
#pragma omp target data map(ompx_hold, tofrom : x)
  {
#pragma omp target exit data map(delete : x)
    printf("after delete inside hold: present=%d\n", omp_target_is_present(x, dev));
#pragma omp target exit data map(from : x)
    printf("after exit from inside hold: present=%d x[0]=%d (not copied: hold ref)\n", omp_target_is_present(x, dev),
           x[0]);
    int on_host = -1;
#pragma omp target map(from : on_host)
    {
      x[0] = 10;
      on_host = omp_is_initial_device();
    }
    printf("region inside hold: host x[0]=%d on_host=%d\n", x[0], on_host);
  }
  printf("after hold region: present=%d x[0]=%d\n", omp_target_is_present(x, dev), x[0]);

  // nested hold regions: both must end
  int y = 1;
#pragma omp target data map(ompx_hold, tofrom : y)
  {
#pragma omp target data map(ompx_hold, tofrom : y)
    {
#pragma omp target map(tofrom : y)
      { y = 2; }
    }
    printf("inner hold region ended: present=%d y=%d\n", omp_target_is_present(&y, dev), y);
  }
  printf("outer hold region ended: present=%d y=%d\n", omp_target_is_present(&y, dev), y);

  // hold on a target region itself: device data removed at its end
  int z = 5;
#pragma omp target map(ompx_hold, tofrom : z)
  { z *= 3; }
  printf("hold on target: z=%d present=%d\n", z, omp_target_is_present(&z, dev));

  // dynamic ref first, then a hold region: at the hold region's end the dynamic
  // ref remains, no copy; release afterwards copies back with from
  int w = 7;
#pragma omp target enter data map(to : w)
#pragma omp target data map(ompx_hold, tofrom : w)
  {
#pragma omp target map(tofrom : w)
    { w = 70; }
  }
  printf("hold ended with dynamic ref: present=%d w=%d\n", omp_target_is_present(&w, dev), w);
#pragma omp target exit data map(from : w)
  printf("dynamic ref released: present=%d w=%d\n", omp_target_is_present(&w, dev), w);

  // disassociate refused while the hold count is non-zero
  int assoc[8] = {0};
  int *d = omp_target_alloc(sizeof assoc, dev);
  printf("associate rc=%d\n", omp_target_associate_ptr(assoc, d, sizeof assoc, 0, dev));
#pragma omp target data map(ompx_hold, alloc : assoc)
  {
    printf("disassociate during hold rc=%d\n", omp_target_disassociate_ptr(assoc, dev));
    fflush(stdout);
  }
  printf("disassociate after hold rc=%d present=%d\n", omp_target_disassociate_ptr(assoc, dev),
         omp_target_is_present(assoc, dev));
  omp_target_free(d, dev);
  (void)host;
  return 0;
}
