// scale.cu - a CUDA program compiled with clang-22 -foffload-via-llvm:
// kernel<<<grid, block, shmem, stream>>> becomes __llvmPushCallConfiguration +
// the host stub's __llvmPopCallConfiguration + llvmLaunchKernel. Memory comes
// from the OpenMP device API (there is no CUDA runtime). The second kernel has
// mixed 4-byte arguments: its packed buffer is checked in mock-cuda's launch log.
#include <omp.h>
#include <stdio.h>

extern "C" __global__ void kl_scale(long n, long *x, long factor) {
#ifdef __NVPTX__
  long i = (long)__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
  if (i < n) x[i] *= factor;
#endif
}

extern "C" __global__ void kl_mixed(int n, float a, long *out) {
#ifdef __NVPTX__
  if (__nvvm_read_ptx_sreg_tid_x() == 0) out[0] = n + (long)a;
#endif
}

int main() {
  setvbuf(stdout, NULL, _IONBF, 0);
  const long n = 100;
  long host[100];
  for (long i = 0; i < n; i++) host[i] = i;
  int dev = 0, init = omp_get_initial_device();
  long *d = (long *)omp_target_alloc(sizeof host, dev);
  if (!d) { printf("FAIL omp_target_alloc\n"); return 1; }
  omp_target_memcpy(d, host, sizeof host, 0, 0, dev, init);
  kl_scale<<<dim3(4), dim3(32), 0, 0>>>(n, d, 3);
  kl_mixed<<<1, 1, 64>>>(7, 2.0f, d + 99);
  omp_target_memcpy(host, d, sizeof host, 0, 0, init, dev);
  int bad = 0;
  for (long i = 0; i < n - 1; i++) bad += host[i] != 3 * i;
  bad += host[99] != 9; /* kl_mixed: 7 + (long)2.0f */
  printf("kl_scale: x[1]=%ld x[98]=%ld; kl_mixed: %ld; %d wrong\n", host[1], host[98], host[99], bad);
  omp_target_free(d, dev);
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
