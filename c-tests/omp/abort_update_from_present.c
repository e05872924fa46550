// target update from(present: a[0:4]) after the data was released
// (abi-reference 6.10): the 'present' motion-modifier message and a fatal
// error (exit 134); the plain update from() before it is a silent no-op.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[4] = {1, 2, 3, 4};
#pragma omp target enter data map(to : a)
#pragma omp target exit data map(release : a)
#pragma omp target update from(a[0:4]) // not present: ignored
  printf("plain update of unmapped data ignored, present=%d\n", omp_target_is_present(a, omp_get_default_device()));
  fflush(stdout);
#pragma omp target update from(present : a[0:4])
  printf("not reached\n");
  return 0;
}
