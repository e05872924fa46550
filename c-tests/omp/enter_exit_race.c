// Threads mapping one counter that nobody else holds, with target enter
// data / exit data around a region that increments it: its count goes
// 0 -> 1 -> 0 again and again (the general path: a new mapping, the last
// release copied back and removed) while other threads take and drop
// references of it (the fast path of src/api/data.rs: a live count stepped
// up or down). No increment may be lost (in the enter/exit
// form). Separate from enter_exit_fast.c because how often the mapping is
// created and removed varies from run to run (c-tests/ompt-suite.sh lists
// it as a race).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = omp_get_default_device();
  int counter = 0;
#pragma omp parallel num_threads(4)
  for (int k = 0; k < 1000; k++) {
#pragma omp target enter data map(to : counter)
#pragma omp target map(alloc : counter)
    {
#pragma omp atomic
      counter++;
    }
#pragma omp target exit data map(from : counter)
  }
  printf("counter: %d, mapped %d\n", counter, omp_target_is_present(&counter, dev));
  return 0;
}
