// ompx_dump_mapping_tables() prints to stdout; only empty tables here (no addresses).
#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("-- before any region\n");
  fflush(stdout);
  ompx_dump_mapping_tables();
  fflush(stdout);
  int x[4] = {0};
#pragma omp target map(tofrom : x) device(2)
  { x[0] = 1; }
  printf("-- after a region on device 2 (x[0]=%d)\n", x[0]);
  fflush(stdout);
  ompx_dump_mapping_tables();
  fflush(stdout);
  return 0;
}
