// CLOSE modifier without unified shared memory (abi-reference 6.1, 6.5): the
// map-type bit 0x400 changes nothing -- the mapping, reference counts and
// copies are those of the same map without 'close' (combined with always and
// present too).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int a[4] = {1, 2, 3, 4};
  int on_host = -1;
#pragma omp target map(close, tofrom : a) map(from : on_host)
  {
    a[0] = 10;
    on_host = omp_is_initial_device();
  }
  printf("close tofrom: a[0]=%d on_host=%d present=%d\n", a[0], on_host, omp_target_is_present(a, dev));
#pragma omp target enter data map(close, to : a)
  a[1] = -2; // host only
  int seen = 0;
#pragma omp target map(close, tofrom : a) map(from : seen)
  {
    seen = a[1];
    a[2] = 30;
  }
  printf("present: seen a[1]=%d host a[2]=%d\n", seen, a[2]);
#pragma omp target map(always, close, present, tofrom : a)
  { a[3] = 40; }
  printf("always close present: a={%d,%d,%d,%d}\n", a[0], a[1], a[2], a[3]);
#pragma omp target exit data map(close, release : a)
  printf("after release: present=%d\n", omp_target_is_present(a, dev));
  return 0;
}
