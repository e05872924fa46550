// ol* copies on every device of the "remote" platform, CPU and GPU alike
// (with a CUDA stand-in on the servers, their GPU devices are staged
// through host memory there): 40 MiB + 3 bytes there and back on each, on
// a queue and without, then through every remote device in turn by
// device-to-device copies (one server's devices, then straight from one
// server to the next), and back. Prints one line per check and "ok".
#include <stdbool.h>
#include <offload/OffloadAPI.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BIG = (40 << 20) + 3 };
static ol_device_handle_t devs[64];
static int ndevs;
static bool collect(ol_device_handle_t d, void *ud) { (void)ud; if (ndevs < 64) devs[ndevs++] = d; return true; }

#define OK(x) do { ol_result_t r_ = (x); if (r_ && r_->Code) { printf("FAIL %s: %s\n", #x, r_->Details ? r_->Details : "?"); return 1; } } while (0)

static uint64_t sum_bytes(const unsigned char *p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i++) s = s * 31 + p[i];
  return s;
}

int main(void) {
  OK(olInit());
  OK(olIterateDevices(collect, NULL));
  ol_device_handle_t host = NULL, remote[64];
  int nremote = 0, gpus = 0;
  for (int i = 0; i < ndevs; i++) {
    ol_platform_handle_t p; char name[64];
    OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_PLATFORM, sizeof p, &p));
    OK(olGetPlatformInfo(p, OL_PLATFORM_INFO_NAME, sizeof name, name));
    ol_platform_backend_t be;
    OK(olGetPlatformInfo(p, OL_PLATFORM_INFO_BACKEND, sizeof be, &be));
    if (be == OL_PLATFORM_BACKEND_HOST) host = devs[i];
    if (strcmp(name, "remote") == 0) {
      ol_device_type_t t;
      OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_TYPE, sizeof t, &t));
      gpus += t == OL_DEVICE_TYPE_GPU;
      remote[nremote++] = devs[i];
    }
  }
  printf("remote devices %d, gpus %d\n", nremote, gpus);
  if (!host || nremote == 0) { printf("FAIL no host or no remote device\n"); return 1; }
  unsigned char *h = malloc(BIG), *back = malloc(BIG);
  for (size_t i = 0; i < BIG; i++) h[i] = (unsigned char)(i * 13 + i / 5003);
  uint64_t want = sum_bytes(h, BIG);
  int bad = 0;
  void *mem[64];
  for (int k = 0; k < nremote; k++) {
    ol_queue_handle_t q;
    OK(olMemAlloc(remote[k], OL_ALLOC_TYPE_DEVICE, BIG, &mem[k]));
    OK(olCreateQueue(remote[k], &q));
    memset(back, 0, BIG);
    OK(olMemcpy(q, mem[k], remote[k], h, host, BIG));
    OK(olMemcpy(q, back, host, mem[k], remote[k], BIG));
    OK(olSyncQueue(q));
    int ok = sum_bytes(back, BIG) == want;
    memset(back, 0, BIG);
    OK(olMemcpy(NULL, back, host, mem[k], remote[k], BIG));
    ok &= sum_bytes(back, BIG) == want;
    OK(olDestroyQueue(q));
    printf("remote device %d: 40 MiB + 3 there and back: %s\n", k, ok ? "ok" : "WRONG");
    bad |= !ok;
  }
  // First to last, then last to first, shifted by one byte at each step.
  size_t size = BIG - 2 * nremote - 1;
  for (int k = 1; k < nremote; k++)
    OK(olMemcpy(NULL, (char *)mem[k] + k, remote[k], (char *)mem[k - 1] + (k - 1), remote[k - 1], size));
  for (int k = nremote - 2, at = nremote; k >= 0; k--, at++)
    OK(olMemcpy(NULL, (char *)mem[k] + at, remote[k], (char *)mem[k + 1] + (at - 1), remote[k + 1], size));
  memset(back, 0, BIG);
  OK(olMemcpy(NULL, back, host, (char *)mem[0] + (2 * nremote - 2), remote[0], size));
  int ok = sum_bytes(back, size) == sum_bytes(h, size);
  printf("chain through %d remote devices and back: %s\n", nremote, ok ? "ok" : "WRONG");
  bad |= !ok;
  for (int k = 0; k < nremote; k++) OK(olMemFree(mem[k]));
  OK(olShutDown());
  free(h);
  free(back);
  printf("%s\n", bad ? "WRONG" : "ok");
  return bad;
}
