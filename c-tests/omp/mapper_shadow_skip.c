// Minimal case of the shadow-pointer copy skip (abi-reference 6.5 step 8,
// 6.12): v is mapped with enter data through its default mapper, which
// attaches v.d on the device (a shadow pointer on v's entry at offset 8). A
// later region maps v implicitly through the mapper; the mapper's member
// component for v reuses the entry with total refcount 1, so it counts as
// "new" and has TO -- but LLVM skips the copy because a shadow pointer lies
// inside [&v, &v + sizeof v) (not only at its first byte). Copying would
// overwrite the attached device pointer with the host pointer, and the kernel
// would then read and write the host array instead of the device copy.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  int *d;
} V;
#pragma omp declare mapper(V v) map(v, v.d[0:v.n])

int main(void) {
  V v;
  v.n = 4;
  v.d = malloc(4 * sizeof(int));
  for (int i = 0; i < 4; i++)
    v.d[i] = i;
#pragma omp target enter data map(to : v)
  v.d[0] = 100; // host only
  int seen = -1, on_host = -1;
#pragma omp target map(from : seen, on_host)
  {
    seen = v.d[0];
    v.d[1] = -1;
    on_host = omp_is_initial_device();
  }
  printf("device v.d[0]=%d (device copy: 0) host v.d[1]=%d (must stay 1) on_host=%d\n", seen, v.d[1], on_host);
#pragma omp target update from(v)
  printf("after update from(v): v.d={%d,%d,%d,%d}\n", v.d[0], v.d[1], v.d[2], v.d[3]);
  free(v.d);
  return 0;
}
