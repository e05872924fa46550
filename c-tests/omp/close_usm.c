// CLOSE modifier (abi-reference 6.5 step 4, 6.13): under 'requires
// unified_shared_memory' a map without 'close' uses host memory (no entry,
// no copies), while map(close, ...) makes a real device copy: the region then
// works on that copy, host data changes only when copied back, and the entry
// is visible to omp_target_is_present. Once an entry exists (made with close),
// later maps without close reuse it. Without USM close changes nothing (a
// normal mapping) -- see close_no_usm.c.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int dev = omp_get_default_device();
  int *a = malloc(8 * sizeof(int));
  for (int i = 0; i < 8; i++)
    a[i] = i;
  int on_host = -1;
  int seen_host_write = -1;
  // without close: host memory directly
#pragma omp target map(tofrom : a[0:8]) map(tofrom : on_host)
  {
    a[0] = 100;
    on_host = omp_is_initial_device();
  }
  printf("no close: a[0]=%d on_host=%d present=%d\n", a[0], on_host, omp_target_is_present(a, dev));

  // close: a real device copy
#pragma omp target enter data map(close, to : a[0:8])
  printf("enter data close: present=%d mapped ptr differs=%d\n", omp_target_is_present(a, dev),
         omp_get_mapped_ptr(a, dev) != NULL && omp_get_mapped_ptr(a, dev) != (void *)a);
  a[1] = -1; // host only: the device copy keeps 1
#pragma omp target map(tofrom : a[0:8]) map(tofrom : seen_host_write)
  {
    seen_host_write = a[1]; // existing entry reused (no close needed)
    a[2] = 222;
  }
  printf("device copy: a[1] seen=%d host a[2]=%d (not copied: refcount 2)\n", seen_host_write, a[2]);
#pragma omp target exit data map(from : a[0:8])
  printf("after exit from: a[1]=%d a[2]=%d present=%d\n", a[1], a[2], omp_target_is_present(a, dev));

  // close on a region: device copy for the region only
  int b[4] = {1, 2, 3, 4};
#pragma omp target map(close, tofrom : b) map(tofrom : seen_host_write)
  {
    b[0] = 10;
    seen_host_write = b[3];
  }
  printf("region with close: b[0]=%d seen=%d present=%d\n", b[0], seen_host_write, omp_target_is_present(b, dev));
  // close + to only: device changes are not copied back
#pragma omp target map(close, to : b)
  { b[1] = -20; }
  printf("close, to: b[1]=%d\n", b[1]);
  free(a);
  return 0;
}
