/* scale_emu.c - CPU versions of scale.cu's kernels for mock-cuda (MOCK_CUDA_EMU):
 * mock-cuda sets ok_emu_ids = {blockIdx.xyz, threadIdx.xyz, blockDim.xyz, gridDim.xyz}
 * and passes the parameter buffer as 8-byte slots. */
#include <stdint.h>
__attribute__((visibility("default"), used)) volatile uint32_t ok_emu_ids[12];
void kl_scale(long n, long *x, long factor) {
  long i = (long)ok_emu_ids[0] * ok_emu_ids[6] + ok_emu_ids[3];
  if (i < n) x[i] *= factor;
}
void kl_mixed(uint64_t n_and_a, long *out) {
  union { uint32_t u; float f; } a = { .u = (uint32_t)(n_and_a >> 32) };
  if (ok_emu_ids[3] == 0) out[0] = (int32_t)(uint32_t)n_and_a + (long)a.f;
}
