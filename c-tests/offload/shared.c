// One device layer for both APIs: OpenMP and liboffload in one process see
// the same devices and the same memory (impossible with LLVM 22.1, whose
// libomptarget and liboffload each own their plugins). A pointer from
// olMemAlloc works in omp_target_memcpy and is_device_ptr; a pointer from
// omp_target_alloc works in olMemcpy and as an olLaunchKernel argument.
// Usage: shared KERNEL.so [OPENMP_DEVICE UID]: by default OpenMP device 0 and
// the ol* device of UID x86_64-0 (the host plugin's first); c-tests/mpi runs
// it on a remote device (4 and mpi-rank-1:x86_64-0).
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

static ol_device_handle_t cpu0, host;
static const char *want_uid = "x86_64-0";
static bool pick(ol_device_handle_t d, void *ud) {
  (void)ud;
  char uid[64];
  ol_device_type_t t;
  OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t));
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  if (t == OL_DEVICE_TYPE_CPU && !olGetDeviceInfo(d, OL_DEVICE_INFO_UID, sizeof uid, uid) && !strcmp(uid, want_uid)) cpu0 = d;
  return true;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 4) return 2;
  int dev = 0;
  if (argc == 4) {
    dev = atoi(argv[2]);
    want_uid = argv[3];
  }
  Dl_info a, b;
  TRUE(dladdr((void *)olInit, &a) && dladdr((void *)omp_target_memcpy, &b));
  void *tgt = dlsym(RTLD_DEFAULT, "__tgt_target_kernel");
  Dl_info c;
  TRUE(tgt && dladdr(tgt, &c));
  printf("one library serves ol* and __tgt_*: %s\n", a.dli_fbase == c.dli_fbase ? "yes" : "no");

  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  TRUE(cpu0 && host);
  // OpenMP device 0 is the host plugin's device 0 = UID x86_64-0.
  char uid[64];
  OK(olGetDeviceInfo(cpu0, OL_DEVICE_INFO_UID, sizeof uid, uid));
  printf("OpenMP devices: %d, ol* CPU device %s\n", omp_get_num_devices(), uid);

  int64_t h[N], out[N];
  for (int i = 0; i < N; ++i) h[i] = i;

  // olMemAlloc → omp_target_memcpy and is_device_ptr.
  int64_t *p;
  OK(olMemAlloc(cpu0, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&p));
  TRUE(omp_target_memcpy(p, h, sizeof h, 0, 0, dev, omp_get_initial_device()) == 0);
  int on_host = 1;
  #pragma omp target is_device_ptr(p) device(dev) map(from: on_host)
  {
    on_host = omp_is_initial_device();
    for (int i = 0; i < N; ++i) p[i] *= 2;
  }
  OK(olMemcpy(NULL, out, host, p, cpu0, sizeof out));
  for (int i = 0; i < N; ++i) TRUE(out[i] == 2 * i);
  printf("olMemAlloc memory in omp_target_memcpy + is_device_ptr: ok (region on the device: %s)\n", on_host ? "no" : "yes");

  // omp_target_alloc → olMemcpy and a kernel argument.
  int64_t *q = omp_target_alloc(sizeof h, dev);
  TRUE(q);
  OK(olMemcpy(NULL, q, cpu0, h, host, sizeof h));
  FILE *f = fopen(argv[1], "rb");
  TRUE(f);
  fseek(f, 0, SEEK_END);
  size_t size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *img = malloc(size);
  TRUE(fread(img, 1, size, f) == size);
  fclose(f);
  ol_program_handle_t prog;
  ol_symbol_handle_t vadd;
  OK(olCreateProgram(cpu0, img, size, &prog));
  OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));
  struct { int64_t *out, *a, *b; int64_t n; } args = {q, q, p, N}; // q = q + p
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  ol_queue_handle_t queue;
  OK(olCreateQueue(cpu0, &queue));
  OK(olLaunchKernel(queue, cpu0, vadd, &args, sizeof args, &ls));
  OK(olSyncQueue(queue));
  memset(out, 0, sizeof out);
  TRUE(omp_target_memcpy(out, q, sizeof out, 0, 0, omp_get_initial_device(), dev) == 0);
  for (int i = 0; i < N; ++i) TRUE(out[i] == 3 * i);
  printf("omp_target_alloc memory in olMemcpy + olLaunchKernel: ok\n");

  OK(olDestroyQueue(queue));
  OK(olDestroyProgram(prog));
  omp_target_free(q, dev);
  OK(olMemFree(p));
  OK(olShutDown());
  printf("shared-device test passed\n");
  return 0;
}
