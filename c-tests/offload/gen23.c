// LLVM 23's liboffload API on omptarget-rs: compiled against our 23 header
// (include/liboffload-23/offload/OffloadAPI.h) and linked against
// libLLVMOffload.so.23.1 (main's name libLLVMOffload.so.23.0git is a symlink
// to it), the shim cargo build leaves, which forwards to the one runtime.
// Success and the documented errors of every entry point 23 adds or changes:
// olInit's arguments, the device model (the host plugin is a platform of
// backend HOST whose devices are host devices; no virtual host device),
// olQueryQueue, olGetEventElapsedTime, olPlatformRegisterRPCCallback, the
// register flags of olMemRegister/olMemUnregister, the *_FP_SUPPORT
// properties, a queued host-to-host olMemcpy refused; and 22.1's entry points
// in 23's model. Prints "ok N checks"; exit 1 on the first failure.
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <offload/OffloadAPI.h>

_Static_assert(sizeof(ol_init_args_t) == 24, "ol_init_args_t layout");
_Static_assert(OL_DEVICE_INFO_HALF_FP_SUPPORT == 31 && OL_DEVICE_INFO_LAST == 32, "23's numbering");

static int checks;
#define FAIL(...) do { fprintf(stderr, "FAIL line %d: ", __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define OK(call) do { ol_result_t r_ = (call); ++checks; if (r_) FAIL("%s -> %d %s", #call, r_->Code, r_->Details ? r_->Details : "(null)"); } while (0)
#define ERR(call, code) do { ol_result_t r_ = (call); ++checks; if (!r_) FAIL("%s succeeded, expected %s", #call, #code); \
    if (r_->Code != (code)) FAIL("%s -> %d (%s), expected %s", #call, r_->Code, r_->Details ? r_->Details : "(null)", #code); \
    if (!r_->Details) FAIL("%s: no details", #call); } while (0)
#define TRUE(c) do { ++checks; if (!(c)) FAIL("%s", #c); } while (0)

static ol_device_handle_t devs[64];
static int ndevs;
static bool collect(ol_device_handle_t d, void *ud) { (void)ud; devs[ndevs++] = d; return true; }

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb"); if (!f) FAIL("open %s", path);
  fseek(f, 0, SEEK_END); *size = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *b = malloc(*size); if (fread(b, 1, *size, f) != *size) FAIL("read %s", path); fclose(f); return b;
}

static atomic_int gate;
static void wait_gate(void *ud) { (void)ud; while (!atomic_load(&gate)) { struct timespec t = {0, 1000000}; nanosleep(&t, NULL); } }
static void sleep_ms(void *ud) { struct timespec t = {0, (long)(intptr_t)ud * 1000000L}; nanosleep(&t, NULL); }
static uint32_t rpc_handler(void *port, unsigned lanes) { (void)port; (void)lanes; return 0; }

int main(int argc, char **argv) {
  if (argc < 2) FAIL("usage: gen23 KERNEL.so");

  // ---- olInit: arguments checked at the first call ----
  ERR(olIterateDevices(collect, NULL), OL_ERRC_UNINITIALIZED);
  ol_init_args_t args = OL_INIT_ARGS_INIT;
  args.Size = 0;
  ERR(olInit(&args), OL_ERRC_INVALID_SIZE);
  args.Size = sizeof args;
  args.NumPlatforms = 1;
  ERR(olInit(&args), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olIterateDevices(collect, NULL), OL_ERRC_UNINITIALIZED); // the failed calls initialised nothing
  // Only the CUDA backend asked for: the host plugin is always there.
  ol_platform_backend_t want[] = {OL_PLATFORM_BACKEND_CUDA};
  args.Platforms = want;
  OK(olInit(&args));
  OK(olIterateDevices(collect, NULL));
  int only_cuda = ndevs;
  TRUE(only_cuda >= 1);
  OK(olShutDown());
  ol_init_args_t host_only = OL_INIT_ARGS_INIT;
  ol_platform_backend_t hb[] = {OL_PLATFORM_BACKEND_HOST};
  host_only.NumPlatforms = 1;
  host_only.Platforms = hb;
  OK(olInit(&host_only));
  OK(olInit(NULL)); // counted; the first call's choice holds
  OK(olShutDown());
  ndevs = 0;
  OK(olIterateDevices(collect, NULL));
  TRUE(ndevs >= 4);

  // ---- device model: the first device of backend HOST is a real CPU device ----
  ol_device_handle_t host = NULL, cpu1 = NULL;
  int nhost = 0;
  for (int i = 0; i < ndevs; ++i) {
    ol_platform_handle_t p;
    ol_platform_backend_t b;
    ol_device_type_t t;
    char name[128];
    OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_PLATFORM, sizeof p, &p));
    OK(olGetPlatformInfo(p, OL_PLATFORM_INFO_BACKEND, sizeof b, &b));
    OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_TYPE, sizeof t, &t));
    OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_NAME, sizeof name, name));
    TRUE(strcmp(name, "Virtual Host Device") != 0);
    if (b == OL_PLATFORM_BACKEND_HOST) {
      TRUE(t == OL_DEVICE_TYPE_HOST);
      if (!host) host = devs[i];
      else if (!cpu1) cpu1 = devs[i];
      ++nhost;
    }
  }
  TRUE(host && cpu1 && nhost >= 4);
  char uid[64];
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_UID, sizeof uid, uid));
  TRUE(!strcmp(uid, "x86_64-0"));

  // ---- the *_FP_SUPPORT properties (bool) ----
  bool fp;
  size_t sz;
  OK(olGetDeviceInfoSize(host, OL_DEVICE_INFO_SINGLE_FP_SUPPORT, &sz));
  TRUE(sz == sizeof(bool));
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_SINGLE_FP_SUPPORT, sizeof fp, &fp));
  TRUE(fp);
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_DOUBLE_FP_SUPPORT, sizeof fp, &fp));
  TRUE(fp);
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_HALF_FP_SUPPORT, sizeof fp, &fp));
  TRUE(!fp);
  ERR(olGetDeviceInfo(host, OL_DEVICE_INFO_LAST, sizeof fp, &fp), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetDeviceInfo(host, OL_DEVICE_INFO_HALF_FP_SUPPORT, 0, &fp), OL_ERRC_INVALID_SIZE);
  ERR(olGetDeviceInfo(NULL, OL_DEVICE_INFO_HALF_FP_SUPPORT, sizeof fp, &fp), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetDeviceInfoSize(host, OL_DEVICE_INFO_LAST, &sz), OL_ERRC_INVALID_ENUMERATION);
  uint32_t wg;
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof wg, &wg));
  TRUE(wg == 1);

  // ---- olPlatformRegisterRPCCallback ----
  ol_platform_handle_t hp;
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_PLATFORM, sizeof hp, &hp));
  OK(olPlatformRegisterRPCCallback(hp, rpc_handler));
  OK(olPlatformRegisterRPCCallbackWithCodeLoc(hp, rpc_handler, NULL)); // again: kept once
  ERR(olPlatformRegisterRPCCallback(NULL, rpc_handler), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olPlatformRegisterRPCCallback(hp, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olPlatformRegisterRPCCallback((ol_platform_handle_t)&hp, rpc_handler), OL_ERRC_INVALID_PLATFORM);

  // ---- memory on a host device; copies between host ends ----
  enum { N = 64 };
  int64_t h[N], back[N];
  for (int i = 0; i < N; ++i) h[i] = 5 * i;
  int64_t *d;
  OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&d));
  ol_device_handle_t owner;
  OK(olGetMemInfo(d + 3, OL_MEM_INFO_DEVICE, sizeof owner, &owner));
  TRUE(owner == host);
  OK(olMemcpy(NULL, d, host, h, host, sizeof h));
  OK(olMemcpy(NULL, back, host, d, host, sizeof h));
  TRUE(!memcmp(h, back, sizeof h));
  ol_queue_handle_t q, q1;
  OK(olCreateQueue(host, &q));
  OK(olCreateQueue(cpu1, &q1));
  ERR(olMemcpy(q, d, host, h, host, sizeof h), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(q, d, host, h, cpu1, sizeof h), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(q, NULL, host, h, host, sizeof h), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemcpy(q, d, NULL, h, host, sizeof h), OL_ERRC_INVALID_NULL_HANDLE);
  int64_t fill = 9;
  OK(olMemFill(q, d, sizeof fill, &fill, sizeof h));
  OK(olSyncQueue(q));
  OK(olMemcpy(NULL, back, host, d, host, sizeof h));
  TRUE(back[0] == 9 && back[N - 1] == 9);

  // ---- olMemRegister / olMemUnregister with flags ----
  static int64_t pinned_buf[128];
  void *locked = NULL;
  OK(olMemRegister(host, pinned_buf, sizeof pinned_buf, OL_MEMORY_REGISTER_FLAG_LOCK_MEMORY, &locked));
  TRUE(locked == pinned_buf);
  OK(olMemRegister(host, pinned_buf + 8, 64, 0, &locked)); // inside: one more registration
  ERR(olMemRegister(host, pinned_buf + 120, 128, 0, &locked), OL_ERRC_INVALID_ARGUMENT); // overlaps in part
  OK(olMemUnregister(host, pinned_buf, 0));
  OK(olMemUnregister(host, pinned_buf, OL_MEMORY_REGISTER_FLAG_UNLOCK_MEMORY));
  ERR(olMemUnregister(host, pinned_buf, OL_MEMORY_REGISTER_FLAG_UNLOCK_MEMORY), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemUnregister(NULL, pinned_buf, 0), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemUnregister(host, NULL, 0), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemRegister(host, pinned_buf, 0, 0, &locked), OL_ERRC_INVALID_SIZE);
  ERR(olMemRegister(host, pinned_buf, 8, 0, NULL), OL_ERRC_INVALID_NULL_POINTER);

  // ---- olQueryQueue: non-blocking ----
  bool done = true;
  atomic_store(&gate, 0);
  OK(olLaunchHostFunction(q, wait_gate, NULL));
  OK(olQueryQueue(q, &done));
  TRUE(!done);
  OK(olQueryQueue(q, NULL)); // the output is optional
  atomic_store(&gate, 1);
  OK(olSyncQueue(q));
  OK(olQueryQueueWithCodeLoc(q, &done, NULL));
  TRUE(done);
  ERR(olQueryQueue(NULL, &done), OL_ERRC_INVALID_NULL_HANDLE);

  // ---- olGetEventElapsedTime: real timestamps, milliseconds ----
  ol_event_handle_t e0, e1, e2, other;
  OK(olCreateEvent(q, &e0));
  OK(olLaunchHostFunction(q, sleep_ms, (void *)(intptr_t)30));
  OK(olCreateEvent(q, &e1));
  OK(olCreateEvent(q1, &other));
  float ms = -1;
  OK(olGetEventElapsedTime(e0, e1, &ms)); // waits for both
  TRUE(ms >= 25.0f && ms < 5000.0f);
  OK(olCreateEvent(q, &e2)); // reached already: at creation time
  OK(olGetEventElapsedTimeWithCodeLoc(e1, e2, &ms, NULL));
  TRUE(ms >= 0.0f);
  ERR(olGetEventElapsedTime(e0, other, &ms), OL_ERRC_INVALID_DEVICE);
  ERR(olGetEventElapsedTime(NULL, e1, &ms), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetEventElapsedTime(e0, NULL, &ms), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetEventElapsedTime(e0, e1, NULL), OL_ERRC_INVALID_NULL_POINTER);
  OK(olDestroyEvent(e2));
  ERR(olGetEventElapsedTime(e0, e2, &ms), OL_ERRC_INVALID_EVENT);
  OK(olDestroyEvent(e0));
  OK(olDestroyEvent(e1));
  OK(olDestroyEvent(other));

  // ---- programs and kernels on a host device ----
  size_t psize;
  void *prog = read_file(argv[1], &psize);
  ol_program_handle_t p;
  bool valid = false;
  OK(olIsValidBinary(host, prog, psize, &valid));
  TRUE(valid);
  OK(olCreateProgram(host, prog, psize, &p));
  ol_symbol_handle_t vadd;
  OK(olGetSymbol(p, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));
  int64_t *a, *out;
  OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&a));
  OK(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&out));
  OK(olMemcpy(NULL, a, host, h, host, sizeof h));
  struct { int64_t *out, *a, *b; int64_t n; } kargs = {out, a, a, N};
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  OK(olLaunchKernel(q, host, vadd, &kargs, sizeof kargs, &ls));
  OK(olSyncQueue(q));
  OK(olMemcpy(NULL, back, host, out, host, sizeof h));
  for (int i = 0; i < N; ++i) TRUE(back[i] == 2 * h[i]);
  ERR(olLaunchKernel(q1, host, vadd, &kargs, sizeof kargs, &ls), OL_ERRC_INVALID_DEVICE); // the queue is another device's

  OK(olMemFree(a));
  OK(olMemFree(out));
  OK(olMemFree(d));
  OK(olDestroyProgram(p));
  OK(olDestroyQueue(q));
  ERR(olQueryQueue(q, &done), OL_ERRC_INVALID_QUEUE);
  OK(olDestroyQueue(q1));
  OK(olShutDownWithCodeLoc(NULL));
  ERR(olQueryQueue(q, &done), OL_ERRC_UNINITIALIZED);
  free(prog);
  printf("ok %d checks\n", checks);
  return 0;
}
