// A dlopen'ed library (dl_globals.so) with its own declare target globals
// (abi-reference 2.6: the library registers its own __tgt_bin_desc when
// loaded; its globals get infinite-refcount entries on every device). The
// program changes the library's globals only through exported functions that
// do 'target update to/from', runs the library's kernel on two devices, and
// checks presence of the library's global from the program via the address
// the library exports; then dlcloses and reloads it (a new registration: the
// reloaded library's globals start from their initial values on the device).
// What happens to the entries at dlclose is checked in dlclose_globals.
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

typedef void (*set_fn)(int, int);
typedef int (*fetch_fn)(int);
typedef int (*host_fn)(void);
typedef void (*load_fn)(const double *, int, int, int);
typedef int (*kernel_fn)(int);
typedef void (*fetch_table_fn)(double *, int);
typedef void *(*addr_fn)(void);

int main(void) {
  void *h = dlopen("./dl_globals.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  set_fn set_counter = (set_fn)dlsym(h, "lib_set_counter");
  fetch_fn fetch_counter = (fetch_fn)dlsym(h, "lib_fetch_counter");
  host_fn host_counter = (host_fn)dlsym(h, "lib_host_counter");
  load_fn load_table = (load_fn)dlsym(h, "lib_load_table");
  kernel_fn kernel = (kernel_fn)dlsym(h, "lib_kernel");
  fetch_table_fn fetch_table = (fetch_table_fn)dlsym(h, "lib_fetch_table");
  addr_fn counter_addr = (addr_fn)dlsym(h, "lib_counter_addr");
  if (!set_counter || !fetch_counter || !host_counter || !load_table || !kernel || !fetch_table || !counter_addr) {
    printf("dlsym failed\n");
    return 1;
  }
  void *addr = counter_addr();
  printf("library global present: dev0=%d dev1=%d\n", omp_target_is_present(addr, 0), omp_target_is_present(addr, 1));

  set_counter(100, 0);
  set_counter(200, 1);
  double vals[3] = {10, 20, 30};
  load_table(vals, 2, 3, 0); // device 0 table = 0 1 10 20 30 5 6 7
  printf("kernel on dev0: on_host=%d\n", kernel(0));
  printf("kernel on dev1: on_host=%d\n", kernel(1));
  printf("host counter before fetch: %d\n", host_counter());
  printf("dev0 counter=%d\n", fetch_counter(0));
  printf("dev1 counter=%d\n", fetch_counter(1));
  double t[8];
  fetch_table(t, 0);
  printf("dev0 table:");
  for (int i = 0; i < 8; i++)
    printf(" %.0f", t[i]);
  printf("\n");
  fetch_table(t, 1);
  printf("dev1 table:");
  for (int i = 0; i < 8; i++)
    printf(" %.0f", t[i]);
  printf("\n");
  // a program region on the same device is unaffected by the library's globals
  int on_host = -1;
#pragma omp target map(from : on_host)
  { on_host = omp_is_initial_device(); }
  printf("program region: on_host=%d\n", on_host);
  dlclose(h);
  printf("after dlclose: program region still works: ");
  on_host = -1;
#pragma omp target map(from : on_host)
  { on_host = omp_is_initial_device(); }
  printf("on_host=%d\n", on_host);

  // load the library again: a fresh registration, the image is loaded again
  h = dlopen("./dl_globals.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen #2 failed: %s\n", dlerror());
    return 1;
  }
  set_counter = (set_fn)dlsym(h, "lib_set_counter");
  fetch_counter = (fetch_fn)dlsym(h, "lib_fetch_counter");
  kernel = (kernel_fn)dlsym(h, "lib_kernel");
  fetch_table = (fetch_table_fn)dlsym(h, "lib_fetch_table");
  counter_addr = (addr_fn)dlsym(h, "lib_counter_addr");
  addr = counter_addr();
  printf("reloaded library global present dev0=%d\n", omp_target_is_present(addr, 0));
  set_counter(5, 0);
  printf("reloaded kernel on dev0: on_host=%d\n", kernel(0));
  printf("reloaded dev0 counter=%d (5 + table sum 28)\n", fetch_counter(0));
  fetch_table(t, 0);
  printf("reloaded dev0 table:");
  for (int i = 0; i < 8; i++)
    printf(" %.0f", t[i]);
  printf("\n");
  dlclose(h);
  return 0;
}
