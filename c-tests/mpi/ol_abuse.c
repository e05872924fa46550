// ol* under abuse on a remote CPU device: every bad call fails with an
// error and changes nothing on the server, which keeps serving.
//   - olMemcpy / olMemFill past the end of a block (by bytes and by 20 MiB
//     of host memory), to 0x1000, of 2^62 and SIZE_MAX bytes, device to
//     device past either end, after olMemFree;
//   - olLaunchKernel with ArgumentsSize 2^40, a group of 2 work items;
//   - olCreateProgram of a truncated image and of bytes that are no image;
//   - olGetSymbol of what is not the program's own (exit, environ), a data
//     object as a kernel, a function as a global;
//   - host and managed allocations (nothing the program may dereference);
//   - a destroyed program's global, a second olMemFree.
// A queued call may be refused when enqueued or fail the synchronisation.
// Then a block's bytes are read back intact (nothing was written) and a
// kernel still runs. Usage: ol_abuse KERNEL.so; prints "ok N checks".
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../offload/ol_checks.h"

// A queued call may be refused at once or fail the queue's next synchronisation.
#define QBAD(call) do { ol_result_t r_ = (call); if (!r_ && !olSyncQueue(q)) FAIL("%s succeeded, and so did the synchronisation", #call); ++checks; } while (0)

static ol_device_handle_t remote, host;
static bool pick(ol_device_handle_t d, void *u) {
  (void)u;
  ol_device_type_t t;
  olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t);
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  if (!remote && on_platform(d, "remote")) remote = d;
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  if (!remote || !host) FAIL("no remote device or no host device");
  ol_device_handle_t cpu = remote;
  ol_queue_handle_t q;
  OK(olCreateQueue(cpu, &q));

  // No memory the program could dereference: host and managed allocations are refused.
  void *hm = NULL;
  BAD(olMemAlloc(cpu, OL_ALLOC_TYPE_HOST, 64, &hm));
  BAD(olMemAlloc(cpu, OL_ALLOC_TYPE_MANAGED, 64, &hm));

  // A block with known bytes, and its neighbour.
  unsigned char *blk, *next;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64, (void **)&blk));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64, (void **)&next));
  static unsigned char big[1 << 16], back[64];
  memset(big, 0xab, 64);
  OK(olMemcpy(NULL, blk, cpu, big, host, 64));
  OK(olMemcpy(NULL, next, cpu, big, host, 64));
  memset(big, 0x11, sizeof big);
  unsigned char pat[4] = {1, 2, 3, 4};
  BAD(olMemcpy(NULL, blk, cpu, big, host, 4096));
  QBAD(olMemcpy(q, blk, cpu, big, host, 65));
  BAD(olMemcpy(NULL, big, host, blk + 32, cpu, 64));
  BAD(olMemFill(NULL, blk, 4, pat, 4096));
  BAD(olMemcpy(NULL, (void *)0x1000, cpu, big, host, 8));
  BAD(olMemcpy(NULL, big, host, (void *)0x1000, cpu, 8));
  BAD(olMemcpy(NULL, blk, cpu, big, host, (size_t)1 << 62));
  BAD(olMemcpy(NULL, blk, cpu, blk, cpu, SIZE_MAX));
  // Valid host memory of several transfer pieces, refused by the server's range check.
  size_t huge = (size_t)20 << 20;
  unsigned char *many = calloc(1, huge);
  TRUE(many != NULL);
  BAD(olMemcpy(NULL, blk, cpu, many, host, huge));
  BAD(olMemcpy(NULL, many, host, blk, cpu, huge));
  QBAD(olMemcpy(q, blk, cpu, many, host, huge));
  QBAD(olMemcpy(q, many, host, next, cpu, huge));
  free(many);
  BAD(olMemcpy(NULL, blk + 8, cpu, next, cpu, 64));
  BAD(olMemcpy(NULL, next, cpu, blk + 8, cpu, 64));
  OK(olSyncQueue(q)); // a failure is reported once; the queue is usable again

  // Programs: bytes that are no image, a truncated one.
  size_t size;
  unsigned char *img = slurp(argv[1], &size);
  ol_program_handle_t prog;
  BAD(olCreateProgram(cpu, big, 4096, &prog));
  BAD(olCreateProgram(cpu, img, size / 3, &prog));
  OK(olCreateProgram(cpu, img, size, &prog));
  ol_symbol_handle_t g, k;
  BAD(olGetSymbol(prog, "exit", OL_SYMBOL_KIND_KERNEL, &k));
  BAD(olGetSymbol(prog, "environ", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &k));
  BAD(olGetSymbol(prog, "table", OL_SYMBOL_KIND_KERNEL, &k));
  BAD(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &k));
  OK(olGetSymbol(prog, "table", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &g));
  void *gaddr;
  size_t gsize;
  OK(olGetSymbolInfo(g, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr));
  OK(olGetSymbolInfo(g, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof gsize, &gsize));
  TRUE(gsize == 32);
  int64_t t4[5];
  OK(olMemcpy(NULL, t4, host, gaddr, cpu, 32));
  TRUE(t4[0] == 1 && t4[3] == 4);
  BAD(olMemcpy(NULL, t4, host, gaddr, cpu, 40));

  // Launches: argument size and group size checked.
  OK(olGetSymbol(prog, "bump", OL_SYMBOL_KIND_KERNEL, &k));
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0}, wide = {1, {1, 1, 1}, {2, 1, 1}, 0};
  QBAD(olLaunchKernel(q, cpu, k, big, (size_t)1 << 40, &ls));
  BAD(olLaunchKernel(NULL, cpu, k, NULL, 0, &wide));
  ol_symbol_handle_t counter;
  OK(olGetSymbol(prog, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &counter));
  void *caddr;
  OK(olGetSymbolInfo(counter, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof caddr, &caddr));
  OK(olLaunchKernel(q, cpu, k, NULL, 0, &ls));
  OK(olSyncQueue(q));
  int64_t c = 0;
  OK(olMemcpy(NULL, &c, host, caddr, cpu, sizeof c));
  TRUE(c == 8); // counter starts at 7; only the one good launch ran
  OK(olDestroyProgram(prog));
  BAD(olMemcpy(NULL, t4, host, gaddr, cpu, 8)); // the destroyed program's global

  // Nothing above wrote into either block.
  OK(olMemcpy(NULL, back, host, blk, cpu, 64));
  for (int i = 0; i < 64; ++i) TRUE(back[i] == 0xab);
  OK(olMemcpy(NULL, back, host, next, cpu, 64));
  for (int i = 0; i < 64; ++i) TRUE(back[i] == 0xab);

  // Freed memory is gone for every call; a second free is an error.
  OK(olMemFree(next));
  BAD(olMemcpy(NULL, next, cpu, big, host, 8));
  BAD(olMemcpy(NULL, back, host, next, cpu, 8));
  BAD(olMemFree(next));
  OK(olMemFree(blk));
  OK(olDestroyQueue(q));
  OK(olShutDown());
  free(img);
  printf("ok %d checks\n", checks);
  return 0;
}
