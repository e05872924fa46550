// The same ol* program on the CPU device and on a GPU device:
// gpu-images' kernels (saxpy, read_global, write_global; device globals
// g_value, g_table) built for x86-64 and for the GPU (sm_90 cubin or gfx90a
// code object). Run with mock-cuda or mock-hsa (CPU stand-ins for the
// drivers); run.sh compares the lines each device prints.
//   gpu KERNELS.x86_64.so GPU_IMAGE [PTX]
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <offload/OffloadAPI.h>

#define OK(call) do { ol_result_t r_ = (call); if (r_) { fprintf(stderr, "FAIL line %d: %s -> %d %s\n", __LINE__, #call, r_->Code, r_->Details); exit(1); } } while (0)
#define TRUE(c) do { if (!(c)) { fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #c); exit(1); } } while (0)

static ol_device_handle_t cpu, gpu, host;
static bool pick(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t));
  if (t == OL_DEVICE_TYPE_CPU && !cpu) cpu = d;
  if (t == OL_DEVICE_TYPE_GPU && !gpu) gpu = d;
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  return true;
}
static void *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  TRUE(f);
  fseek(f, 0, SEEK_END); *n = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *b = malloc(*n);
  TRUE(fread(b, 1, *n, f) == *n);
  fclose(f);
  return b;
}

