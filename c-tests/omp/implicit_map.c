// Implicit data-mapping rules: arrays tofrom, scalars firstprivate, pointers as
// zero-length sections, defaultmap, and implicit partial overlap.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int arr[8] = {0};
  int scalar = 5;
#pragma omp target
  {
    for (int i = 0; i < 8; i++)
      arr[i] = i + scalar;
    scalar = 100; // firstprivate: lost
  }
  printf("implicit array tofrom: arr[7]=%d scalar=%d\n", arr[7], scalar);

#pragma omp target defaultmap(tofrom : scalar)
  { scalar = 200; }
  printf("defaultmap(tofrom: scalar): scalar=%d\n", scalar);

  // implicit use of an array that is only partially mapped: served silently
  int big[16];
  for (int i = 0; i < 16; i++)
    big[i] = i;
#pragma omp target enter data map(to : big[0:8])
  int seen = -1;
#pragma omp target map(from : seen)
  { seen = big[3]; }
  printf("implicit partial overlap: big[3]=%d\n", seen);
#pragma omp target exit data map(delete : big[0:8])

  // pointer used without map: zero-length section, attached if present
  int *p = arr;
#pragma omp target enter data map(to : arr)
  arr[0] = -9; // host only
#pragma omp target map(from : seen)
  { seen = p[0]; }
  printf("pointer to mapped data: device p[0]=%d\n", seen);
#pragma omp target exit data map(delete : arr)
  printf("present=%d\n", omp_target_is_present(arr, dev));
  return 0;
}
