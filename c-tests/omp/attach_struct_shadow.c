// Pointer inside a struct that is already mapped (abi-reference 6.7, 6.8):
// enter data map(to: s) first, then s.p[0:n] is mapped by a later construct
// and the device copy of s.p is attached to the device pointee. The attachment
// is recorded as a shadow pointer on s's entry: 'target update from(s)' copies
// s back but restores the host value of s.p, and 'target update to(s)'
// re-writes the device value of s.p on the device, so later regions still
// reach the device pointee through s.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct S {
  int n;
  int *p;
  double x;
};

static int dev, host;

static void *device_member_ptr(struct S *s) {
  void *v = NULL;
  void *dp = omp_get_mapped_ptr(&s->p, dev);
  if (!dp)
    return (void *)1;
  omp_target_memcpy(&v, dp, sizeof v, 0, 0, host, dev);
  return v;
}

int main(void) {
  dev = omp_get_default_device();
  host = omp_get_initial_device();
  struct S s;
  s.n = 5;
  s.x = 1.5;
  s.p = malloc(s.n * sizeof(int));
  for (int i = 0; i < s.n; i++)
    s.p[i] = i + 1;
  int *orig = s.p;

#pragma omp target enter data map(to : s)
  printf("struct mapped: device s.p is host address=%d pointee present=%d\n", device_member_ptr(&s) == (void *)s.p,
         omp_target_is_present(s.p, dev));
#pragma omp target enter data map(to : s.p[0:s.n])
  printf("pointee mapped: device s.p attached=%d\n", device_member_ptr(&s) == omp_get_mapped_ptr(s.p, dev));

  // device changes the struct's scalars and the pointee
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    s.x = 99.25;
    s.n = 4;
    for (int i = 0; i < 5; i++)
      s.p[i] *= 10;
    on_host = omp_is_initial_device();
  }
  printf("after region: host s.x=%.2f s.n=%d s.p[0]=%d on_host=%d\n", s.x, s.n, s.p[0], on_host);

#pragma omp target update from(s)
  printf("update from(s): s.x=%.2f s.n=%d host pointer intact=%d s.p[0]=%d (pointee not copied)\n", s.x, s.n,
         s.p == orig, s.p[0]);
  printf("device s.p still attached=%d\n", device_member_ptr(&s) == omp_get_mapped_ptr(s.p, dev));

  // host changes the scalars and the host pointee, then update to(s)
  s.x = -2.5;
  s.n = 5;
  for (int i = 0; i < 5; i++)
    s.p[i] = -100;
#pragma omp target update to(s)
  printf("update to(s): device s.p attached=%d\n", device_member_ptr(&s) == omp_get_mapped_ptr(s.p, dev));
  int sum = 0;
  double xd = 0;
#pragma omp target map(tofrom : sum, xd)
  {
    for (int i = 0; i < s.n; i++)
      sum += s.p[i];
    xd = s.x;
  }
  printf("region via device s: sum=%d (device pointee 10..50) x=%.2f\n", sum, xd);

#pragma omp target update from(s.p[0:5])
  printf("update from(s.p[0:5]): %d %d %d %d %d\n", s.p[0], s.p[1], s.p[2], s.p[3], s.p[4]);
#pragma omp target exit data map(from : s)
  printf("exit from(s): pointer intact=%d s.x=%.2f\n", s.p == orig, s.x);
#pragma omp target exit data map(delete : s.p[0:5])
  printf("present: s=%d pointee=%d\n", omp_target_is_present(&s, dev), omp_target_is_present(orig, dev));
  free(orig);
  return 0;
}
