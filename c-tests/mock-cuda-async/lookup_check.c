/*
 * lookup_check.c - checks the symbol lookup order the deferring stand-in
 * relies on: dlsym(handle, name) on libcuda-async.so finds its own overrides
 * first and everything else in mock-cuda (its DT_NEEDED), and its
 * dlsym(RTLD_NEXT, name) forwards reach mock-cuda.
 *
 *   lookup_check /path/libcuda-async.so /path/mock-cuda/libcuda.so.1
 *
 * Prints one line per symbol and "lookup order: ok"; exits 1 otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char shim[PATH_MAX], mock[PATH_MAX];

static int same(const char *file, const char *want) {
  char r[PATH_MAX];
  return file && realpath(file, r) && !strcmp(r, want);
}

int main(int argc, char **argv) {
  if (argc != 3 || !realpath(argv[1], shim) || !realpath(argv[2], mock)) {
    fprintf(stderr, "usage: lookup_check SHIM MOCK (both must exist)\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  int bad = 0;
  const char *own[] = {"cuStreamCreate", "cuStreamSynchronize", "cuStreamQuery", "cuStreamWaitEvent", "cuEventRecord",
                       "cuEventSynchronize", "cuCtxSynchronize", "cuLaunchKernel", "cuMemcpyHtoDAsync_v2",
                       "cuMemcpyDtoHAsync_v2", "cuMemsetD8Async", "cuMemsetD32Async", "cuCtxSetCurrent", "cuDeviceGetCount", NULL};
  const char *theirs[] = {"cuInit", "cuModuleLoadDataEx", "cuModuleGetGlobal_v2", "cuMemAlloc_v2", "cuDeviceGetAttribute", NULL};
  for (int i = 0; own[i]; i++) {
    Dl_info info;
    void *p = dlsym(h, own[i]);
    int ok = p && dladdr(p, &info) && same(info.dli_fname, shim);
    const char *next = ((const char *(*)(const char *))dlsym(h, "mock_async_origin"))(own[i]);
    int fwd = same(next, mock);
    printf("%s  %-24s handle -> %s, RTLD_NEXT -> %s\n", ok && fwd ? "ok " : "BAD", own[i], p ? info.dli_fname : "(none)",
           next ? next : "(none)");
    bad |= !(ok && fwd);
  }
  for (int i = 0; theirs[i]; i++) {
    Dl_info info;
    void *p = dlsym(h, theirs[i]);
    int ok = p && dladdr(p, &info) && same(info.dli_fname, mock);
    printf("%s  %-24s handle -> %s\n", ok ? "ok " : "BAD", theirs[i], p ? info.dli_fname : "(none)");
    bad |= !ok;
  }
  puts(bad ? "lookup order: WRONG" : "lookup order: ok");
  return bad;
}
