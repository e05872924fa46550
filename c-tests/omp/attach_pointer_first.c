// Pointer attachment (abi-reference 6.8, ATTACH / PTR_AND_OBJ): the pointer
// variable is mapped first (enter data map(to: p)), the pointee later
// (map(p[0:n])). The pointee is created by the later construct, so the
// device copy of p is attached to the device pointee; regions that map p
// itself then see the device address. The device value of p is read back
// with omp_target_memcpy from omp_get_mapped_ptr(&p).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int dev, host;

// the value the device copy of the pointer variable *pp holds
static void *device_value(void *pp) {
  void *v = NULL;
  void *dp = omp_get_mapped_ptr(pp, dev);
  if (!dp)
    return (void *)1;
  omp_target_memcpy(&v, dp, sizeof v, 0, 0, host, dev);
  return v;
}

int main(void) {
  dev = omp_get_default_device();
  host = omp_get_initial_device();
  int n = 8;
  int *p = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    p[i] = i;
  int *orig = p;

#pragma omp target enter data map(to : p)
  printf("pointer mapped: present(&p)=%d present(p)=%d device p == host p: %d\n", omp_target_is_present(&p, dev),
         omp_target_is_present(p, dev), device_value(&p) == (void *)p);

  // pointee created now: the mapped pointer is attached to it
#pragma omp target enter data map(to : p[0:n])
  printf("pointee mapped: device p == mapped(p): %d device p == host p: %d\n",
         device_value(&p) == omp_get_mapped_ptr(p, dev), device_value(&p) == (void *)p);

  for (int i = 0; i < n; i++)
    p[i] = 100 + i; // host only
  int sum = 0, on_host = -1;
  // p itself mapped (present): the region's p is the attached device pointer
#pragma omp target map(to : p) map(tofrom : sum) map(from : on_host)
  {
    for (int i = 0; i < n; i++) {
      sum += p[i];
      p[i] = -p[i];
    }
    on_host = omp_is_initial_device();
  }
  printf("region through mapped pointer: sum=%d (device copy 0..7) on_host=%d host p[1]=%d\n", sum, on_host, p[1]);

  // a region that maps p[0:n] again while present: no copy, still attached
#pragma omp target map(tofrom : p[0:n]) map(tofrom : sum)
  {
    sum = p[1];
  }
  printf("second region: device p[1]=%d host p[1]=%d\n", sum, p[1]);

#pragma omp target exit data map(from : p[0:n])
  printf("after exit from pointee: p=%d,%d,%d pointer intact=%d present(p)=%d present(&p)=%d\n", p[0], p[1], p[7],
         p == orig, omp_target_is_present(p, dev), omp_target_is_present(&p, dev));
#pragma omp target exit data map(release : p)
  printf("after release of pointer: present(&p)=%d\n", omp_target_is_present(&p, dev));

  // both in one construct, pointer listed after the pointee
  for (int i = 0; i < n; i++)
    p[i] = 1;
#pragma omp target enter data map(to : p[0:n]) map(to : p)
  printf("same construct: device p == mapped(p): %d\n", device_value(&p) == omp_get_mapped_ptr(p, dev));
#pragma omp target map(to : p) map(tofrom : sum)
  {
    sum = 0;
    for (int i = 0; i < n; i++)
      sum += p[i];
    p[0] = 42;
  }
#pragma omp target exit data map(from : p[0:n]) map(release : p)
  printf("sum=%d p[0]=%d pointer intact=%d\n", sum, p[0], p == orig);
  free(p);
  return 0;
}
