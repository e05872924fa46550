// ol* under abuse on the CPU devices, and both APIs freeing each other's
// memory. Every bad call must fail with the documented error and touch
// nothing (canaries around every block stay intact):
//   - olMemcpy / olMemFill past the end of an olMemAlloc block, to 0x1000,
//     of 2^62 bytes, and into a global of a destroyed program;
//   - olLaunchKernel with ArgumentsSize 2^40;
//   - olGetSymbol of what is not the program's own (exit, abort, system,
//     environ, stdout), a data object as a kernel, a function as a global;
//   - omp_target_free of an olMemAlloc pointer, then olMemFree of it (an
//     error), and omp_target_alloc afterwards never returns a live block;
//   - (under valgrind) looked-up symbol names are not leaked.
// Prints "ok N checks"; any failure prints FAIL and exits 1.
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ol_checks.h"
#include <omp.h>


static ol_device_handle_t cpu, host;
static bool pick(ol_device_handle_t d, void *u) {
  (void)u;
  ol_device_type_t t;
  olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t);
  if (t == OL_DEVICE_TYPE_CPU && !cpu) cpu = d;
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  if (!cpu || !host) FAIL("no CPU device or no host device");
  ol_queue_handle_t q;
  OK(olCreateQueue(cpu, &q));

  // Bounds of copies and fills.
  unsigned char *blk, *next;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64, (void **)&blk));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64, (void **)&next));
  memset(next, 0xab, 64);
  static unsigned char big[1 << 16];
  unsigned char pat[4] = {1, 2, 3, 4};
  ERR(olMemcpy(NULL, blk, cpu, big, host, 4096), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(q, blk, cpu, big, host, 65), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(NULL, big, host, blk + 32, cpu, 64), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemFill(NULL, blk, 4, pat, 4096), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemFill(q, blk + 4, 4, pat, 64), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(NULL, (void *)0x1000, cpu, big, host, 8), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(q, (void *)0x1000, cpu, big, host, 8), OL_ERRC_INVALID_ARGUMENT);
  ERR(olMemcpy(NULL, big, host, (void *)0x1000, cpu, 8), OL_ERRC_INVALID_ARGUMENT);
  BAD(olMemcpy(NULL, blk, cpu, big, host, (size_t)1 << 62));
  BAD(olMemcpy(NULL, blk, cpu, blk, cpu, SIZE_MAX));
  OK(olMemcpy(NULL, blk, cpu, big, host, 64)); // in bounds: fine
  OK(olMemcpy(q, blk + 8, cpu, big, host, 56));
  OK(olMemFill(q, blk, 4, pat, 64));
  OK(olSyncQueue(q));
  for (int i = 0; i < 64; ++i) TRUE(next[i] == 0xab);

  // A program's globals are known ranges while it lives.
  size_t size;
  void *img = slurp(argv[1], &size);
  ol_program_handle_t prog;
  OK(olCreateProgram(cpu, img, size, &prog));
  ol_symbol_handle_t g, k;
  OK(olGetSymbol(prog, "table", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &g));
  void *gaddr; size_t gsize;
  OK(olGetSymbolInfo(g, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr));
  OK(olGetSymbolInfo(g, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof gsize, &gsize));
  TRUE(gsize == 32);
  int64_t t4[4];
  OK(olMemcpy(NULL, t4, host, gaddr, cpu, 32));
  TRUE(t4[0] == 1 && t4[3] == 4);
  ERR(olMemcpy(NULL, t4, host, gaddr, cpu, 40), OL_ERRC_INVALID_ARGUMENT);

  // Only the program's own symbols, of the right kind.
  const char *not_ours[] = {"exit", "abort", "system", "environ", "stdout", "malloc", "no_such_symbol"};
  for (size_t i = 0; i < sizeof not_ours / sizeof *not_ours; ++i) {
    BAD(olGetSymbol(prog, not_ours[i], OL_SYMBOL_KIND_KERNEL, &k));
    BAD(olGetSymbol(prog, not_ours[i], OL_SYMBOL_KIND_GLOBAL_VARIABLE, &k));
  }
  ERR(olGetSymbol(prog, "table", OL_SYMBOL_KIND_KERNEL, &k), OL_ERRC_SYMBOL_KIND);
  ERR(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &k), OL_ERRC_SYMBOL_KIND);
  OK(olGetSymbol(prog, "empty", OL_SYMBOL_KIND_KERNEL, &k));

  // Argument sizes are checked before anything is allocated.
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  ERR(olLaunchKernel(q, cpu, k, big, (size_t)1 << 40, &ls), OL_ERRC_INVALID_SIZE);
  ERR(olLaunchKernel(NULL, cpu, k, big, (size_t)1 << 40, &ls), OL_ERRC_INVALID_SIZE);
  OK(olLaunchKernel(q, cpu, k, NULL, 0, &ls));
  OK(olSyncQueue(q));

  // Many look-ups of many names: nothing kept per look-up (valgrind's leak check).
  for (int i = 0; i < 1000; ++i) {
    char name[32];
    snprintf(name, sizeof name, "missing_%d", i);
    BAD(olGetSymbol(prog, name, OL_SYMBOL_KIND_KERNEL, &k));
  }
  OK(olDestroyProgram(prog));
  // The destroyed program's global is no longer a range anyone may touch.
  ERR(olMemcpy(NULL, t4, host, gaddr, cpu, 8), OL_ERRC_INVALID_ARGUMENT);
  ERR(olGetSymbolInfo(g, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof gaddr, &gaddr), OL_ERRC_INVALID_ARGUMENT);

  // One allocation table for both APIs.
  int dev0 = 0;
  void *a;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64, &a));
  omp_target_free(a, dev0);                          // freed through OpenMP ...
  ERR(olMemFree(a), OL_ERRC_INVALID_ARGUMENT);       // ... so ol* knows it is gone
  void *x = omp_target_alloc(64, dev0), *y = omp_target_alloc(64, dev0);
  TRUE(x && y && x != y);
  ol_device_handle_t owner = NULL;
  OK(olGetMemInfo((char *)x + 10, OL_MEM_INFO_DEVICE, sizeof owner, &owner));
  TRUE(owner == cpu);
  OK(olMemFree(x));                                  // OpenMP's block freed through ol*
  void *z = omp_target_alloc(64, dev0);
  TRUE(z && z != y);
  omp_target_free(y, dev0);
  omp_target_free(z, dev0);
  ERR(olMemFree(y), OL_ERRC_INVALID_ARGUMENT);

  OK(olMemFree(blk));
  OK(olMemFree(next));
  ERR(olMemFree(blk), OL_ERRC_INVALID_ARGUMENT);
  OK(olDestroyQueue(q));
  OK(olShutDown());
  free(img);
  printf("ok %d checks\n", checks);
  return 0;
}
