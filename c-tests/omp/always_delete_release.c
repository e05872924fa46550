// always / delete / release map-type modifiers and their effect on refcounts.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int a[4] = {1, 2, 3, 4};
  int seen = 0;

#pragma omp target enter data map(to : a)
  a[0] = 10;
  // 'always' forces the copy although a is present
#pragma omp target map(always, to : a) map(from : seen)
  { seen = a[0]; }
  printf("always to: device a[0]=%d\n", seen);
#pragma omp target
  { a[1] = 20; }
  // without always: not the last reference, no copy back
#pragma omp target map(from : a)
  { a[2] = 30; }
  printf("plain from while present: a[1]=%d a[2]=%d\n", a[1], a[2]);
  // always from: copies back even though a stays mapped
#pragma omp target map(always, from : a)
  { a[3] = 40; }
  printf("always from: a=%d,%d,%d,%d present=%d\n", a[0], a[1], a[2], a[3], omp_target_is_present(a, dev));

  // raise the refcount to 3 and delete: removed at once
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a)
#pragma omp target exit data map(delete : a)
  printf("after delete: present=%d\n", omp_target_is_present(a, dev));

  // release decrements only
  int b = 5;
#pragma omp target enter data map(to : b)
#pragma omp target enter data map(to : b)
#pragma omp target exit data map(release : b)
  printf("after 1 release of 2: present=%d\n", omp_target_is_present(&b, dev));
#pragma omp target exit data map(release : b)
  printf("after 2 releases: present=%d\n", omp_target_is_present(&b, dev));
  // release/delete of something not mapped is ignored
#pragma omp target exit data map(release : b)
#pragma omp target exit data map(delete : b)
  printf("release/delete of unmapped data ignored: present=%d\n", omp_target_is_present(&b, dev));

  // delete with from: data removed, not copied back (delete has no from)
  int c = 1;
#pragma omp target enter data map(to : c)
#pragma omp target map(tofrom : c) // present: not copied back here
  { c = 2; }
#pragma omp target exit data map(delete : c)
  printf("delete does not copy: c=%d\n", c);

  // always tofrom on a region
  int d = 3;
#pragma omp target enter data map(to : d)
  d = 4;
#pragma omp target map(always, tofrom : d)
  { d = d * 10; }
  printf("always tofrom: d=%d\n", d);
#pragma omp target exit data map(release : d)
  printf("final present d=%d\n", omp_target_is_present(&d, dev));
  return 0;
}
