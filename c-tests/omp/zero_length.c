// Zero-length array sections: allowed when unmapped; match a containing mapping.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int dev = omp_get_default_device();
  int *p = malloc(20 * sizeof(int));
  for (int i = 0; i < 20; i++)
    p[i] = i;
  int n = 0;
  // zero-length of unmapped memory: no error, nothing mapped
#pragma omp target enter data map(to : p[0:n])
  printf("zero-length enter of unmapped: present=%d\n", omp_target_is_present(p, dev));
#pragma omp target exit data map(from : p[0:n])

#pragma omp target enter data map(to : p[5:10])
  int *dp = omp_get_mapped_ptr(p + 5, dev);
  int got = 0;
  // p[0:0] lies between the base (p) and begin (p+5) of the mapping: it is found
#pragma omp target map(tofrom : p[0:0]) map(from : got)
  { got = p[7]; }
  printf("zero-length section attached to existing mapping: p[7]=%d\n", got);
  p[7] = 700; // host only
#pragma omp target map(tofrom : p[7:0]) map(from : got)
  { got = p[7]; }
  printf("device still has old p[7]=%d mapped ptr unchanged=%d\n", got, dp == omp_get_mapped_ptr(p + 5, dev));
#pragma omp target exit data map(release : p[5:10])
  printf("present after release=%d\n", omp_target_is_present(p + 5, dev));
  free(p);
  return 0;
}
