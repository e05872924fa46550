// requires unified_shared_memory on the host plugin: no device copies are made,
// regions use host memory directly; declare-target globals go through the host copy.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#pragma omp requires unified_shared_memory

int g = 5;
#pragma omp declare target to(g)

int main(void) {
  int *p = malloc(4 * sizeof(int));
  for (int i = 0; i < 4; i++)
    p[i] = i;
  int on_host = -1;
#pragma omp target map(tofrom : on_host)
  {
    p[0] = 100; // host memory, no mapping needed
    g = 6;
    on_host = omp_is_initial_device();
  }
  printf("p[0]=%d g=%d on_host=%d\n", p[0], g, on_host);
#pragma omp target enter data map(to : p[0:4])
  printf("enter data under USM: is_present=%d mapped_ptr null=%d\n", omp_target_is_present(p, 0),
         omp_get_mapped_ptr(p, 0) == NULL);
  p[1] = 11;
  int seen = 0;
#pragma omp target map(tofrom : seen)
  { seen = p[1]; }
  printf("device sees host write: %d\n", seen);
#pragma omp target exit data map(from : p[0:4])
  free(p);
  return 0;
}
