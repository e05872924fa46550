// Zero-length array sections (abi-reference 6.4 Size==0, 6.5 step 7, 6.9,
// 6.10): the value a pointer gets in a region for p[k:0] -- the device address
// when p+k lies inside a mapping (or between its base and begin), the host
// address when unmapped or exactly at the end of a mapping -- and
// zero-length enter/exit/update/use_device_ptr: they never create entries or
// copy data, but a zero-length exit data inside a mapping finds it and
// decrements its reference count. The device value of p is printed as a
// comparison only.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int dev;

// what p+k is inside a region that maps p[k:0]
static const char *region_view(int *p, int k) {
  uintptr_t got = 0;
#pragma omp target map(tofrom : p[k:0]) map(from : got)
  { got = (uintptr_t)(p + k); }
  if (got == (uintptr_t)(p + k))
    return "host address";
  if ((void *)got == omp_get_mapped_ptr(p + k, dev))
    return "device address";
  return "other";
}

int main(void) {
  dev = omp_get_default_device();
  int *p = malloc(32 * sizeof(int));
  for (int i = 0; i < 32; i++)
    p[i] = i;
  printf("unmapped p[0:0]: %s\n", region_view(p, 0));
#pragma omp target enter data map(to : p[0:0])
#pragma omp target update to(p[0:0])
#pragma omp target exit data map(from : p[0:0])
  printf("zero-length enter/update/exit of unmapped: present=%d\n", omp_target_is_present(p, dev));

#pragma omp target enter data map(to : p[8:10]) // [8,18)
  printf("p[8:10] mapped\n");
  printf("p[8:0] (begin):   %s\n", region_view(p, 8));
  printf("p[12:0] (inside): %s\n", region_view(p, 12));
  printf("p[17:0] (last):   %s\n", region_view(p, 17));
  printf("p[18:0] (end):    %s\n", region_view(p, 18));
  printf("p[20:0] (after):  %s\n", region_view(p, 20));
  // between base (p) and begin (p+8): counted as contained (base lookup); the
  // device value is the mapping's device address for that host address (it
  // lies before the allocation, so it is only compared, never dereferenced)
  uintptr_t got = 0;
#pragma omp target map(tofrom : p[3:0]) map(from : got)
  { got = (uintptr_t)(p + 3); }
  printf("p[3:0] (before begin): %s\n",
         got == (uintptr_t)(p + 3)
             ? "host address"
             : (got == (uintptr_t)omp_get_mapped_ptr(p + 8, dev) - 5 * sizeof(int) ? "device base + offset" : "other"));

  // zero-length update: no copy; zero-length exit data inside the mapping
  // finds it and decrements its reference count (no copy: 0 bytes)
#pragma omp target enter data map(to : p[8:10]) // refcount 2
  p[10] = -10;                                   // host only
#pragma omp target update from(p[9:0])
#pragma omp target update to(p[10:0])
  printf("after zero-length updates: host p[10]=%d\n", p[10]);
#pragma omp target exit data map(delete : p[30:0])
  printf("after exit of p[30:0] (outside): present=%d\n", omp_target_is_present(p + 8, dev));
#pragma omp target exit data map(from : p[10:0])
  printf("after exit of p[10:0]: present=%d host p[10]=%d\n", omp_target_is_present(p + 8, dev), p[10]);
  int seen = 0;
#pragma omp target map(tofrom : p[0:0]) map(from : seen)
  { seen = p[10]; }
  printf("device p[10]=%d\n", seen);

  // use_device_ptr of a pointer to an element inside the mapping
  int *q = p + 12;
  int *dq = NULL;
#pragma omp target data map(tofrom : q[0:0]) use_device_ptr(q)
  { dq = q; }
  printf("use_device_ptr with q[0:0]: device address=%d\n", (void *)dq == omp_get_mapped_ptr(p + 12, dev));
#pragma omp target exit data map(from : p[8:10])
  printf("after exit from: p[10]=%d present=%d\n", p[10], omp_target_is_present(p + 8, dev));

  // zero-length section of a struct's pointer member where the struct is mapped
  struct {
    int n;
    int *data;
  } s = {0, p};
#pragma omp target map(tofrom : s) map(tofrom : s.data[0:s.n]) map(from : got)
  { got = (uintptr_t)s.data; }
  printf("s.data[0:0] unmapped: %s\n", got == (uintptr_t)p ? "host address" : "other");
  free(p);
  return 0;
}
