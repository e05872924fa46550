// LIBOMPTARGET_INFO=59 (info_messages.env: KERNEL_ARGS|MAPPING_EXISTS|MAPPING_CHANGED|
// PLUGIN_KERNEL|DATA_TRANSFER): the info lines on stderr are checked in
// info_messages.stderr-contains (pointer values excluded).
#include <stdio.h>

int main(void) {
  int a[10];
  for (int i = 0; i < 10; i++)
    a[i] = i;
  int x = 3;
#pragma omp target map(tofrom : a[0:10]) firstprivate(x)
  {
    for (int i = 0; i < 10; i++)
      a[i] += x;
  }
#pragma omp target enter data map(to : a[0:10])
#pragma omp target update from(a[0:10])
#pragma omp target exit data map(release : a[0:10])
  printf("a[9]=%d\n", a[9]);
  return 0;
}
