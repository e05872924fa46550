// ol* per-operation costs on the CPU device, next to the OpenMP
// path of the same runtime and the physical floor. `ol_bench MODE N` runs N
// operations of MODE and prints "ns MODE <ns per op>"; bench/offload/run.sh
// runs it under callgrind with two N for instructions per operation.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <offload/OffloadAPI.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OK(c) do { ol_result_t r_ = (c); if (r_) { fprintf(stderr, "%s: %s\n", #c, r_->Details); exit(1); } } while (0)

static ol_device_handle_t cpu, host;
static bool pick(ol_device_handle_t d, void *u) {
  (void)u;
  ol_device_type_t t;
  OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t));
  if (t == OL_DEVICE_TYPE_CPU && !cpu) cpu = d;
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  return true;
}
static ol_symbol_handle_t k;
static ol_queue_handle_t q;
static ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
static size_t big;
static char *hbig, *hbig2;
static void *dbig, *d8, *od8;
static int64_t h8 = 42;
static int init;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static void empty_fn(void) {}
static void (*volatile fp)(void) = empty_fn;

// The measured loop: bench/offload/run.sh counts the instructions of this
// function alone (callgrind --toggle-collect), divided by N.
__attribute__((noinline)) int ol_bench_loop(const char *mode, long n) {
  volatile int64_t sink8 = 0;
  if (!strcmp(mode, "ol_launch")) {
    for (long i = 0; i < n; ++i) { OK(olLaunchKernel(q, cpu, k, NULL, 0, &ls)); OK(olSyncQueue(q)); }
  } else if (!strcmp(mode, "ol_memcpy8")) {
    for (long i = 0; i < n; ++i) OK(olMemcpy(NULL, d8, cpu, &h8, host, 8));
  } else if (!strcmp(mode, "ol_alloc")) {
    for (long i = 0; i < n; ++i) { void *p; OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 64, &p)); OK(olMemFree(p)); }
  } else if (!strcmp(mode, "xfer64m")) {
    // olMemcpy and memcpy of the same buffers, interleaved in one process.
    double t_ol = 0, t_mc = 0;
    // Which goes first alternates, so neither always follows the other.
    for (long i = 0; i < 2 * n; ++i) {
      const char *src = (i >> 1) & 1 ? hbig : hbig2;
      for (int k = 0; k < 2; ++k) {
        double a = now();
        if ((k ^ (int)(i & 1)) == 0) {
          OK(olMemcpy(NULL, dbig, cpu, src, host, big));
          t_ol += now() - a;
        } else {
          memcpy(dbig, src, big);
          t_mc += now() - a;
        }
      }
    }
    n *= 2;
    printf("ns ol_memcpy64m %.2f\nns floor_memcpy64m %.2f\n", t_ol / n, t_mc / n);
  } else if (!strcmp(mode, "omp_region")) {
    for (long i = 0; i < n; ++i) {
      #pragma omp target device(0)
      { }
    }
  } else if (!strcmp(mode, "omp_memcpy8")) {
    for (long i = 0; i < n; ++i) omp_target_memcpy(od8, &h8, 8, 0, 0, 0, init);
  } else if (!strcmp(mode, "omp_alloc")) {
    for (long i = 0; i < n; ++i) omp_target_free(omp_target_alloc(64, 0), 0);
  } else if (!strcmp(mode, "floor_call")) {
    for (long i = 0; i < n; ++i) fp();
  } else if (!strcmp(mode, "floor_memcpy8")) {
    for (long i = 0; i < n; ++i) { int64_t v; memcpy(&v, &h8, 8); sink8 = v; }
  } else if (!strcmp(mode, "floor_malloc")) {
    for (long i = 0; i < n; ++i) { void *volatile p = malloc(64); free(p); }
  } else return 1;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: ol_bench MODE N KERNEL.so\n"); return 2; }
  const char *mode = argv[1];
  long n = atol(argv[2]);
  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  FILE *f = fopen(argv[3], "rb");
  if (!f) return 2;
  fseek(f, 0, SEEK_END); size_t sz = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *img = malloc(sz);
  if (fread(img, 1, sz, f) != sz) return 2;
  fclose(f);
  ol_program_handle_t prog;
  OK(olCreateProgram(cpu, img, sz, &prog));
  OK(olGetSymbol(prog, "empty", OL_SYMBOL_KIND_KERNEL, &k));
  OK(olCreateQueue(cpu, &q));
  // The 64 MiB buffers only for the copy modes (they would dominate the instruction totals).
  big = strstr(mode, "64m") ? (size_t)64 << 20 : 64;
  hbig = malloc(big); hbig2 = malloc(big);
  memset(hbig, 1, big); memset(hbig2, 2, big);
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, big, &dbig));
  OK(olMemcpy(NULL, dbig, cpu, hbig, host, big)); // touch the pages once
  OK(olMemcpy(NULL, dbig, cpu, hbig2, host, big));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 8, &d8));
  od8 = omp_target_alloc(8, 0);
  init = omp_get_initial_device();
  #pragma omp target device(0)
  { }
  double t0 = now();
  if (ol_bench_loop(mode, n)) { fprintf(stderr, "unknown mode %s\n", mode); return 2; }
  double t1 = now();
  printf("ns %s %.2f\n", mode, (t1 - t0) / (double)n);
  omp_target_free(od8, 0);
  OK(olMemFree(d8)); OK(olMemFree(dbig));
  OK(olDestroyQueue(q)); OK(olDestroyProgram(prog)); OK(olShutDown());
  return 0;
}
