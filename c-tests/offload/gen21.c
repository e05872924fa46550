// LLVM 21's liboffload API on omptarget-rs: compiled against our 21 header
// (include/liboffload-21/offload/OffloadAPI.h) and linked against
// libLLVMOffload.so.21.1, the shim cargo build leaves, which forwards to the
// one runtime. Success and the documented errors of every entry point 21
// has, above all those it names or shapes differently from 22.1:
// olGetKernel, olWaitQueue, olWaitEvent, the EventOut parameters of olMemcpy
// and olLaunchKernel, 21's device-info numbering and its backend values.
// Prints "ok N checks"; exit 1 on the first failure.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <offload/OffloadAPI.h>

_Static_assert(OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE == 5, "21's numbering");
_Static_assert(OL_PLATFORM_BACKEND_HOST == 3, "21's backend values");

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

int main(int argc, char **argv) {
  if (argc < 2) FAIL("usage: gen21 KERNEL.so");

  // ---- olInit / olShutDown ----
  ERR(olIterateDevices(collect, NULL), OL_ERRC_UNINITIALIZED);
  ERR(olShutDown(), OL_ERRC_UNINITIALIZED);
  OK(olInit());
  OK(olInit());
  OK(olShutDown());
  OK(olIterateDevicesWithCodeLoc(collect, NULL, NULL));
  ERR(olIterateDevices(NULL, NULL), OL_ERRC_INVALID_NULL_POINTER);

  // ---- devices: CPU devices, then the virtual host device last ----
  TRUE(ndevs >= 2);
  ol_device_handle_t cpu = NULL, host = devs[ndevs - 1];
  for (int i = 0; i < ndevs; ++i) {
    ol_device_type_t t;
    OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_TYPE, sizeof t, &t));
    if (t == OL_DEVICE_TYPE_CPU && !cpu) cpu = devs[i];
    if (i == ndevs - 1) TRUE(t == OL_DEVICE_TYPE_HOST);
  }
  TRUE(cpu != NULL);
  char name[128], vendor[128], driver[128];
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, sizeof name, name));
  TRUE(!strcmp(name, "Virtual Host Device"));
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_NAME, sizeof name, name));
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_VENDOR, sizeof vendor, vendor));
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_DRIVER_VERSION, sizeof driver, driver));
  TRUE(name[0] && vendor[0] && driver[0]);
  size_t sz = 0;
  OK(olGetDeviceInfoSize(cpu, OL_DEVICE_INFO_VENDOR, &sz));
  TRUE(sz == strlen(vendor) + 1);
  OK(olGetDeviceInfoSize(cpu, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, &sz));
  TRUE(sz == sizeof(ol_dimensions_t));
  ol_dimensions_t wg;
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof wg, &wg));
  TRUE(wg.x == 1 && wg.y == 1 && wg.z == 1);
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, sizeof wg, &wg));
  ERR(olGetDeviceInfo(cpu, OL_DEVICE_INFO_LAST, sizeof wg, &wg), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetDeviceInfo(cpu, (ol_device_info_t)6, sizeof wg, &wg), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetDeviceInfo(cpu, OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, 4, &wg), OL_ERRC_INVALID_SIZE);
  ERR(olGetDeviceInfo(cpu, OL_DEVICE_INFO_NAME, 0, name), OL_ERRC_INVALID_SIZE);
  ERR(olGetDeviceInfo(NULL, OL_DEVICE_INFO_NAME, sizeof name, name), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetDeviceInfo(cpu, OL_DEVICE_INFO_NAME, sizeof name, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetDeviceInfo((ol_device_handle_t)name, OL_DEVICE_INFO_NAME, sizeof name, name), OL_ERRC_INVALID_DEVICE);
  ERR(olGetDeviceInfoSize(cpu, OL_DEVICE_INFO_NAME, NULL), OL_ERRC_INVALID_NULL_POINTER);

  // ---- platforms: the host's backend is 21's HOST (3) ----
  ol_platform_handle_t hp, cp;
  OK(olGetDeviceInfo(host, OL_DEVICE_INFO_PLATFORM, sizeof hp, &hp));
  OK(olGetDeviceInfo(cpu, OL_DEVICE_INFO_PLATFORM, sizeof cp, &cp));
  ol_platform_backend_t b;
  OK(olGetPlatformInfo(hp, OL_PLATFORM_INFO_BACKEND, sizeof b, &b));
  TRUE(b == OL_PLATFORM_BACKEND_HOST);
  OK(olGetPlatformInfo(cp, OL_PLATFORM_INFO_BACKEND, sizeof b, &b));
  TRUE(b == OL_PLATFORM_BACKEND_UNKNOWN);
  OK(olGetPlatformInfoSize(cp, OL_PLATFORM_INFO_NAME, &sz));
  TRUE(sz > 1);
  ERR(olGetPlatformInfo(cp, OL_PLATFORM_INFO_LAST, sizeof b, &b), OL_ERRC_INVALID_ENUMERATION);
  ERR(olGetPlatformInfo(NULL, OL_PLATFORM_INFO_BACKEND, sizeof b, &b), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetPlatformInfoSize(cp, OL_PLATFORM_INFO_NAME, NULL), OL_ERRC_INVALID_NULL_POINTER);

  // ---- memory and copies with EventOut ----
  enum { N = 64 };
  int64_t h[N], back[N];
  for (int i = 0; i < N; ++i) h[i] = i * 3;
  int64_t *d;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&d));
  ERR(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 0, (void **)&d), OL_ERRC_INVALID_SIZE);
  ERR(olMemAlloc(NULL, OL_ALLOC_TYPE_DEVICE, 8, (void **)&d), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 8, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 8, (void **)&back), OL_ERRC_INVALID_DEVICE);
  ol_queue_handle_t q;
  OK(olCreateQueue(cpu, &q));
  ERR(olCreateQueue(NULL, &q), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCreateQueue(cpu, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ol_event_handle_t ev = NULL, ev2 = NULL;
  OK(olMemcpy(q, d, cpu, h, host, sizeof h, &ev));
  TRUE(ev != NULL);
  OK(olMemcpy(q, back, host, d, cpu, sizeof h, NULL));
  OK(olWaitQueue(q));
  TRUE(!memcmp(h, back, sizeof h));
  OK(olWaitEvent(ev));
  OK(olDestroyEvent(ev));
  ERR(olWaitEvent(ev), OL_ERRC_INVALID_EVENT);
  ERR(olDestroyEvent(ev), OL_ERRC_INVALID_EVENT);
  ERR(olWaitEvent(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olDestroyEvent(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olWaitQueue(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  // Without a queue the copy is done when the call returns; its event is complete.
  memset(back, 0, sizeof back);
  OK(olMemcpy(NULL, back, host, d, cpu, sizeof h, &ev2));
  TRUE(ev2 != NULL && !memcmp(h, back, sizeof h));
  OK(olWaitEvent(ev2));
  OK(olDestroyEvent(ev2));
  // Host to host: a plain copy without a queue (no device, no event), refused with one.
  int64_t other[N];
  ev2 = (ol_event_handle_t)&other;
  OK(olMemcpy(NULL, other, host, h, host, sizeof h, &ev2));
  TRUE(ev2 == NULL && !memcmp(h, other, sizeof h));
  ERR(olMemcpy(q, other, host, h, host, sizeof h, NULL), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(q, NULL, host, h, cpu, 8, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olMemcpy(q, other, NULL, h, cpu, 8, NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olMemcpy(q, d + N, cpu, h, host, 8, NULL), OL_ERRC_INVALID_ARGUMENT); // past the block's end

  // ---- programs and kernels: olGetKernel, olLaunchKernel with EventOut ----
  size_t psize;
  void *prog = read_file(argv[1], &psize);
  ol_program_handle_t p;
  OK(olCreateProgram(cpu, prog, psize, &p));
  ERR(olCreateProgram(cpu, "garbage", 7, &p), OL_ERRC_INVALID_BINARY);
  ERR(olCreateProgram(NULL, prog, psize, &p), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olCreateProgram(cpu, NULL, psize, &p), OL_ERRC_INVALID_NULL_POINTER);
  ol_kernel_handle_t vadd, bump, k;
  OK(olGetKernel(p, "vadd", &vadd));
  OK(olGetKernelWithCodeLoc(p, "bump", &bump, NULL));
  OK(olGetKernel(p, "vadd", &k));
  TRUE(k == vadd);
  ERR(olGetKernel(p, "no_such_kernel", &k), OL_ERRC_NOT_FOUND);
  ERR(olGetKernel(p, "counter", &k), OL_ERRC_NOT_FOUND); // a global, not a kernel
  ERR(olGetKernel(NULL, "vadd", &k), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olGetKernel(p, NULL, &k), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olGetKernel(p, "vadd", NULL), OL_ERRC_INVALID_NULL_POINTER);

  int64_t *a, *bb, *out;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&a));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&bb));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof h, (void **)&out));
  OK(olMemcpy(q, a, cpu, h, host, sizeof h, NULL));
  OK(olMemcpy(q, bb, cpu, h, host, sizeof h, NULL));
  struct { int64_t *out, *a, *b; int64_t n; } args = {out, a, bb, N};
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  ol_event_handle_t kev = NULL;
  OK(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &ls, &kev));
  TRUE(kev != NULL);
  OK(olWaitEvent(kev));
  OK(olMemcpy(NULL, back, host, out, cpu, sizeof h, NULL));
  for (int i = 0; i < N; ++i) TRUE(back[i] == 2 * h[i]);
  OK(olDestroyEvent(kev));
  // Synchronous launch with an event: complete when the call returns.
  OK(olLaunchKernel(NULL, cpu, bump, NULL, 0, &ls, &kev));
  OK(olWaitEvent(kev));
  OK(olDestroyEvent(kev));
  OK(olLaunchKernelWithCodeLoc(q, cpu, bump, NULL, 0, &ls, NULL, NULL));
  OK(olWaitQueueWithCodeLoc(q, NULL));
  ERR(olLaunchKernel(q, NULL, vadd, &args, sizeof args, &ls, NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olLaunchKernel(q, cpu, NULL, &args, sizeof args, &ls, NULL), OL_ERRC_INVALID_NULL_HANDLE);
  ERR(olLaunchKernel(q, cpu, vadd, &args, sizeof args, NULL, NULL), OL_ERRC_INVALID_NULL_POINTER);
  ERR(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &(ol_kernel_launch_size_args_t){1, {1, 1, 1}, {64, 1, 1}, 0}, NULL),
      OL_ERRC_INVALID_ARGUMENT);
  ERR(olLaunchKernel(q, host, vadd, &args, sizeof args, &ls, NULL), OL_ERRC_INVALID_DEVICE);

  OK(olMemFree(a));
  OK(olMemFree(bb));
  OK(olMemFree(out));
  OK(olMemFree(d));
  ERR(olMemFree(d), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemFree(NULL), OL_ERRC_INVALID_NULL_POINTER);
  OK(olDestroyProgram(p));
  ERR(olDestroyProgram(p), OL_ERRC_INVALID_ARGUMENT);
  ERR(olDestroyProgram(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  OK(olDestroyQueue(q));
  ERR(olDestroyQueue(q), OL_ERRC_INVALID_QUEUE);
  ERR(olDestroyQueue(NULL), OL_ERRC_INVALID_NULL_HANDLE);
  OK(olShutDownWithCodeLoc(NULL));
  ERR(olMemFree(d), OL_ERRC_UNINITIALIZED);
  free(prog);
  printf("ok %d checks\n", checks);
  return 0;
}
