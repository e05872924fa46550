// Differential check against LLVM 22.1's liboffload: calls that 22.1 answers
// without a GPU (init counting, the virtual host device, validation of NULL
// handles, sizes and enumerations), each printed as "call -> code: details".
// c-tests/offload/run.sh runs it on LLVM's library and on ours and compares
// the two outputs (minus the lines named in diff.divergence).
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <offload/OffloadAPI.h>

static void show(const char *what, ol_result_t r) {
  if (!r) printf("%s -> OL_SUCCESS\n", what);
  else printf("%s -> %d: %s\n", what, r->Code, r->Details ? r->Details : "(null)");
}
#define SHOW(call) show(#call, call)

static ol_device_handle_t host;
static bool find_host(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  if (!olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t) && t == OL_DEVICE_TYPE_HOST) host = d;
  return true;
}

int main(void) {
  char buf[256];
  size_t sz = 0;
  SHOW(olGetDeviceInfo(NULL, OL_DEVICE_INFO_NAME, sizeof buf, buf));
  SHOW(olShutDown());
  SHOW(olInit());
  SHOW(olInit());
  SHOW(olShutDown());
  SHOW(olIterateDevices(find_host, NULL));
  printf("host device found: %s\n", host ? "yes" : "no");
  SHOW(olIterateDevices(NULL, NULL));
  for (int p = 0; p < OL_DEVICE_INFO_LAST; ++p) {
    if (p == OL_DEVICE_INFO_PLATFORM || p == OL_DEVICE_INFO_DRIVER_VERSION || p == OL_DEVICE_INFO_VENDOR) continue;
    memset(buf, 0, sizeof buf);
    ol_result_t r = olGetDeviceInfoSize(host, (ol_device_info_t)p, &sz);
    ol_result_t s = olGetDeviceInfo(host, (ol_device_info_t)p, sizeof buf, buf);
    uint64_t v = 0;
    memcpy(&v, buf, 8);
    printf("device info %d: size %s %zu, value %s [%s] %#llx\n", p, r ? "error" : "ok", sz, s ? "error" : "ok",
           sz > 8 && !s ? buf : "", (unsigned long long)(sz <= 8 ? v : 0));
  }
  SHOW(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, 0, buf));
  SHOW(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, 3, buf));
  SHOW(olGetDeviceInfo(NULL, OL_DEVICE_INFO_NAME, sizeof buf, buf));
  SHOW(olGetDeviceInfo(host, OL_DEVICE_INFO_NAME, sizeof buf, NULL));
  SHOW(olGetDeviceInfo(NULL, OL_DEVICE_INFO_NAME, 0, NULL));
  SHOW(olGetDeviceInfo(host, (ol_device_info_t)999, sizeof buf, buf));
  SHOW(olGetDeviceInfoSize(host, (ol_device_info_t)999, &sz));
  SHOW(olGetDeviceInfoSize(NULL, OL_DEVICE_INFO_NAME, &sz));
  SHOW(olGetDeviceInfoSize(host, OL_DEVICE_INFO_NAME, NULL));
  ol_platform_handle_t plat = NULL;
  SHOW(olGetDeviceInfo(host, OL_DEVICE_INFO_PLATFORM, sizeof plat, &plat));
  for (int p = 0; p < OL_PLATFORM_INFO_LAST; ++p) {
    memset(buf, 0, sizeof buf);
    ol_result_t r = olGetPlatformInfoSize(plat, (ol_platform_info_t)p, &sz);
    ol_result_t s = olGetPlatformInfo(plat, (ol_platform_info_t)p, sizeof buf, buf);
    printf("platform info %d: size %s %zu, value %s [%s]\n", p, r ? "error" : "ok", sz, s ? "error" : "ok", sz > 4 ? buf : "");
  }
  SHOW(olGetPlatformInfo(plat, OL_PLATFORM_INFO_NAME, 0, buf));
  SHOW(olGetPlatformInfo(plat, OL_PLATFORM_INFO_NAME, 2, buf));
  SHOW(olGetPlatformInfo(NULL, OL_PLATFORM_INFO_NAME, sizeof buf, buf));
  SHOW(olGetPlatformInfo(plat, OL_PLATFORM_INFO_NAME, sizeof buf, NULL));
  SHOW(olGetPlatformInfo(plat, (ol_platform_info_t)999, sizeof buf, buf));
  SHOW(olGetPlatformInfoSize(plat, (ol_platform_info_t)999, &sz));
  SHOW(olGetPlatformInfoSize(NULL, OL_PLATFORM_INFO_NAME, &sz));
  SHOW(olGetPlatformInfoSize(plat, OL_PLATFORM_INFO_NAME, NULL));
  void *p = NULL;
  SHOW(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 0, &p));
  SHOW(olMemAlloc(NULL, OL_ALLOC_TYPE_DEVICE, 8, &p));
  SHOW(olMemAlloc(host, OL_ALLOC_TYPE_DEVICE, 8, NULL));
  SHOW(olMemFree(NULL));
  SHOW(olGetMemInfo(NULL, OL_MEM_INFO_SIZE, 8, buf));
  SHOW(olGetMemInfo(buf, OL_MEM_INFO_SIZE, 0, buf));
  SHOW(olGetMemInfo(buf, OL_MEM_INFO_SIZE, 8, NULL));
  SHOW(olGetMemInfoSize(NULL, OL_MEM_INFO_SIZE, &sz));
  SHOW(olGetMemInfoSize(buf, OL_MEM_INFO_SIZE, NULL));
  char a[16] = "0123456789abcde", b[16] = {0};
  SHOW(olMemcpy(NULL, b, host, a, host, sizeof a));
  printf("host-to-host copy: %s\n", b);
  SHOW(olMemcpy(NULL, b, NULL, a, host, 8));
  SHOW(olMemcpy(NULL, b, host, a, NULL, 8));
  SHOW(olMemcpy(NULL, NULL, host, a, host, 8));
  SHOW(olMemcpy(NULL, b, host, NULL, host, 8));
  SHOW(olMemFill(NULL, b, 4, a, 6));
  SHOW(olMemFill(NULL, NULL, 4, a, 8));
  SHOW(olMemFill(NULL, b, 4, NULL, 8));
  SHOW(olMemRegister(host, b, 0, 0, &p));
  SHOW(olMemRegister(NULL, b, 8, 0, &p));
  SHOW(olMemRegister(host, NULL, 8, 0, &p));
  SHOW(olMemRegister(host, b, 8, 0, NULL));
  SHOW(olMemUnregister(NULL, b));
  SHOW(olMemUnregister(host, NULL));
  ol_queue_handle_t q = NULL;
  SHOW(olCreateQueue(NULL, &q));
  SHOW(olCreateQueue(host, NULL));
  SHOW(olDestroyQueue(NULL));
  SHOW(olSyncQueue(NULL));
  ol_event_handle_t ev = NULL;
  SHOW(olWaitEvents(NULL, &ev, 1));
  SHOW(olGetQueueInfo(NULL, OL_QUEUE_INFO_DEVICE, 8, buf));
  SHOW(olGetQueueInfo(NULL, OL_QUEUE_INFO_DEVICE, 0, buf));
  SHOW(olGetQueueInfoSize(NULL, OL_QUEUE_INFO_DEVICE, &sz));
  SHOW(olLaunchHostFunction(NULL, NULL, NULL));
  SHOW(olCreateEvent(NULL, &ev));
  SHOW(olDestroyEvent(NULL));
  SHOW(olSyncEvent(NULL));
  SHOW(olGetEventInfo(NULL, OL_EVENT_INFO_QUEUE, 8, buf));
  SHOW(olGetEventInfoSize(NULL, OL_EVENT_INFO_QUEUE, &sz));
  bool valid = true;
  static const char garbage[] = "garbage";
  SHOW(olIsValidBinary(host, garbage, sizeof garbage, &valid));
  printf("garbage valid on the host device: %d\n", valid);
  SHOW(olIsValidBinary(NULL, garbage, sizeof garbage, &valid));
  SHOW(olIsValidBinary(host, NULL, 8, &valid));
  SHOW(olIsValidBinary(host, garbage, sizeof garbage, NULL));
  ol_program_handle_t prog = NULL;
  SHOW(olCreateProgram(NULL, garbage, sizeof garbage, &prog));
  SHOW(olCreateProgram(host, NULL, 8, &prog));
  SHOW(olCreateProgram(host, garbage, sizeof garbage, NULL));
  SHOW(olDestroyProgram(NULL));
  ol_symbol_handle_t sym = NULL;
  SHOW(olGetSymbol(NULL, "k", OL_SYMBOL_KIND_KERNEL, &sym));
  SHOW(olGetSymbolInfo(NULL, OL_SYMBOL_INFO_KIND, 4, buf));
  SHOW(olGetSymbolInfoSize(NULL, OL_SYMBOL_INFO_KIND, &sz));
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  SHOW(olLaunchKernel(NULL, host, NULL, NULL, 8, &ls));
  SHOW(olLaunchKernel(NULL, NULL, NULL, NULL, 0, &ls));
  SHOW(olLaunchKernel(NULL, host, NULL, NULL, 0, &ls));
  SHOW(olCalculateOptimalOccupancy(NULL, NULL, 0, &sz));
  SHOW(olShutDown());
  SHOW(olInit());
  SHOW(olShutDown());
  SHOW(olMemFree(NULL));
  return 0;
}
