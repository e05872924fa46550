// OpenMP 5.2 'declare target enter' (built with -fopenmp-version=52, see .flags).
#include <omp.h>
#include <stdio.h>

int counter = 1;
long table[5] = {1, 1, 2, 3, 5};
#pragma omp declare target enter(counter, table)

#pragma omp begin declare target
long fib_next(int i) { return table[i - 1] + table[i - 2]; }
#pragma omp end declare target

int main(void) {
  long r = 0;
  int on_host = -1;
#pragma omp target map(from : r, on_host)
  {
    counter += 1;
    r = fib_next(4) + counter;
    on_host = omp_is_initial_device();
  }
  printf("r=%ld host counter=%d on_host=%d\n", r, counter, on_host);
#pragma omp target update from(counter)
  printf("counter after update=%d present=%d\n", counter,
         omp_target_is_present(&counter, omp_get_default_device()));
  table[4] = 100;
#pragma omp target update to(table[4:1])
#pragma omp target map(from : r)
  { r = table[4]; }
  printf("table[4] on device=%ld\n", r);
  return 0;
}
