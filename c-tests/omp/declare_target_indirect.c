// declare target indirect: host function pointers called inside regions
// (the runtime reads the device function addresses of INDIRECT entries).
#include <omp.h>
#include <stdio.h>

#pragma omp begin declare target indirect
int add1(int x) { return x + 1; }
int twice(int x) { return 2 * x; }
int square(int x) { return x * x; }
#pragma omp end declare target

typedef int (*fn_t)(int);

int main(void) {
  fn_t fns[3] = {add1, twice, square};
  int r[3] = {0, 0, 0};
  int on_host = -1;
#pragma omp target map(tofrom : r, on_host) map(to : fns)
  {
    for (int i = 0; i < 3; i++)
      r[i] = fns[i](7);
    on_host = omp_is_initial_device();
  }
  printf("indirect calls: %d %d %d on_host=%d\n", r[0], r[1], r[2], on_host);
  fn_t f = square;
  int v = 0;
#pragma omp target map(from : v) device(3)
  { v = f(12); }
  printf("firstprivate function pointer on device 3: %d\n", v);
  return 0;
}
