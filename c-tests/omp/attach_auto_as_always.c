// LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS=1 (.env, abi-reference 6.8 and the
// environment table): every ATTACH entry attaches, so map(to: q[0:n]) of a
// present pointee re-attaches an already mapped pointer variable, unlike
// attach_always.c (same program, default setting).
// --- original description (default setting):
// entry attaches only if the pointer or the pointee was allocated by the same
// construct (attach "auto"), or the ATTACH entry itself carries ALWAYS. clang 22
// emits map(always, to: q[0:n]) as (q, q, n*4, ALWAYS|TO) + (&q, q, 8, ATTACH)
// without ALWAYS on the ATTACH entry, so LLVM 22.1 does NOT re-attach an
// already mapped pointer there (only the pointee is re-copied). Re-mapping the
// pointer variable together with its pointee attaches it. The device value of
// the mapped pointer is read with omp_target_memcpy; unattached device pointers
// are never dereferenced in a region. See attach_auto_as_always.c for
// LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS=1.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int dev, host;

static void *device_value(void *pp) {
  void *v = NULL;
  void *dp = omp_get_mapped_ptr(pp, dev);
  if (!dp)
    return (void *)1;
  omp_target_memcpy(&v, dp, sizeof v, 0, 0, host, dev);
  return v;
}

static void report(const char *what, int **pq) {
  void *dv = device_value(pq);
  printf("%-36s device q: attached=%d host address=%d\n", what, dv == omp_get_mapped_ptr(*pq, dev),
         dv == (void *)*pq);
}

static int device_sum(int *q, int n) {
  int sum = 0;
  // q here is the region's private pointer initialised from the mapped pointee
#pragma omp target map(to : q[0:n]) map(tofrom : sum)
  {
    for (int i = 0; i < n; i++)
      sum += q[i];
  }
  return sum;
}

int main(void) {
  dev = omp_get_default_device();
  host = omp_get_initial_device();
  int n = 6;
  int *q = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    q[i] = i;

#pragma omp target enter data map(to : q[0:n])
#pragma omp target enter data map(to : q)
  report("pointee, then pointer:", &q);
#pragma omp target enter data map(to : q[0:n])
  report("map(to: q[0:n]) again:", &q);
  for (int i = 0; i < n; i++)
    q[i] = 10 * i; // host only
  printf("device sum before always: %d\n", device_sum(q, n));
#pragma omp target enter data map(always, to : q[0:n])
  report("map(always, to: q[0:n]):", &q);
  printf("device sum after always (pointee re-copied): %d\n", device_sum(q, n));

  // pointer variable re-created together with the pointee: attached
#pragma omp target exit data map(release : q)
  printf("pointer released: present(&q)=%d\n", omp_target_is_present(&q, dev));
#pragma omp target enter data map(to : q) map(to : q[0:n])
  report("pointer re-mapped with pointee:", &q);
  int sum = 0, on_host = -1;
#pragma omp target map(to : q) map(tofrom : sum) map(from : on_host)
  {
    for (int i = 0; i < n; i++)
      sum += q[i];
    q[0] = -1;
    on_host = omp_is_initial_device();
  }
  printf("region via attached q: sum=%d on_host=%d host q[0]=%d\n", sum, on_host, q[0]);

  // re-point host q to a second mapped buffer r
  int *r = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    r[i] = 1000 + i;
#pragma omp target enter data map(to : r[0:n])
  int *saved = q;
  q = r;
  report("host q re-pointed to mapped r:", &q);
#pragma omp target enter data map(always, to : q[0:n])
  report("map(always, to: q[0:n]) (q == r):", &q);
#pragma omp target exit data map(release : q)
#pragma omp target enter data map(to : q) map(to : q[0:n])
  report("pointer re-mapped with pointee r:", &q);
#pragma omp target map(to : q) map(tofrom : sum)
  {
    sum = q[n - 1];
    q[n - 1] = 7;
  }
  printf("region via q now sees r: %d\n", sum);
#pragma omp target update from(r[0:n])
  printf("r[%d]=%d r[0]=%d\n", n - 1, r[n - 1], r[0]);
#pragma omp target exit data map(delete : r[0:n]) map(delete : q)
  q = saved;
#pragma omp target update from(q[0:n])
  printf("q[0]=%d q[5]=%d\n", q[0], q[5]);
#pragma omp target exit data map(delete : q[0:n])
  printf("present after delete: %d %d %d\n", omp_target_is_present(q, dev), omp_target_is_present(&q, dev),
         omp_target_is_present(r, dev));
  free(r);
  free(q);
  return 0;
}
