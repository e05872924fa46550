// ol* on a remote CPU device: the devices of the "remote"
// platform, a program (c-tests/offload/kernel.c) loaded on one, memory,
// copies both ways, a kernel on a queue and without, a global read back.
// Usage: ol KERNEL.so; prints "remote devices N" and "ok".
#include <stdbool.h>
#include <offload/OffloadAPI.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ol_device_handle_t devs[64];
static int ndevs;
static bool collect(ol_device_handle_t d, void *ud) { (void)ud; if (ndevs < 64) devs[ndevs++] = d; return true; }

#define OK(x) do { ol_result_t r_ = (x); if (r_ && r_->Code) { printf("FAIL %s: %s\n", #x, r_->Details ? r_->Details : "?"); return 1; } } while (0)

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
  char *so = malloc(n);
  if (fread(so, 1, n, f) != (size_t)n) return 2;
  fclose(f);
  OK(olInit());
  OK(olIterateDevices(collect, NULL));
  ol_device_handle_t host = NULL, remote[64];
  int nremote = 0;
  for (int i = 0; i < ndevs; i++) {
    ol_platform_handle_t p; char name[64];
    OK(olGetDeviceInfo(devs[i], OL_DEVICE_INFO_PLATFORM, sizeof p, &p));
    OK(olGetPlatformInfo(p, OL_PLATFORM_INFO_NAME, sizeof name, name));
    ol_platform_backend_t be;
    OK(olGetPlatformInfo(p, OL_PLATFORM_INFO_BACKEND, sizeof be, &be));
    if (be == OL_PLATFORM_BACKEND_HOST) host = devs[i];
    if (strcmp(name, "remote") == 0) remote[nremote++] = devs[i];
  }
  printf("remote devices %d\n", nremote);
  if (!host || nremote == 0) { printf("FAIL no host or no remote device\n"); return 1; }
  char dname[256];
  OK(olGetDeviceInfo(remote[nremote - 1], OL_DEVICE_INFO_NAME, sizeof dname, dname));
  printf("last remote device name has rank: %s\n", strstr(dname, "MPI rank") ? "yes" : "no");
  int bad = 0;
  for (int k = 0; k < nremote; k++) {
    ol_device_handle_t cpu = remote[k];
    ol_program_handle_t prog;
    OK(olCreateProgram(cpu, so, n, &prog));
    ol_symbol_handle_t vadd, bump, gcounter;
    OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));
    OK(olGetSymbol(prog, "bump", OL_SYMBOL_KIND_KERNEL, &bump));
    OK(olGetSymbol(prog, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &gcounter));
    void *da, *db, *dout;
    OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64 * 8, &da));
    OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64 * 8, &db));
    OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64 * 8, &dout));
    int64_t ha[64], hb[64], hout[64];
    for (int i = 0; i < 64; ++i) { ha[i] = i; hb[i] = 1000 * i + k; }
    ol_queue_handle_t q;
    OK(olCreateQueue(cpu, &q));
    OK(olMemcpy(q, da, cpu, ha, host, sizeof ha));
    OK(olMemcpy(q, db, cpu, hb, host, sizeof hb));
    struct { int64_t *out, *a, *b; int64_t n; } args = {dout, da, db, 64};
    ol_kernel_launch_size_args_t ls = {.Dimensions = 1, .NumGroups = {1, 1, 1}, .GroupSize = {1, 1, 1}, .DynSharedMemory = 0};
    OK(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &ls));
    OK(olMemcpy(q, hout, host, dout, cpu, sizeof hout));
    OK(olSyncQueue(q));
    for (int i = 0; i < 64; ++i) bad |= hout[i] != 1001 * i + k;
    OK(olLaunchKernel(NULL, cpu, bump, NULL, 0, &ls));
    void *gaddr; int64_t cval = 0;
    OK(olGetSymbolInfo(gcounter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr));
    OK(olMemcpy(NULL, &cval, host, gaddr, cpu, 8));
    bad |= cval != 8;
    OK(olDestroyQueue(q));
    OK(olMemFree(da)); OK(olMemFree(db)); OK(olMemFree(dout));
    OK(olDestroyProgram(prog));
  }
  OK(olShutDown());
  printf("%s\n", bad ? "WRONG" : "ok");
  return bad;
}
