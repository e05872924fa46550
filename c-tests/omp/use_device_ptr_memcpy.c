// RETURN_PARAM (abi-reference 6.2, 6.6): use_device_ptr / use_device_addr.
// A target data region with use_device_ptr(p) gives the device address, which
// is then used with omp_target_memcpy (device pointer + offsets) and
// omp_target_memcpy between two mapped arrays on the device; use_device_addr
// on an array section, on a mapped scalar and on a struct variable; use_device_ptr
// of an unmapped pointer keeps the host address (and a NULL pointer stays NULL).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 12

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++)
    a[i] = i, b[i] = -1;
  int *ha = a, *hb = b;

#pragma omp target data map(to : a[0:N]) map(tofrom : b[0:N])
  {
#pragma omp target data use_device_ptr(a, b)
    {
      printf("device pointers differ from host: %d %d\n", a != ha, b != hb);
      // device a[2..6) -> device b[0..4) with byte offsets
      int rc = omp_target_memcpy(b, a, 4 * sizeof(int), 0, 2 * sizeof(int), dev, dev);
      // host values 100.. -> device b[8..12)
      int src[4] = {100, 101, 102, 103};
      int rc2 = omp_target_memcpy(b, src, sizeof src, 8 * sizeof(int), 0, dev, host);
      printf("memcpy rc=%d %d\n", rc, rc2);
    }
    printf("host b before end (not copied yet): b[0]=%d b[8]=%d\n", b[0], b[8]);
    // the device copy is what the next region sees
    int first = 0, on_host = -1;
#pragma omp target map(from : first, on_host)
    {
      first = b[0] + b[11];
      on_host = omp_is_initial_device();
    }
    printf("region sees b[0]+b[11]=%d on_host=%d\n", first, on_host);
  }
  printf("after data end: b={");
  for (int i = 0; i < N; i++)
    printf("%d%s", b[i], i + 1 < N ? "," : "}\n");

  // use_device_addr of an array section, a scalar and a struct variable
  int arr[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int scalar = 41;
  struct {
    int k;
    double d;
  } st = {5, 0.5};
#pragma omp target data map(tofrom : arr, scalar, st)
  {
    int *dsec = NULL, *dsc = NULL;
    double *dmem = NULL;
#pragma omp target data use_device_addr(arr[2:4], scalar, st)
    {
      dsec = &arr[2];
      dsc = &scalar;
      dmem = &st.d;
    }
    printf("use_device_addr equals mapped: section=%d scalar=%d struct member=%d\n", dsec == omp_get_mapped_ptr(&arr[2], dev),
           dsc == omp_get_mapped_ptr(&scalar, dev), dmem == omp_get_mapped_ptr(&st.d, dev));
    int one = 1;
    double two = 2.25;
    omp_target_memcpy(dsc, &one, sizeof one, 0, 0, dev, host);
    omp_target_memcpy(dmem, &two, sizeof two, 0, 0, dev, host);
    omp_target_memcpy(dsec, dsec, sizeof(int), sizeof(int), 0, dev, dev); // arr[3] = arr[2] on the device
    printf("host before end: scalar=%d st.d=%.2f arr[3]=%d\n", scalar, st.d, arr[3]);
  }
  printf("after end: scalar=%d st.d=%.2f arr[3]=%d\n", scalar, st.d, arr[3]);

  // unmapped pointer and NULL pointer
  int *u = malloc(4 * sizeof(int)), *hu = u, *nul = NULL;
#pragma omp target data use_device_ptr(u, nul)
  { printf("unmapped: keeps host address=%d NULL stays NULL=%d\n", u == hu, nul == NULL); }
  // pointer into the middle of a mapped section: device address of that element
  int *mid = a + 3;
#pragma omp target data map(to : a[0:N])
  {
    int *dmid = NULL;
#pragma omp target data use_device_ptr(mid)
    { dmid = mid; }
    int v = -1;
    omp_target_memcpy(&v, dmid, sizeof v, 0, 0, host, dev);
    printf("pointer into a mapping: device value=%d equals mapped(a+3)=%d\n", v,
           (void *)dmid == omp_get_mapped_ptr(a + 3, dev));
  }
  free(u);
  free(a);
  free(b);
  return 0;
}
