// LLVM extensions: llvm_omp_target_alloc_{device,host,shared} and the frees.
#include <omp.h>
#include <stdio.h>

void *llvm_omp_target_alloc_device(size_t, int);
void *llvm_omp_target_alloc_host(size_t, int);
void *llvm_omp_target_alloc_shared(size_t, int);
void llvm_omp_target_free_device(void *, int);
void llvm_omp_target_free_host(void *, int);
void llvm_omp_target_free_shared(void *, int);

int main(void) {
  int dev = 1;
  int *pd = llvm_omp_target_alloc_device(16 * sizeof(int), dev);
  int *ph = llvm_omp_target_alloc_host(16 * sizeof(int), dev);
  int *ps = llvm_omp_target_alloc_shared(16 * sizeof(int), dev);
  printf("non-null: %d %d %d\n", pd != NULL, ph != NULL, ps != NULL);
  for (int i = 0; i < 16; i++)
    ph[i] = i, ps[i] = 2 * i;
#pragma omp target device(dev) is_device_ptr(pd, ph, ps)
  {
    for (int i = 0; i < 16; i++)
      pd[i] = ph[i] + ps[i];
    for (int i = 0; i < 16; i++)
      ps[i] = pd[i] + 1;
  }
  int out[16];
  omp_target_memcpy(out, pd, sizeof out, 0, 0, omp_get_initial_device(), dev);
  printf("device buffer: %d %d; shared buffer seen on host: %d %d\n", out[1], out[15], ps[1], ps[15]);
  llvm_omp_target_free_device(pd, dev);
  llvm_omp_target_free_host(ph, dev);
  llvm_omp_target_free_shared(ps, dev);
  // omp_alloc with the LLVM memory spaces goes through the same entry points (via libomp)
  omp_allocator_handle_t al = omp_init_allocator(llvm_omp_target_host_mem_space, 0, NULL);
  int *q = omp_alloc(64, al);
  printf("omp_alloc(llvm_omp_target_host_mem_space) non-null=%d\n", q != NULL);
  if (q) {
    q[0] = 7;
    omp_free(q, al);
  }
  omp_destroy_allocator(al);
  return 0;
}