#define N 1000
static void run(const char *label, ol_device_handle_t dev, void *img, size_t size) {
  ol_program_handle_t prog;
  ol_symbol_handle_t saxpy, rd, wr, gv;
  OK(olCreateProgram(dev, img, size, &prog));
  OK(olGetSymbol(prog, "saxpy", OL_SYMBOL_KIND_KERNEL, &saxpy));
  OK(olGetSymbol(prog, "read_global", OL_SYMBOL_KIND_KERNEL, &rd));
  OK(olGetSymbol(prog, "write_global", OL_SYMBOL_KIND_KERNEL, &wr));
  OK(olGetSymbol(prog, "g_value", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &gv));
  size_t gsize; void *gaddr;
  OK(olGetSymbolInfo(gv, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof gsize, &gsize));
  OK(olGetSymbolInfo(gv, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr));
  ol_queue_handle_t q;
  OK(olCreateQueue(dev, &q));
  float hx[N], hy[N];
  for (int i = 0; i < N; ++i) { hx[i] = (float)i; hy[i] = 1.0f; }
  float *dx, *dy; int32_t *dout;
  OK(olMemAlloc(dev, OL_ALLOC_TYPE_DEVICE, sizeof hx, (void **)&dx));
  OK(olMemAlloc(dev, OL_ALLOC_TYPE_DEVICE, sizeof hy, (void **)&dy));
  OK(olMemAlloc(dev, OL_ALLOC_TYPE_DEVICE, N * 4, (void **)&dout));
  OK(olMemcpy(q, dx, dev, hx, host, sizeof hx));
  OK(olMemcpy(q, dy, dev, hy, host, sizeof hy));
  float a = 2.0f; uint32_t abits; memcpy(&abits, &a, 4);
  struct { void *dyn; float *y; const float *x; uint64_t a; int64_t n; } sa = {NULL, dy, dx, abits, N};
  // A CPU device runs a kernel once (its MAX_WORK_GROUP_SIZE is 1); a GPU gets a grid.
  ol_device_type_t type;
  OK(olGetDeviceInfo(dev, OL_DEVICE_INFO_TYPE, sizeof type, &type));
  ol_kernel_launch_size_args_t ls = type == OL_DEVICE_TYPE_CPU ? (ol_kernel_launch_size_args_t){1, {1, 1, 1}, {1, 1, 1}, 0}
                                                               : (ol_kernel_launch_size_args_t){1, {4, 1, 1}, {128, 1, 1}, 0};
  OK(olLaunchKernel(q, dev, saxpy, &sa, sizeof sa, &ls));
  OK(olMemcpy(q, hy, host, dy, dev, sizeof hy));
  OK(olSyncQueue(q));
  double sum = 0;
  for (int i = 0; i < N; ++i) sum += hy[i];
  int32_t g = 0;
  OK(olMemcpy(NULL, &g, host, gaddr, dev, 4));
  struct { void *dyn; int64_t v; } wa = {NULL, 99};
  OK(olLaunchKernel(q, dev, wr, &wa, sizeof wa, &ls));
  struct { void *dyn; int32_t *out; int64_t n; } ra = {NULL, dout, N};
  OK(olLaunchKernel(q, dev, rd, &ra, sizeof ra, &ls));
  int32_t out[N];
  OK(olMemcpy(q, out, host, dout, dev, sizeof out));
  OK(olSyncQueue(q));
  long long rsum = 0;
  for (int i = 0; i < N; ++i) rsum += out[i];
  int32_t g2 = 0;
  OK(olMemcpy(NULL, &g2, host, gaddr, dev, 4));
  printf("%s: saxpy sum %.1f, g_value %d bytes %zu, after write_global(99): %d, read_global sum %lld\n", label, sum, g, gsize, g2, rsum);
  OK(olMemFree(dx)); OK(olMemFree(dy)); OK(olMemFree(dout));
  OK(olDestroyQueue(q));
  OK(olDestroyProgram(prog));
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  if (!gpu) { printf("skipped: no GPU device (is a stand-in the driver?)\n"); return 0; }
  size_t nso, ncubin, nptx = 0;
  void *so = slurp(argv[1], &nso), *cubin = slurp(argv[2], &ncubin), *ptx = argc > 3 ? slurp(argv[3], &nptx) : NULL;
  bool v;
  OK(olIsValidBinary(gpu, cubin, ncubin, &v)); TRUE(v);
  OK(olIsValidBinary(cpu, cubin, ncubin, &v)); TRUE(!v);
  OK(olIsValidBinary(gpu, so, nso, &v)); TRUE(!v);
  if (ptx) { OK(olIsValidBinary(gpu, ptx, nptx, &v)); printf("PTX valid on the CUDA device: %d\n", v); }
  ol_program_handle_t bad;
  TRUE(olCreateProgram(cpu, cubin, ncubin, &bad) != NULL);
  TRUE(olCreateProgram(gpu, so, nso, &bad) != NULL);
  run("device", cpu, so, nso);
  run("device", gpu, cubin, ncubin);

  // A 3-D grid with dynamic shared memory on the GPU: every work item writes
  // its blockIdx, threadIdx, blockDim and gridDim (launch_dims).
  ol_program_handle_t prog;
  ol_symbol_handle_t dims;
  OK(olCreateProgram(gpu, cubin, ncubin, &prog));
  OK(olGetSymbol(prog, "launch_dims", OL_SYMBOL_KIND_KERNEL, &dims));
  enum { ITEMS = 2 * 3 * 2 * 4 * 2 * 1, WORDS = 12 };
  uint32_t *drec;
  OK(olMemAlloc(gpu, OL_ALLOC_TYPE_DEVICE, ITEMS * WORDS * 4, (void **)&drec));
  struct { void *dyn; uint32_t *rec; int64_t cap; } da = {NULL, drec, ITEMS};
  ol_kernel_launch_size_args_t ls3 = {3, {2, 3, 2}, {4, 2, 1}, 256};
  OK(olLaunchKernel(NULL, gpu, dims, &da, sizeof da, &ls3));
  static uint32_t rec[ITEMS * WORDS];
  OK(olMemcpy(NULL, rec, host, drec, gpu, sizeof rec));
  int seen = 0;
  for (int i = 0; i < ITEMS; ++i) {
    uint32_t *r = rec + i * WORDS;
    TRUE(r[6] == 4 && r[7] == 2 && r[8] == 1 && r[9] == 2 && r[10] == 3 && r[11] == 2);
    TRUE(r[0] < 2 && r[1] < 3 && r[2] < 2 && r[3] < 4 && r[4] < 2 && r[5] == 0);
    ++seen;
  }
  printf("3-D launch on the GPU: %d work items with grid {2,3,2} and blocks {4,2,1}\n", seen);
  OK(olMemFree(drec));
  OK(olDestroyProgram(prog));
  OK(olShutDown());
  return 0;
}
