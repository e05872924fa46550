// omp_get_device_num() in regions of a library loaded with dlopen, three
// dlopen/dlclose cycles, with the program's own image loaded alongside:
// every load of the library's image on every host device
// is bound to that device's number again. 22.1 answers the initial device's
// number everywhere (device_num_dlopen.divergence).
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

typedef int (*num_fn)(int);

static int main_region(int d) {
  int r = -99;
  #pragma omp target device(d) map(from: r)
  r = omp_get_device_num();
  return r;
}

int main(void) {
  int n = omp_get_num_devices();
  for (int cycle = 0; cycle < 3; cycle++) {
    void *h = dlopen("./dl_devnum.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("dlopen failed: %s\n", dlerror());
      return 1;
    }
    num_fn lib = (num_fn)dlsym(h, "lib_device_num");
    if (!lib) {
      printf("dlsym failed\n");
      return 1;
    }
    printf("cycle %d:", cycle);
    for (int d = 0; d < n; d++)
      printf(" [%d] lib %d main %d", d, lib(d), main_region(d));
    printf("\n");
    dlclose(h);
  }
  return 0;
}
