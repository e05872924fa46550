// liboffload's ol* API, compiled against LLVM 22.1's own OffloadAPI.h and
// linked against LLVM's libLLVMOffload.so.22.1, run on omptarget-rs (found
// first on LD_LIBRARY_PATH under that name). Success paths and the errors
// 22.1's header documents, per family; every bad call must return an error,
// never crash. Prints "ok N checks" at the end; exit 1 on the first failure.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <offload/OffloadAPI.h>

_Static_assert(sizeof(ol_kernel_launch_size_args_t) == 40, "launch size args layout");
_Static_assert(sizeof(ol_error_struct_t) == 16, "error struct layout");

static int checks;
static int line_of_failure;

#define FAIL(...) do { fprintf(stderr, "FAIL line %d: ", __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define OK(call) do { ol_result_t r_ = (call); ++checks; if (r_) FAIL("%s -> %d %s", #call, r_->Code, r_->Details ? r_->Details : "(null)"); } while (0)
#define ERR(call, code) do { ol_result_t r_ = (call); ++checks; if (!r_) FAIL("%s succeeded, expected %s", #call, #code); \
    if (r_->Code != (code)) FAIL("%s -> %d (%s), expected %s", #call, r_->Code, r_->Details ? r_->Details : "(null)", #code); \
    if (!r_->Details) FAIL("%s: no details", #call); } while (0)
#define TRUE(c) do { ++checks; if (!(c)) FAIL("%s", #c); } while (0)

static ol_device_handle_t devs[64];
static int ndevs;
static bool collect(ol_device_handle_t d, void *ud) { (void)ud; devs[ndevs++] = d; return true; }
static bool first_only(ol_device_handle_t d, void *ud) { *(ol_device_handle_t *)ud = d; return false; }

static ol_device_type_t type_of(ol_device_handle_t d) {
  ol_device_type_t t; OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t)); return t;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb"); if (!f) FAIL("open %s", path);
  fseek(f, 0, SEEK_END); *size = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *b = malloc(*size); if (fread(b, 1, *size, f) != *size) FAIL("read %s", path); fclose(f); return b;
}

static int host_calls;
static void host_fn(void *ud) { host_calls += *(int *)ud; }

