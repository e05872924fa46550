// What __tgt_unregister_lib (run by dlclose of an offloading library) does to
// the mapping-table entries of the library's declare target globals
// (abi-reference 2.6). LLVM 22.1 only removes the descriptor's translation
// table: the globals' infinite-refcount entries stay in every device's table
// after dlclose (stale entries for unmapped host addresses), so
// omp_target_is_present on the old addresses still says 1. omptarget-rs
// removes them at unregistration (see the .divergence file). The addresses
// are only passed to the runtime, never dereferenced after dlclose.
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

typedef void *(*addr_fn)(void);

int main(void) {
  void *h = dlopen("./dl_g.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  void *v = ((addr_fn)dlsym(h, "dl_value_addr"))();
  void *a = ((addr_fn)dlsym(h, "dl_array_addr"))();
  int on_host = -1;
#pragma omp target map(from : on_host) device(1)
  { on_host = omp_is_initial_device(); } // loads the images on device 1
  printf("on_host=%d\n", on_host);
  printf("loaded: present dev0 value=%d array=%d, dev1 value=%d\n", omp_target_is_present(v, 0),
         omp_target_is_present(a, 0), omp_target_is_present(v, 1));
  dlclose(h);
  printf("after dlclose: present dev0 value=%d array=%d, dev1 value=%d\n", omp_target_is_present(v, 0),
         omp_target_is_present(a, 0), omp_target_is_present(v, 1));
  return 0;
}
