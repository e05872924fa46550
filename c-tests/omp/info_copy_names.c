// LIBOMPTARGET_INFO's copy and removal lines name what 22.1 names:
// * a copy of a list item inside a mapping (target update of a subsection,
//   exit data from a subsection) is named after the mapping (a[0:10]), not
//   the list item (a[2:3]);
// * the "Removing map entry" line gives the releasing item's size (8) with
//   the mapping's begin and name;
// * a struct's combined entry has no name: copies of the members it holds
//   are "unknown";
// * omp_get_mapped_ptr prints its look-up's "Mapping exists" line, and
//   omp_target_memcpy between the host and a device prints a copy line
//   named after the mapping its look-up of the host range lands on.
// The .env switches INFO on; stderr must equal 22.1's (stderr-same).
#include <omp.h>
#include <stdio.h>

struct S {
  int *p1;
  int *p2;
};

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  int a[10];
  for (int i = 0; i < 10; i++)
    a[i] = i;
#pragma omp target enter data map(to : a[0 : 10])
#pragma omp target update from(a[2 : 3])
#pragma omp target update to(a[2 : 3])
#pragma omp target exit data map(from : a[1 : 2])
#pragma omp target exit data map(release : a[0 : 10])
  printf("a[3] = %d, mapped %d\n", a[3], omp_target_is_present(a, dev));

  int x = 1, y[2] = {2, 3};
  struct S s = {&x, y};
#pragma omp target map(s.p1[0 : 1], s.p2[0 : 2])
  {
    *s.p1 += 10;
    s.p2[1] += 20;
  }
  printf("x = %d, y[1] = %d\n", x, y[1]);

  int v = 5;
#pragma omp target enter data map(alloc : v)
  int *dv = (int *)omp_get_mapped_ptr(&v, dev);
  omp_target_memcpy(dv, &v, sizeof(int), 0, 0, dev, host);
  int back = -1;
  omp_target_memcpy(&back, dv, sizeof(int), 0, 0, host, dev);
#pragma omp target exit data map(delete : v)
  printf("back = %d\n", back);
  return 0;
}
