/* From a real program: a metadirective whose selector is
 * false when compiling for the host and true when compiling the device image
 * (isa(popcnt): the device code is built with -mpopcnt, see the .flags) makes
 * the host register an offload entry for the default variant's region while
 * the image holds only the other variant's kernel. LLVM 22.1 reports "Failed
 * to load kernel __omp_offloading_..." when the image is loaded and runs the
 * program's other regions; only a launch of that region fails (see
 * metadirective_missing_launch: exit 134). This program never reaches it. */
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argv;
  int a[8] = {0}, initial = -1;
  #pragma omp target map(from: initial) map(tofrom: a)
  {
    initial = omp_is_initial_device();
    for (int i = 0; i < 8; i++) a[i] = 2 * i;
  }
  printf("region on the device: initial=%d a[7]=%d\n", initial, a[7]);
#ifdef LAUNCH_MISSING
  int run = 1;
#else
  int run = argc > 100;
#endif
  fflush(stdout);
  if (run) {
    #pragma omp metadirective when(device={isa(popcnt)}: target teams distribute parallel for map(tofrom: a)) \
        default(target map(tofrom: a))
    for (int i = 0; i < 8; i++) a[i] = i;
  }
  printf("a[7]=%d\n", a[7]);
  return 0;
}
