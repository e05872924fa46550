// LIBOMPTARGET_INFO=1 (KERNEL_ARGS, .env) argument lines for ATTACH entries
// (abi-reference 6.2, 8.5): LLVM 22.1 prints an ATTACH (0x4000) entry as
// 'attach(<name>)[8] ' -- for a region with map(tofrom: p[0:n]), for
// enter/exit data of a pointee, and for a struct's pointer member section.
// (abi-reference 8.5 lists tofrom/to/from/private/firstprivate/alloc/
// use_address only; 'attach' is LLVM 22.1's label for 0x4000.) The whole
// stderr is compared (.stderr-same): it has no addresses at INFO=1.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct S {
  int n;
  int *p;
};

int main(void) {
  int n = 4;
  int *p = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    p[i] = i;
  int on_host = -1;
#pragma omp target map(tofrom : p[0:n]) map(from : on_host)
  {
    p[0] = 10;
    on_host = omp_is_initial_device();
  }
#pragma omp target enter data map(to : p[0:n])
#pragma omp target exit data map(from : p[0:n])
  struct S s = {n, p};
#pragma omp target map(tofrom : s.n, s.p[0:n])
  { s.p[1] = s.n; }
  printf("p={%d,%d,%d,%d} on_host=%d\n", p[0], p[1], p[2], p[3], on_host);
  free(p);
  return 0;
}
