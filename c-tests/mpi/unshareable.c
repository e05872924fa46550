// What a remote device cannot offer a program, refused instead of crashing
// the server or the program: host and shared memory (llvm_omp_target_alloc_host
// and _shared, omp_alloc in llvm_omp_target_host_mem_space give NULL), while
// device memory and regions work. Usage: unshareable DEVICE; prints "ok".
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

void *llvm_omp_target_alloc_host(size_t, int);
void *llvm_omp_target_alloc_shared(size_t, int);

int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 4;
  if (omp_get_num_devices() <= dev) {
    printf("FAIL: %d devices\n", omp_get_num_devices());
    return 1;
  }
  void *h = llvm_omp_target_alloc_host(64, dev), *s = llvm_omp_target_alloc_shared(64, dev);
  omp_set_default_device(dev);
  omp_allocator_handle_t al = omp_init_allocator(llvm_omp_target_host_mem_space, 0, NULL);
  void *q = omp_alloc(64, al);
  printf("host %s, shared %s, host memory space %s\n", h ? "non-null" : "NULL", s ? "non-null" : "NULL", q ? "non-null" : "NULL");
  int *d = omp_target_alloc(16 * sizeof(int), dev);
  int on_host = -1;
#pragma omp target is_device_ptr(d) map(from : on_host) device(dev)
  {
    for (int i = 0; i < 16; i++) d[i] = i * i;
    on_host = omp_is_initial_device();
  }
  int out[16];
  omp_target_memcpy(out, d, sizeof out, 0, 0, omp_get_initial_device(), dev);
  omp_target_free(d, dev);
  printf("device memory: %d on_host=%d\n", out[15], on_host);
  if (h || s || q || out[15] != 225 || on_host != 0) return 1;
  printf("ok\n");
  return 0;
}
