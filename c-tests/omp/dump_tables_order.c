// ompx_dump_mapping_tables() writes through the C stdout stream, so with
// stdout fully buffered (a pipe or a file, as in this test) its lines stay
// in the program's order: no fflush anywhere. The same
// for the program's stderr when it made stderr fully buffered too: the
// runtime's INFO lines (LIBOMPTARGET_INFO=4 dumps the tables after a
// failed construct; here INFO 0x20 copy lines) keep their place.
#include <omp.h>
#include <stdio.h>

int main(void) {
  static char errbuf[1 << 14];
  setvbuf(stderr, errbuf, _IOFBF, sizeof errbuf);
  printf("-- before any region\n");
  ompx_dump_mapping_tables();
  int x[4] = {0};
  fprintf(stderr, "-- stderr: before the region\n");
#pragma omp target map(tofrom : x) device(2)
  { x[0] = 1; }
  fprintf(stderr, "-- stderr: after the region\n");
  printf("-- after a region on device 2 (x[0]=%d)\n", x[0]);
  ompx_dump_mapping_tables();
  printf("-- end\n");
  return 0;
}
