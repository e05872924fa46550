/* interop_gpu.c - interop objects on the CUDA and HSA stand-ins (issue 15).
 * Linked with a gpu-images registration object (wrap.sm_90.o / wrap.gfx90a.o)
 * so that the GPU plugin has a device.
 *   interop_gpu table  : every property of a target and a targetsync object
 *                        (value class, return code); compared with LLVM 22.1
 *   interop_gpu order  : (CUDA) work the program queues on the targetsync
 *                        stream through the driver is complete after
 *                        `interop use` and after `interop destroy`; completion
 *                        callbacks run there. Needs LIBCUDA=<driver path>. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s(const char *p) { return p ? p : "(null)"; }

static void table(omp_interop_t obj, const char *what) {
  printf("%s: %s\n", what, obj ? "object" : "none");
  if (!obj) return;
  for (int p = -1; p >= -9; p--) {
    int e1 = 99, e2 = 99, e3 = 99;
    long v = (long)omp_get_interop_int(obj, p, &e1);
    void *q = omp_get_interop_ptr(obj, p, &e2);
    const char *str = omp_get_interop_str(obj, p, &e3);
    printf("  property %d: int %ld rc %d | ptr %s rc %d | str %s rc %d\n", p, v, e1, q ? "set" : "NULL", e2, s(str), e3);
  }
  int e = 99;
  omp_get_interop_int(obj, 0, &e);
  printf("  property 0: rc %d\n", e);
  e = 99;
  omp_get_interop_int(obj, -10, &e);
  printf("  property -10: rc %d\n", e);
}

static int calls;
static void cb(omp_interop_t o, void *d) { (void)o; calls++; printf("callback %s\n", (const char *)d); }
extern int ompx_interop_add_completion_callback(omp_interop_t, void (*)(omp_interop_t, void *), void *);

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const char *mode = argc > 1 ? argv[1] : "table";
  printf("devices: %d\n", omp_get_num_devices());
  omp_interop_t tgt = omp_interop_none, sync = omp_interop_none;
#pragma omp interop init(target : tgt) device(0)
#pragma omp interop init(targetsync : sync) device(0)
  if (!strcmp(mode, "table")) {
    table(tgt, "target");
    table(sync, "targetsync");
    return 0;
  }
  /* order */
  void *drv = dlopen(getenv("LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  typedef int (*memset_t)(unsigned long long, unsigned char, size_t, void *);
  memset_t set8 = drv ? (memset_t)dlsym(drv, "cuMemsetD8Async") : NULL;
  int e = 0;
  void *stream = omp_get_interop_ptr(sync, omp_ipr_targetsync, &e);
  if (!set8 || !stream || e) { printf("FAIL no driver (%p) or no stream (%p, rc %d)\n", (void *)set8, stream, e); return 1; }
  enum { N = 256 };
  unsigned char host[N];
  memset(host, 0, N);
  unsigned char *d = omp_target_alloc(N, 0);
  omp_target_memcpy(d, host, N, 0, 0, 0, omp_get_initial_device());
  int bad = 0;
  printf("callback added: %d\n", ompx_interop_add_completion_callback(sync, cb, "after use"));
  set8((unsigned long long)(size_t)d, 0x5a, N, stream);
#pragma omp interop use(sync)
  omp_target_memcpy(host, d, N, 0, 0, omp_get_initial_device(), 0);
  for (int i = 0; i < N; i++) bad += host[i] != 0x5a;
  printf("after use: %d bytes not 0x5a, %d callback(s)\n", bad, calls);
  ompx_interop_add_completion_callback(sync, cb, "after destroy");
  set8((unsigned long long)(size_t)d + 16, 0x33, 32, stream);
#pragma omp interop destroy(sync)
  omp_target_memcpy(host, d, N, 0, 0, omp_get_initial_device(), 0);
  int bad2 = 0;
  for (int i = 0; i < N; i++) bad2 += host[i] != (i >= 16 && i < 48 ? 0x33 : 0x5a);
  printf("after destroy: %d bytes wrong, %d callback(s)\n", bad2, calls);
#pragma omp interop destroy(tgt)
  omp_target_free(d, 0);
  int ok = !bad && !bad2 && calls == 2;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return !ok;
}
