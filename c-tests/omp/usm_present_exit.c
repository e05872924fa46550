// The `present` modifier under `requires unified_shared_memory`.
// Without a device copy (USM, no `close`), a list item that is not in the
// mapping table is used through its host address on entry *and* on exit:
// the exit of `target map(present, alloc: x)` inside `target data map(alloc: x)`
// must not run the present check against the (empty) table
// (abi-reference: targetDataEnd, unified shared memory).
#include <omp.h>
#include <stdio.h>

#pragma omp requires unified_shared_memory

int main(void) {
  int x = 1;
  int a[4] = {1, 2, 3, 4};
  int on_host = -1;
#pragma omp target data map(alloc : x)
  {
#pragma omp target map(present, alloc : x) map(tofrom : on_host)
    {
      x += 10;
      on_host = omp_is_initial_device();
    }
  }
  printf("x=%d on_host=%d\n", x, on_host);
  // The same with enter/exit data and an array section, and `present, from`.
#pragma omp target enter data map(alloc : a[0:4])
#pragma omp target map(present, tofrom : a[0:4])
  for (int i = 0; i < 4; i++)
    a[i] *= 2;
#pragma omp target exit data map(present, from : a[0:4])
  printf("a=%d %d %d %d\n", a[0], a[1], a[2], a[3]);
#pragma omp target data map(present, alloc : x)
  {
#pragma omp target map(tofrom : x)
    x += 100;
  }
  printf("x=%d\n", x);
  return 0;
}
