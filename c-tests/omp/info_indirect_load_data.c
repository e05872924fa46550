// LIBOMPTARGET_INFO (kernel arguments + data transfers) when the first
// construct loads an image that has a `declare target indirect` function.
// 22.1 reads the function's device address through its data path while
// loading the image, so INFO reports one device-to-host copy of 8 bytes;
// and it loads the image after listing the construct's arguments. Both
// orders are checked with .stderr-same (addresses masked); here a data
// region is the first construct (info_indirect_load: a kernel).
#include <omp.h>
#include <stdio.h>

int add_seven(int v) { return v + 7; }
#pragma omp declare target indirect to(add_seven)

typedef int (*fn_t)(int);

int main(void) {
  int vals[3] = {10, 20, 30}, res[3] = {0, 0, 0};
  fn_t fn = add_seven;
  int data_first = 1;
  if (data_first) {
#pragma omp target enter data map(to : vals)
  }
  int on_host = 1;
#pragma omp target map(tofrom : vals) map(from : res, on_host)
  {
    on_host = omp_is_initial_device();
    for (int i = 0; i < 3; i++)
      res[i] = fn(vals[i]);
  }
  if (data_first) {
#pragma omp target exit data map(release : vals)
  }
  printf("first construct: %s\n", data_first ? "enter data" : "kernel");
  printf("on device: %s\n", on_host ? "no" : "yes");
  printf("res: %d %d %d\n", res[0], res[1], res[2]);
  return 0;
}
