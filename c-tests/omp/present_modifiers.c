// PRESENT modifier on mapped data (abi-reference 6.5, 6.9, 6.10): enter data,
// target, target data, update to/from and exit data with 'present' all succeed
// and behave like the plain forms when the data is mapped (the failing cases
// are the abort_*present* tests). Also present with a sub-section of a larger
// mapping and on a zero-length section inside a mapping.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int a[10];
  for (int i = 0; i < 10; i++)
    a[i] = i;
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(present, to : a[2:3])
  printf("present enter (refcount 2): present=%d\n", omp_target_is_present(a, dev));
  a[0] = 50; // host only
  int seen = 0, on_host = -1;
#pragma omp target map(present, tofrom : a[0:5]) map(from : seen, on_host)
  {
    seen = a[0];
    a[4] = 44;
    on_host = omp_is_initial_device();
  }
  printf("present region: device a[0]=%d host a[4]=%d on_host=%d\n", seen, a[4], on_host);
#pragma omp target update from(present : a[4:1])
  printf("update from(present): a[4]=%d\n", a[4]);
  a[9] = 90;
#pragma omp target update to(present : a[9:1])
#pragma omp target data map(present, alloc : a)
  {
#pragma omp target map(from : seen)
    { seen = a[9]; }
  }
  printf("update to(present) + data(present): device a[9]=%d\n", seen);
#pragma omp target map(present, tofrom : a[3:0]) map(from : seen)
  { seen = a[3]; }
  printf("present zero-length inside mapping: %d\n", seen);
#pragma omp target exit data map(present, release : a[2:3])
  printf("after present release: present=%d\n", omp_target_is_present(a, dev));
#pragma omp target exit data map(present, from : a)
  printf("after present from: present=%d a[0]=%d a[4]=%d\n", omp_target_is_present(a, dev), a[0], a[4]);
  return 0;
}
