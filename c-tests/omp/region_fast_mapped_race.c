// Target regions on the mapped launch fast path of src/api/kernel.rs
// (`launch_fast_mapped`) while other host threads' enter/exit data bring the
// mapping's count to zero and back: each round, every thread enters the
// shared array, runs a region on it (the fast path takes and gives back a
// reference), exits it with `from` (whoever leaves last copies back and
// removes), and runs a region mapping it anew (the general begin and end
// steps for the item alone). A region whose reference is the last one
// copies back and removes at its end. Which thread allocates, copies and
// deletes varies from run to run (22.1 too: c-tests/ompt/suite.divergence
// lists it as a race), the results do not.
#include <omp.h>
#include <stdio.h>

#define N 8

int main(void) {
  // Threads: each round, one thread holds an enter/exit pair of a shared
  // array around regions while others run regions on it; whoever leaves
  // last copies back. The count keeps reaching zero and coming back.
  int shared[N] = {0};
  int errors = 0;
#pragma omp parallel num_threads(4) reduction(+ : errors)
  {
    for (int r = 0; r < 300; r++) {
#pragma omp target enter data map(to : shared)
#pragma omp target map(tofrom : shared)
      {
#pragma omp atomic
        shared[omp_get_thread_num() & 7] += 0;
      }
#pragma omp target exit data map(from : shared)
      int v = 0;
#pragma omp target map(tofrom : v) map(to : shared)
      v = shared[0] + 1;
      if (v != 1)
        errors++;
    }
  }
  printf("threads: errors %d, shared mapped %d\n", errors,
         omp_target_is_present(shared, omp_get_default_device()));
  return errors != 0;
}
