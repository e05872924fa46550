// A shared library with its own target regions (dl_kernels.so, its own
// __tgt_bin_desc), loaded at run time with dlopen; the program also has regions.
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

typedef int (*scale_fn)(int *, int, int);
typedef int (*getter_fn)(void);

static int main_region(int v) {
  int r = 0, on_host = -1;
#pragma omp target map(from : r, on_host)
  {
    r = v + 1;
    on_host = omp_is_initial_device();
  }
  return on_host == 0 ? r : -1;
}

int main(void) {
  printf("main region before dlopen: %d\n", main_region(1));
  void *h = dlopen("./dl_kernels.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  scale_fn scale = (scale_fn)dlsym(h, "lib_scale");
  getter_fn counter = (getter_fn)dlsym(h, "lib_device_counter");
  if (!scale || !counter) {
    printf("dlsym failed\n");
    return 1;
  }
  int a[8];
  for (int i = 0; i < 8; i++)
    a[i] = i;
  int on_dev = scale(a, 8, 3);
  printf("lib_scale: on_device=%d a[1]=%d a[7]=%d\n", on_dev, a[1], a[7]);
  printf("lib_device_counter: %d then %d\n", counter(), counter());
  printf("main region after dlopen: %d\n", main_region(2));
  // data mapped by the program is visible to the library's regions (same device table)
#pragma omp target enter data map(to : a)
  a[0] = 1000; // host only
  scale(a, 1, 1); // the library maps a[0:1]: present, no copy
  int seen = 0;
#pragma omp target map(from : seen)
  { seen = a[0]; }
  printf("shared mapping: device a[0]=%d host a[0]=%d\n", seen, a[0]);
#pragma omp target exit data map(release : a)
  dlclose(h);
  printf("main region after dlclose: %d\n", main_region(3));

  // load it again: a second registration of the same library
  h = dlopen("./dl_kernels.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen #2 failed: %s\n", dlerror());
    return 1;
  }
  scale = (scale_fn)dlsym(h, "lib_scale");
  for (int i = 0; i < 8; i++)
    a[i] = i;
  on_dev = scale(a, 8, 5);
  printf("reopened lib_scale: on_device=%d a[7]=%d\n", on_dev, a[7]);
  dlclose(h);
  printf("main region at end: %d\n", main_region(4));
  return 0;
}
