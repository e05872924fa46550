// LIBOMPTARGET_INFO=42 (.env: MAPPING_EXISTS|MAPPING_CHANGED|DATA_TRANSFER)
// for pointer attachment (abi-reference 6.5, 6.8, 6.12, 8.5): the whole
// stderr (hex masked, .stderr-same) for an ATTACH entry (enter data of
// p[0:n] while p itself is mapped: the attachment is a host-to-device copy of
// 8 bytes, printed by LLVM as "Copying data from host to device ... Size=8"),
// and for a struct mapped through a mapper with a PTR_AND_OBJ member.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  int *d;
} V;
#pragma omp declare mapper(V v) map(v, v.d[0:v.n])

int main(void) {
  int n = 4;
  int *p = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    p[i] = i;
#pragma omp target enter data map(to : p)
#pragma omp target enter data map(to : p[0:n])
#pragma omp target exit data map(release : p[0:n], p)
  V v = {n, p};
#pragma omp target enter data map(to : v)
#pragma omp target exit data map(delete : v)
  printf("present: p=%d v.d=%d\n", omp_target_is_present(p, 0), omp_target_is_present(v.d, 0));
  free(p);
  return 0;
}
