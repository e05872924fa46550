// A target region in an atexit handler registered by main (runs before the
// runtime's own unregistration, which was registered earlier).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int data[4] = {1, 2, 3, 4};

static void at_exit_handler(void) {
  int on_host = -1;
#pragma omp target map(tofrom : data, on_host)
  {
    for (int i = 0; i < 4; i++)
      data[i] *= 10;
    on_host = omp_is_initial_device();
  }
  printf("atexit: data[3]=%d on_host=%d\n", data[3], on_host);
  fflush(stdout);
}

int main(void) {
  atexit(at_exit_handler);
#pragma omp target map(tofrom : data)
  {
    for (int i = 0; i < 4; i++)
      data[i] += 1;
  }
  printf("main: data[0]=%d\n", data[0]);
  // still mapped when main returns: enter data without exit
#pragma omp target enter data map(to : data)
  return 0;
}
