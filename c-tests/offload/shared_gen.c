// OpenMP and another generation of liboffload in one process (GEN=21 or 23,
// compiled against our header of that generation and linked against its
// shim, libLLVMOffload.so.21.1 or .so.23.1): the shim has no runtime of its
// own, so its ol* calls reach the library OpenMP uses and both APIs share
// the devices and the memory. A pointer from olMemAlloc works in
// omp_target_memcpy and is_device_ptr; one from omp_target_alloc works in
// olMemcpy and as a kernel argument.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <offload/OffloadAPI.h>

#define N 256
#define OK(call) do { ol_result_t r_ = (call); if (r_) { fprintf(stderr, "FAIL line %d: %s -> %d %s\n", __LINE__, #call, r_->Code, r_->Details); exit(1); } } while (0)
#define TRUE(c) do { if (!(c)) { fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #c); exit(1); } } while (0)

#if GEN == 21
#define KERNEL_T ol_kernel_handle_t
#define EV , NULL
#else
#define KERNEL_T ol_symbol_handle_t
#define EV
#endif

static ol_device_handle_t cpu0, host;
static bool pick(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t));
#if GEN == 21
  // 21: CPU devices, then the virtual host device.
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  if (t == OL_DEVICE_TYPE_CPU && !cpu0) cpu0 = d;
#else
  // 23: the host plugin's devices are host devices; the first is OpenMP's device 0.
  if (t == OL_DEVICE_TYPE_HOST && !cpu0) cpu0 = host = d;
#endif
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  Dl_info shim, rt, omp;
  char entry[64];
  snprintf(entry, sizeof entry, "__omptarget_rs_ol%d_olInit", GEN);
  void *inner = dlsym(RTLD_DEFAULT, entry);
  TRUE(inner && dladdr((void *)olInit, &shim) && dladdr(inner, &rt) && dladdr((void *)omp_target_memcpy, &omp));
  printf("olInit from %s forwards to %s\n", strrchr(shim.dli_fname, '/') + 1, strrchr(rt.dli_fname, '/') + 1);
  printf("one runtime serves ol* %d and OpenMP: %s\n", GEN, rt.dli_fbase == omp.dli_fbase && shim.dli_fbase != rt.dli_fbase ? "yes" : "no");

#if GEN == 21
  OK(olInit());
#else
  OK(olInit(NULL));
#endif
  OK(olIterateDevices(pick, NULL));
  TRUE(cpu0 && host);
  int dev = 0;
  printf("OpenMP devices: %d\n", omp_get_num_devices());

  int64_t h[N], out[N];
  for (int i = 0; i < N; ++i) h[i] = i;
  int64_t *p;
  OK(olMemAlloc(cpu0, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&p));
  TRUE(omp_target_memcpy(p, h, sizeof h, 0, 0, dev, omp_get_initial_device()) == 0);
  #pragma omp target is_device_ptr(p) device(dev)
  for (int i = 0; i < N; ++i) p[i] *= 2;
  OK(olMemcpy(NULL, out, host, p, cpu0, sizeof out EV));
  for (int i = 0; i < N; ++i) TRUE(out[i] == 2 * i);
  printf("olMemAlloc memory in omp_target_memcpy + is_device_ptr: ok\n");

  int64_t *q = omp_target_alloc(sizeof h, dev);
  TRUE(q);
  OK(olMemcpy(NULL, q, cpu0, h, host, sizeof h EV));
  FILE *f = fopen(argv[1], "rb");
  TRUE(f);
  fseek(f, 0, SEEK_END);
  size_t size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *img = malloc(size);
  TRUE(fread(img, 1, size, f) == size);
  fclose(f);
  ol_program_handle_t prog;
  KERNEL_T vadd;
  OK(olCreateProgram(cpu0, img, size, &prog));
#if GEN == 21
  OK(olGetKernel(prog, "vadd", &vadd));
#else
  OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));
#endif
  struct { int64_t *out, *a, *b; int64_t n; } args = {q, q, p, N}; // q = q + p
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  ol_queue_handle_t queue;
  OK(olCreateQueue(cpu0, &queue));
  OK(olLaunchKernel(queue, cpu0, vadd, &args, sizeof args, &ls EV));
#if GEN == 21
  OK(olWaitQueue(queue));
#else
  OK(olSyncQueue(queue));
#endif
  memset(out, 0, sizeof out);
  TRUE(omp_target_memcpy(out, q, sizeof out, 0, 0, omp_get_initial_device(), dev) == 0);
  for (int i = 0; i < N; ++i) TRUE(out[i] == 3 * i);
  printf("omp_target_alloc memory in olMemcpy + olLaunchKernel: ok\n");

  OK(olDestroyQueue(queue));
  OK(olDestroyProgram(prog));
  omp_target_free(q, dev);
  OK(olMemFree(p));
  OK(olShutDown());
  free(img);
  printf("shared-device test passed\n");
  return 0;
}
