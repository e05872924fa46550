// LITERAL / IMPLICIT and defaultmap (abi-reference 6.2): implicit scalars
// (firstprivate, LITERAL), implicit arrays and structs (tofrom), and the
// defaultmap variants tofrom:scalar, to:scalar, firstprivate:aggregate,
// to:aggregate, alloc:aggregate (device data not initialised: written first),
// from:aggregate, none with explicit maps, and present:aggregate on data that
// is mapped (see abort_defaultmap_present.c for unmapped data).
#include <omp.h>
#include <stdio.h>

struct Pt {
  int x, y;
};

int main(void) {
  int dev = omp_get_default_device();
  int s = 5;
  double dd = 1.5;
  int arr[4] = {1, 2, 3, 4};
  struct Pt pt = {1, 2};
  int on_host = -1;

#pragma omp target map(from : on_host)
  {
    arr[0] = s * 10;
    pt.x = (int)(dd * 2);
    s = -1;  // firstprivate: lost
    dd = -1; // firstprivate: lost
    on_host = omp_is_initial_device();
  }
  printf("implicit: s=%d dd=%.1f arr[0]=%d pt.x=%d on_host=%d\n", s, dd, arr[0], pt.x, on_host);

#pragma omp target defaultmap(tofrom : scalar)
  {
    s = s + 1;
    dd = dd * 4;
  }
  printf("defaultmap(tofrom: scalar): s=%d dd=%.1f\n", s, dd);

  int r = 0;
#pragma omp target defaultmap(to : scalar) map(from : r)
  {
    r = s * 2;
    s = 1000; // mapped 'to': not copied back
  }
  printf("defaultmap(to: scalar): r=%d s=%d\n", r, s);

#pragma omp target defaultmap(firstprivate : aggregate) map(from : r)
  {
    r = arr[1] + pt.y;
    arr[1] = -1;
    pt.y = -1;
  }
  printf("defaultmap(firstprivate: aggregate): r=%d host arr[1]=%d pt.y=%d\n", r, arr[1], pt.y);

#pragma omp target defaultmap(to : aggregate) map(from : r)
  {
    r = arr[2] * 100 + pt.x;
    arr[2] = -1;
  }
  printf("defaultmap(to: aggregate): r=%d host arr[2]=%d\n", r, arr[2]);

#pragma omp target defaultmap(alloc : aggregate) map(from : r)
  {
    for (int i = 0; i < 4; i++)
      arr[i] = 7;
    r = arr[3];
  }
  printf("defaultmap(alloc: aggregate): r=%d host arr[3]=%d\n", r, arr[3]);

#pragma omp target defaultmap(from : aggregate)
  {
    for (int i = 0; i < 4; i++)
      arr[i] = 9 - i;
    pt.x = 90;
    pt.y = 91;
  }
  printf("defaultmap(from: aggregate): arr={%d,%d,%d,%d} pt={%d,%d}\n", arr[0], arr[1], arr[2], arr[3], pt.x, pt.y);

#pragma omp target defaultmap(none) map(tofrom : arr, s)
  {
    arr[0] = s;
    s = 12;
  }
  printf("defaultmap(none) with maps: arr[0]=%d s=%d\n", arr[0], s);

  // present: aggregate on mapped data: uses the device copies
#pragma omp target enter data map(to : arr, pt)
  arr[0] = -50; // host only
#pragma omp target defaultmap(present : aggregate) map(from : r)
  {
    r = arr[0] + pt.x;
    arr[1] = 123;
  }
  printf("defaultmap(present: aggregate): r=%d host arr[1]=%d present=%d\n", r, arr[1],
         omp_target_is_present(arr, dev));
#pragma omp target exit data map(from : arr) map(delete : pt)
  printf("after exit: arr={%d,%d,%d,%d}\n", arr[0], arr[1], arr[2], arr[3]);

  // present: scalar on a mapped scalar
#pragma omp target enter data map(to : s)
#pragma omp target defaultmap(present : scalar)
  { s += 1; }
#pragma omp target exit data map(from : s)
  printf("defaultmap(present: scalar): s=%d\n", s);
  return 0;
}
