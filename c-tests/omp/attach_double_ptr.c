// Two levels of indirection (abi-reference 6.8): int **pp with pp[0][0:n] and
// pp[1][0:n]. The row-pointer array pp[0:2] is mapped, each row is mapped as a
// pointee of a pointer that lives inside pp's device copy and gets attached.
// Host pointers stay intact; rows changed on the device are copied back.
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

int main(void) {
  dev = omp_get_default_device();
  host = omp_get_initial_device();
  int n = 4;
  int **pp = malloc(2 * sizeof(int *));
  pp[0] = malloc(n * sizeof(int));
  pp[1] = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    pp[0][i] = i, pp[1][i] = 10 + i;
  int *r0 = pp[0], *r1 = pp[1];

  // all in one region
  int on_host = -1;
#pragma omp target map(to : pp[0:2]) map(tofrom : pp[0][0:n], pp[1][0:n]) map(from : on_host)
  {
    for (int i = 0; i < n; i++) {
      pp[0][i] += 100;
      pp[1][i] += 200;
    }
    on_host = omp_is_initial_device();
  }
  printf("one region: pp[0]={%d,%d,%d,%d} pp[1]={%d,%d,%d,%d} on_host=%d rows intact=%d\n", r0[0], r0[1], r0[2],
         r0[3], r1[0], r1[1], r1[2], r1[3], on_host, pp[0] == r0 && pp[1] == r1);

  // the pointer array first, rows later (each attached into pp's device copy)
#pragma omp target enter data map(to : pp[0:2])
  printf("rows unmapped: device pp[0] is host row=%d\n", device_value(&pp[0]) == (void *)r0);
#pragma omp target enter data map(to : pp[0][0:n])
  printf("row 0 mapped: device pp[0] attached=%d device pp[1] is host row=%d\n",
         device_value(&pp[0]) == omp_get_mapped_ptr(r0, dev), device_value(&pp[1]) == (void *)r1);
#pragma omp target enter data map(to : pp[1][0:n])
  printf("row 1 mapped: device pp[1] attached=%d\n", device_value(&pp[1]) == omp_get_mapped_ptr(r1, dev));
  for (int i = 0; i < n; i++)
    r0[i] = r1[i] = -1; // host only
  int sum = 0;
  // pp used as a pointer (zero-length section of the mapped pp[0:2])
#pragma omp target map(tofrom : sum)
  {
    for (int i = 0; i < n; i++) {
      sum += pp[0][i] + pp[1][i];
      pp[1][i] = i * i;
    }
  }
  printf("device rows sum=%d (host rows are -1)\n", sum);
#pragma omp target exit data map(from : pp[1][0:n]) map(release : pp[0][0:n])
#pragma omp target exit data map(release : pp[0:2])
  printf("pp[1]={%d,%d,%d,%d} pp[0][0]=%d rows intact=%d present=%d %d %d\n", r1[0], r1[1], r1[2], r1[3], r0[0],
         pp[0] == r0 && pp[1] == r1, omp_target_is_present(pp, dev), omp_target_is_present(r0, dev),
         omp_target_is_present(r1, dev));
  free(r0);
  free(r1);
  free(pp);
  return 0;
}