int main(int argc, char **argv) {
  if (argc < 2) FAIL("usage: api KERNEL.so");
  (void)line_of_failure;

  // ---- init / shutdown ----
  ERR(olIterateDevices(collect, NULL), OL_ERRC_UNINITIALIZED);
  ERR(olShutDown(), OL_ERRC_UNINITIALIZED);
  OK(olInit());
  OK(olInit());
  OK(olShutDown());
  OK(olIterateDevices(collect, NULL)); // still one reference
  // The ol_result_t of an error stays valid and is the same record for the same error.
  ol_result_t e1 = olMemFree(NULL), e2 = olMemFree(NULL);
  TRUE(e1 && e1 == e2 && e1->Code == OL_ERRC_INVALID_NULL_POINTER && strstr(e1->Details, "Address"));
  TRUE(olInitWithCodeLoc(&(ol_code_location_t){"main", __FILE__, __LINE__, 1}) == NULL);
  OK(olShutDownWithCodeLoc(NULL));

  // Which library serves the calls.
  Dl_info info;
  TRUE(dladdr((void *)olInit, &info) && info.dli_fname);
  printf("olInit from %s\n", strstr(info.dli_fname, "/usr/lib") ? "LLVM's library" : "omptarget-rs");
  // Neither libLLVM nor libstdc++ (the system's HSA runtime, which our AMDGPU
  // plugin opens to look for GPUs, brings libstdc++ itself).
  FILE *maps = fopen("/proc/self/maps", "r"); char l[4096]; bool hsa = false, cxx = false;
  while (fgets(l, sizeof l, maps)) {
    if (strstr(l, "libLLVM")) FAIL("loaded: %s", l);
    hsa |= strstr(l, "libhsa-runtime64") != NULL;
    cxx |= strstr(l, "libstdc++") != NULL;
  }
  fclose(maps);
  if (cxx && !hsa) FAIL("libstdc++ loaded without the HSA runtime");

  // ---- devices and platforms ----
  ERR(olIterateDevices(NULL, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ndevs = 0; OK(olIterateDevices(collect, NULL));
  ol_device_handle_t first = NULL; OK(olIterateDevices(first_only, &first));
  TRUE(ndevs >= 2 && first == devs[0]);
  ol_device_handle_t host = NULL, cpu = NULL, cpu1 = NULL;
  int ncpu = 0;
  for (int i = 0; i < ndevs; ++i) {
    ol_device_type_t t = type_of(devs[i]);
    if (t == OL_DEVICE_TYPE_HOST) host = devs[i];
    if (t == OL_DEVICE_TYPE_CPU) { if (!cpu) cpu = devs[i]; else if (!cpu1) cpu1 = devs[i]; ++ncpu; }
  }
  TRUE(host && cpu && cpu1);
  printf("devices: %d (%d CPU, 1 host)\n", ndevs, ncpu);
  char name[256]; size_t sz = 0;
  OK(olGetDeviceInfoSize(host, OL_DEVICE_INFO_NAME, &sz));
  TRUE(sz == strlen("Virtual Host Device") + 1);
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, sz, name));
  TRUE(strcmp(name, "Virtual Host Device") == 0);
  ERR(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, sz - 1, name), OL_ERRC_INVALID_SIZE);
  ERR(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, 0, name), OL_ERRC_INVALID_SIZE);
  ERR(olGetDeviceInfo(NULL, OL_DEVICE_INFO_NAME, sizeof name, name), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, sizeof name, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetDeviceInfo(host, (ol_device_info_t)999, sizeof name, name), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetDeviceInfoSize(host, (ol_device_info_t)999, &sz), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetDeviceInfoSize(NULL, OL_DEVICE_INFO_NAME, &sz), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetDeviceInfoSize(host, OL_DEVICE_INFO_NAME, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetDeviceInfo((ol_device_handle_t)&sz, OL_DEVICE_INFO_NAME, sizeof name, name), OL_ERRC_INVALID_DEVICE);
  for (int p = 0; p < OL_DEVICE_INFO_LAST; ++p) { // every property of a CPU device
    OK(olGetDeviceInfoSize(cpu, (ol_device_info_t)p, &sz));
    TRUE(sz > 0 && sz <= sizeof name);
    OK(olGetDeviceInfo(cpu, (ol_device_info_t)p, sz, name));
  }
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_UID, sizeof name, name));
  TRUE(strcmp(name, "x86_64-0") == 0);
  ol_dimensions_t dims; OK(olGetDeviceInfo(host, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE_PER_DIMENSION, sizeof dims, &dims));
  TRUE(dims.x == 1 && dims.y == 1 && dims.z == 1);
  ol_platform_handle_t hp, cp;
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_PLATFORM, sizeof hp, &hp));
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_PLATFORM, sizeof cp, &cp));
  TRUE(hp && cp && hp != cp);
  ol_platform_backend_t be;
  OK(olGetPlatformInfo(hp, OL_PLATFORM_INFO_BACKEND, sizeof be, &be)); TRUE(be == OL_PLATFORM_BACKEND_HOST);
  OK(olGetPlatformInfoSize(hp, OL_PLATFORM_INFO_NAME, &sz)); TRUE(sz == 5);
  OK(olGetPlatformInfo(hp, OL_PLATFORM_INFO_NAME, sz, name)); TRUE(strcmp(name, "Host") == 0);
  OK(olGetPlatformInfo(cp, OL_PLATFORM_INFO_NAME, sizeof name, name)); TRUE(strcmp(name, "x86_64") == 0);
  OK(olGetPlatformInfo(cp, OL_PLATFORM_INFO_VERSION, sizeof name, name));
  ERR(olGetPlatformInfo(hp, OL_PLATFORM_INFO_NAME, 2, name), OL_ERRC_INVALID_SIZE);
  ERR(olGetPlatformInfo(hp, OL_PLATFORM_INFO_NAME, 0, name), OL_ERRC_INVALID_SIZE);
  ERR(olGetPlatformInfo(NULL, OL_PLATFORM_INFO_NAME, 8, name), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetPlatformInfo(hp, OL_PLATFORM_INFO_NAME, 8, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetPlatformInfo(hp, (ol_platform_info_t)77, 8, name), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetPlatformInfoSize(hp, (ol_platform_info_t)77, &sz), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetPlatformInfoSize(NULL, OL_PLATFORM_INFO_NAME, &sz), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetPlatformInfoSize(hp, OL_PLATFORM_INFO_NAME, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetPlatformInfo((ol_platform_handle_t)cpu, OL_PLATFORM_INFO_NAME, 8, name), OL_ERRC_INVALID_PLATFORM);

  // ---- memory ----
  void *m[3];
  for (int t = 0; t < OL_ALLOC_TYPE_LAST; ++t) {
    OK(olMemAlloc(cpu, (ol_alloc_type_t)t, 4096, &m[t]));
    TRUE(m[t] != NULL);
    ol_alloc_type_t got; OK(olGetMemInfo(m[t], OL_MEM_INFO_TYPE, sizeof got, &got)); TRUE(got == (ol_alloc_type_t)t);
  }
  void *base; size_t msize; ol_device_handle_t mdev;
  OK(olGetMemInfo((char *)m[1] + 100, OL_MEM_INFO_BASE, sizeof base, &base)); TRUE(base == m[1]);
  OK(olGetMemInfo(m[1], OL_MEM_INFO_SIZE, sizeof msize, &msize)); TRUE(msize == 4096);
  OK(olGetMemInfo(m[1], OL_MEM_INFO_DEVICE, sizeof mdev, &mdev)); TRUE(mdev == cpu);
  OK(olGetMemInfoSize(m[1], OL_MEM_INFO_SIZE, &sz)); TRUE(sz == sizeof(size_t));
  ERR(olGetMemInfo(&sz, OL_MEM_INFO_SIZE, sizeof msize, &msize), OL_ERRC_NOT_FOUND);
  ERR(olGetMemInfo(NULL, OL_MEM_INFO_SIZE, sizeof msize, &msize), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetMemInfo(m[1], OL_MEM_INFO_SIZE, 0, &msize), OL_ERRC_INVALID_SIZE);
  ERR(olGetMemInfo(m[1], OL_MEM_INFO_SIZE, 4, &msize), OL_ERRC_INVALID_SIZE);
  ERR(olGetMemInfo(m[1], (ol_mem_info_t)55, 8, &msize), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetMemInfoSize(m[1], OL_MEM_INFO_SIZE, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 0, &base), OL_ERRC_INVALID_SIZE);
  ERR(olMemAlloc(NULL, OL_ALLOC_TYPE_DEVICE, 8, &base), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 8, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemAlloc(cpu, (ol_alloc_type_t)9, 8, &base), OL_ERRC_INVALID_ENUMERATION);
  ERR(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 8, &base), OL_ERRC_INVALID_DEVICE); // 22.1 crashes here
  ERR(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, (size_t)1 << 62, &base), OL_ERRC_OUT_OF_RESOURCES);

  // memcpy in every direction, NULL queue = synchronous.
  int64_t src[512], dst[512];
  for (int i = 0; i < 512; ++i) src[i] = i * 3 + 1;
  memset(dst, 0, sizeof dst);
  OK(olMemcpy(NULL, dst, host, src, host, sizeof src)); TRUE(memcmp(dst, src, sizeof src) == 0);
  OK(olMemcpy(NULL, m[1], cpu, src, host, sizeof src));
  void *d1; OK(olMemAlloc(cpu1, OL_ALLOC_TYPE_DEVICE, 4096, &d1));
  OK(olMemcpy(NULL, d1, cpu1, m[1], cpu, sizeof src));
  memset(dst, 0, sizeof dst);
  OK(olMemcpy(NULL, dst, host, d1, cpu1, sizeof src)); TRUE(memcmp(dst, src, sizeof src) == 0);
  OK(olMemcpy(NULL, dst, host, src, host, 0));
  ERR(olMemcpy(NULL, dst, NULL, src, host, 8), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemcpy(NULL, dst, host, src, NULL, 8), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemcpy(NULL, NULL, host, src, host, 8), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemcpy(NULL, dst, host, NULL, host, 8), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemcpy((ol_queue_handle_t)src, dst, host, src, host, 8), OL_ERRC_INVALID_QUEUE);

  // fill with 1/2/4/8-byte and longer patterns
  size_t psz[] = {1, 2, 4, 8, 3, 16, 24};
  for (unsigned k = 0; k < sizeof psz / sizeof psz[0]; ++k) {
    unsigned char pat[24], out[4096];
    for (size_t i = 0; i < psz[k]; ++i) pat[i] = (unsigned char)(0x10 * k + i + 1);
    size_t fill = 4096 / psz[k] * psz[k];
    OK(olMemFill(NULL, m[1], psz[k], pat, fill));
    OK(olMemcpy(NULL, out, host, m[1], cpu, fill));
    for (size_t i = 0; i < fill; ++i) if (out[i] != pat[i % psz[k]]) FAIL("fill pattern %zu at byte %zu", psz[k], i);
    ++checks;
  }
  unsigned char pat4[4] = {1, 2, 3, 4};
  ERR(olMemFill(NULL, m[1], 4, pat4, 10), OL_ERRC_INVALID_SIZE);
  ERR(olMemFill(NULL, NULL, 4, pat4, 8), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemFill(NULL, m[1], 4, NULL, 8), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemFill(NULL, dst, 4, pat4, 8), OL_ERRC_NOT_FOUND); // no queue and not ol* memory

  // register / unregister
  static char big[8192];
  void *pinned = NULL;
  OK(olMemRegister(cpu, big, sizeof big, 0, &pinned)); TRUE(pinned == big);
  // A range inside a registered one counts one more registration of it (as
  // LLVM's memory manager does); a range that overlaps one in part is refused.
  OK(olMemRegister(cpu, big + 16, 16, 0, &pinned)); TRUE(pinned == big + 16);
  ERR(olMemRegister(cpu, big + 16, sizeof big, 0, &pinned), OL_ERRC_INVALID_ARGUMENT);
  OK(olMemUnregister(cpu, big + 16));
  OK(olMemUnregister(cpu, big));
  ERR(olMemUnregister(cpu, big), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemRegister(cpu, big, 0, 0, &pinned), OL_ERRC_INVALID_SIZE);
  ERR(olMemRegister(NULL, big, 8, 0, &pinned), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemRegister(cpu, NULL, 8, 0, &pinned), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemRegister(cpu, big, 8, 0, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemRegister(host, big, 8, 0, &pinned), OL_ERRC_INVALID_DEVICE); // 22.1 crashes here
  ERR(olMemUnregister(NULL, big), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemUnregister(cpu, NULL), OL_ERRC_INVALID_NULL_POINTER);

  // ---- queues and events ----
  ol_queue_handle_t q, q1;
  OK(olCreateQueue(cpu, &q));
  OK(olCreateQueue(cpu1, &q1));
  ERR(olCreateQueue(NULL, &q), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCreateQueue(cpu, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olCreateQueue(host, &q1), OL_ERRC_INVALID_DEVICE); // 22.1 crashes here
  memset(dst, 0, sizeof dst);
  OK(olMemcpy(q, m[2], cpu, src, host, sizeof src));
  OK(olMemcpy(q, dst, host, m[2], cpu, sizeof src));
  OK(olMemFill(q, m[0], 1, pat4, 64));
  int add = 5;
  OK(olLaunchHostFunction(q, host_fn, &add));
  ERR(olLaunchHostFunction(NULL, host_fn, &add), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olLaunchHostFunction(q, NULL, &add), OL_ERRC_INVALID_NULL_POINTER);
  ol_event_handle_t ev;
  OK(olCreateEvent(q, &ev));
  OK(olSyncQueue(q));
  TRUE(memcmp(dst, src, sizeof src) == 0 && host_calls == 5);
  OK(olWaitEvents(q1, &ev, 1));
  OK(olSyncEvent(ev));
  bool flag = false; ol_queue_handle_t eq = NULL; ol_device_handle_t qd = NULL;
  OK(olGetEventInfo(ev, OL_EVENT_INFO_IS_COMPLETE, sizeof flag, &flag)); TRUE(flag);
  OK(olGetEventInfo(ev, OL_EVENT_INFO_QUEUE, sizeof eq, &eq)); TRUE(eq == q);
  OK(olGetEventInfoSize(ev, OL_EVENT_INFO_QUEUE, &sz)); TRUE(sz == sizeof(void *));
  OK(olGetQueueInfo(q, OL_QUEUE_INFO_DEVICE, sizeof qd, &qd)); TRUE(qd == cpu);
  OK(olGetQueueInfo(q, OL_QUEUE_INFO_EMPTY, sizeof flag, &flag)); TRUE(flag);
  OK(olGetQueueInfoSize(q, OL_QUEUE_INFO_EMPTY, &sz)); TRUE(sz == sizeof(bool));
  ERR(olGetQueueInfo(q, (ol_queue_info_t)9, sizeof flag, &flag), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetQueueInfo(q, OL_QUEUE_INFO_DEVICE, 4, &qd), OL_ERRC_INVALID_SIZE);
  ERR(olGetQueueInfo(NULL, OL_QUEUE_INFO_DEVICE, 8, &qd), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetEventInfo(ev, (ol_event_info_t)9, 8, &eq), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetEventInfo(NULL, OL_EVENT_INFO_QUEUE, 8, &eq), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetEventInfo(ev, OL_EVENT_INFO_QUEUE, 8, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olCreateEvent(NULL, &ev), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCreateEvent(q, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ol_event_handle_t nullev = NULL;
  ERR(olWaitEvents(q, &nullev, 1), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olWaitEvents(NULL, &ev, 1), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olWaitEvents(q, NULL, 1), OL_ERRC_INVALID_NULL_POINTER);
  OK(olDestroyEvent(ev));
  ERR(olDestroyEvent(ev), OL_ERRC_INVALID_EVENT); // freed handle
  ERR(olSyncEvent(ev), OL_ERRC_INVALID_EVENT);
  ERR(olSyncEvent(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olSyncQueue(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olDestroyQueue(NULL), OL_ERRC_INVALID_NULL_HANDLE);

  // ---- programs, symbols, kernels ----
  size_t so_size; void *so = read_file(argv[1], &so_size);
  bool valid = true;
  OK(olIsValidBinary(cpu, so, so_size, &valid)); TRUE(valid);
  OK(olIsValidBinary(host, so, so_size, &valid)); TRUE(!valid);
  static const char garbage[] = "this is not an image";
  OK(olIsValidBinary(cpu, garbage, sizeof garbage, &valid)); TRUE(!valid);
  ERR(olIsValidBinary(NULL, so, so_size, &valid), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olIsValidBinary(cpu, NULL, so_size, &valid), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olIsValidBinary(cpu, so, so_size, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ol_program_handle_t prog, prog1;
  ERR(olCreateProgram(cpu, garbage, sizeof garbage, &prog), OL_ERRC_INVALID_BINARY);
  ERR(olCreateProgram(cpu, so, 100, &prog), OL_ERRC_INVALID_BINARY);  // truncated
  ERR(olCreateProgram(cpu, so, 4096, &prog), OL_ERRC_INVALID_BINARY); // truncated
  ERR(olCreateProgram(host, so, so_size, &prog), OL_ERRC_INVALID_DEVICE); // 22.1 crashes here
  ERR(olCreateProgram(NULL, so, so_size, &prog), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCreateProgram(cpu, NULL, so_size, &prog), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olCreateProgram(cpu, so, so_size, NULL), OL_ERRC_INVALID_NULL_POINTER);
  OK(olCreateProgram(cpu, so, so_size, &prog));
  OK(olCreateProgram(cpu1, so, so_size, &prog1));
  ol_symbol_handle_t vadd, sum10, bump, empty, gcounter, gcounter1, again;
  OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));
  OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &again)); TRUE(again == vadd);
  OK(olGetSymbol(prog, "sum10", OL_SYMBOL_KIND_KERNEL, &sum10));
  OK(olGetSymbol(prog, "bump", OL_SYMBOL_KIND_KERNEL, &bump));
  OK(olGetSymbol(prog, "empty", OL_SYMBOL_KIND_KERNEL, &empty));
  OK(olGetSymbol(prog, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &gcounter));
  OK(olGetSymbol(prog1, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &gcounter1));
  ERR(olGetSymbol(prog, "nope", OL_SYMBOL_KIND_KERNEL, &again), OL_ERRC_NOT_FOUND);
  ERR(olGetSymbol(prog, "nope", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &again), OL_ERRC_NOT_FOUND);
  ERR(olGetSymbol(prog, "vadd", (ol_symbol_kind_t)7, &again), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetSymbol(NULL, "vadd", OL_SYMBOL_KIND_KERNEL, &again), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetSymbol(prog, NULL, OL_SYMBOL_KIND_KERNEL, &again), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ol_symbol_kind_t kind; void *gaddr; size_t gsize;
  OK(olGetSymbolInfo(vadd, OL_SYMBOL_INFO_KIND, sizeof kind, &kind)); TRUE(kind == OL_SYMBOL_KIND_KERNEL);
  OK(olGetSymbolInfo(gcounter, OL_SYMBOL_INFO_KIND, sizeof kind, &kind)); TRUE(kind == OL_SYMBOL_KIND_GLOBAL_VARIABLE);
  OK(olGetSymbolInfo(gcounter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof gsize, &gsize)); TRUE(gsize == 8);
  OK(olGetSymbolInfo(gcounter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr));
  OK(olGetSymbolInfoSize(gcounter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, &sz)); TRUE(sz == sizeof(void *));
  ERR(olGetSymbolInfo(vadd, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof gsize, &gsize), OL_ERRC_SYMBOL_KIND);
  ERR(olGetSymbolInfoSize(vadd, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, &sz), OL_ERRC_SYMBOL_KIND);
  ERR(olGetSymbolInfo(vadd, (ol_symbol_info_t)8, 8, &gsize), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetSymbolInfo(NULL, OL_SYMBOL_INFO_KIND, 4, &kind), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetSymbolInfo(vadd, OL_SYMBOL_INFO_KIND, 0, &kind), OL_ERRC_INVALID_SIZE);
  int64_t cval = 0;
  OK(olMemcpy(NULL, &cval, host, gaddr, cpu, 8)); TRUE(cval == 7);

  // vadd(out, a, b, n) on device memory
  int64_t *da, *db, *dout;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64 * 8, (void **)&da));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64 * 8, (void **)&db));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64 * 8, (void **)&dout));
  int64_t ha[64], hb[64], hout[64];
  for (int i = 0; i < 64; ++i) { ha[i] = i; hb[i] = 1000 * i; }
  OK(olMemcpy(q, da, cpu, ha, host, sizeof ha));
  OK(olMemcpy(q, db, cpu, hb, host, sizeof hb));
  struct { int64_t *out, *a, *b; int64_t n; } args = {dout, da, db, 64};
  ol_kernel_launch_size_args_t ls = {.Dimensions = 1, .NumGroups = {1, 1, 1}, .GroupSize = {1, 1, 1}, .DynSharedMemory = 0};
  OK(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &ls));
  OK(olMemcpy(q, hout, host, dout, cpu, sizeof hout));
  OK(olSyncQueue(q));
  for (int i = 0; i < 64; ++i) if (hout[i] != 1001 * i) FAIL("vadd[%d] = %lld", i, (long long)hout[i]);
  ++checks;
  struct { int64_t *out; int64_t v[9]; } a10 = {dout, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  OK(olLaunchKernel(NULL, cpu, sum10, &a10, sizeof a10, &ls));
  OK(olMemcpy(NULL, hout, host, dout, cpu, 8)); TRUE(hout[0] == 285);
  OK(olLaunchKernel(q, cpu, bump, NULL, 0, &ls));
  OK(olLaunchKernel(q, cpu, empty, NULL, 0, &(ol_kernel_launch_size_args_t){3, {1, 1, 1}, {1, 1, 1}, 0}));
  // A CPU device runs a kernel once, on one thread: larger grids are refused, not shrunk.
  ERR(olLaunchKernel(q, cpu, empty, NULL, 0, &(ol_kernel_launch_size_args_t){3, {4, 5, 6}, {7, 8, 9}, 0}), OL_ERRC_INVALID_ARGUMENT);
  ERR(olLaunchKernel(q, cpu, empty, NULL, 0, &(ol_kernel_launch_size_args_t){1, {1, 1, 1}, {64, 1, 1}, 0}), OL_ERRC_INVALID_ARGUMENT);
  OK(olSyncQueue(q));
  OK(olMemcpy(NULL, &cval, host, gaddr, cpu, 8)); TRUE(cval == 8);
  OK(olGetSymbolInfo(gcounter1, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr));
  OK(olMemcpy(NULL, &cval, host, gaddr, cpu1, 8)); TRUE(cval == 7); // each device has its own copy
  ERR(olLaunchKernel(q, cpu, vadd, NULL, 8, &ls), OL_ERRC_INVALID_ARGUMENT);
  ERR(olLaunchKernel(q, NULL, vadd, &args, sizeof args, &ls), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olLaunchKernel(q, cpu, NULL, &args, sizeof args, &ls), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olLaunchKernel(q, cpu, vadd, &args, sizeof args, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olLaunchKernel(q, cpu, gcounter, &args, sizeof args, &ls), OL_ERRC_SYMBOL_KIND);
  ERR(olLaunchKernel(q1, cpu, vadd, &args, sizeof args, &ls), OL_ERRC_INVALID_DEVICE); // queue of another device
  ERR(olLaunchKernel(q1, cpu1, vadd, &args, sizeof args, &ls), OL_ERRC_INVALID_DEVICE); // kernel of another device
  ERR(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &(ol_kernel_launch_size_args_t){0, {1, 1, 1}, {1, 1, 1}, 0}), OL_ERRC_INVALID_ARGUMENT);
  size_t group = 0;
  OK(olCalculateOptimalOccupancy(cpu, vadd, 0, &group)); TRUE(group == 1);
  ERR(olCalculateOptimalOccupancy(cpu, gcounter, 0, &group), OL_ERRC_SYMBOL_KIND);
  ERR(olCalculateOptimalOccupancy(NULL, vadd, 0, &group), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCalculateOptimalOccupancy(cpu, NULL, 0, &group), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCalculateOptimalOccupancy(cpu, vadd, 0, NULL), OL_ERRC_INVALID_NULL_POINTER);

  OK(olDestroyProgram(prog1));
  ERR(olDestroyProgram(prog1), OL_ERRC_INVALID_ARGUMENT); // freed handle
  ERR(olGetSymbolInfo(gcounter1, OL_SYMBOL_INFO_KIND, sizeof kind, &kind), OL_ERRC_INVALID_ARGUMENT); // went with its program
  ERR(olDestroyProgram(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  OK(olDestroyQueue(q1));
  ERR(olDestroyQueue(q1), OL_ERRC_INVALID_QUEUE);
  ERR(olSyncQueue(q1), OL_ERRC_INVALID_QUEUE);
  for (int t = 0; t < 3; ++t) OK(olMemFree(m[t]));
  ERR(olMemFree(m[0]), OL_ERRC_INVALID_ARGUMENT); // double free
  ERR(olMemFree(src), OL_ERRC_INVALID_ARGUMENT);
  OK(olMemFree(d1));
  OK(olShutDown());
  ERR(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 8, &base), OL_ERRC_UNINITIALIZED);
  printf("ok %d checks\n", checks);
  return 0;
}
