/*
 * bench_cuda.c - the CUDA plugin's overhead against the raw driver API, in
 * one process:
 *
 *   launch+sync   cuLaunchKernel of an empty kernel + cuStreamSynchronize,
 *                 against __tgt_target_kernel of the same kernel (KernelArgs
 *                 v3, bare mode: grid 1x1) through omptarget-rs;
 *   H2D / D2H     cuMemcpy{HtoD,DtoH}Async + cuStreamSynchronize of 1 MB,
 *                 64 MB and 1 GB from pinned (cuMemAllocHost) and pageable
 *                 (malloc) host memory, against omp_target_memcpy with
 *                 llvm_omp_target_alloc_host / malloc buffers.
 *
 * Both sides use the device's primary context, non-blocking streams and the
 * same module bytes. Each measurement alternates raw and runtime rounds and
 * keeps the best round of each. Goals: launch ratio (runtime/raw time)
 * <= 1.10, transfer ratio (runtime/raw bandwidth) >= 0.95.
 *
 * No CUDA headers or libraries at build time: libcuda.so.1 is dlopen()ed
 * ($OMPTARGET_RS_LIBCUDA first, like the runtime). The program links the
 * runtime under test as libomptarget.so.22.1 (bench/cuda/build.sh).
 *
 *   bench_cuda [--image FILE] [--quick]
 *     --image FILE  cubin or PTX with `empty(u64 dyn_ptr)` (default: the
 *                   embedded PTX, JIT-compiled by the driver)
 *     --quick       (or BENCH_CUDA_QUICK=1) few repetitions, 1 MB only
 *
 * Output: one row per measurement, "<name>  raw  runtime  ratio  goal  OK|MISS",
 * then "bench_cuda: N ok, M missed". Exit status 0 when every measurement
 * ran (goals missed or not), 1 on any error, 77 when there is no CUDA
 * device (prints "skipped: ...").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ----------------------------------------------------------- driver API -- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream;

static struct {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemAllocHost_v2)(void **, size_t);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuGetErrorString)(CUresult, const char **);
} cu;

#define CK(call)                                                               \
  do {                                                                         \
    CUresult r_ = (call);                                                      \
    if (r_ != 0) {                                                             \
      const char *s_ = "?";                                                    \
      if (cu.cuGetErrorString)                                                 \
        cu.cuGetErrorString(r_, &s_);                                          \
      fprintf(stderr, "bench_cuda: %s failed: %d (%s)\n", #call, r_, s_);      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static int load_driver(void) {
  const char *names[] = {getenv("OMPTARGET_RS_LIBCUDA"), "libcuda.so.1", "libcuda.so"};
  void *h = NULL;
  for (int i = 0; i < 3 && !h; i++)
    if (names[i] && *names[i])
      h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return 0;
#define SYM(n)                                                                 \
  if (!(*(void **)&cu.n = dlsym(h, #n))) {                                     \
    fprintf(stderr, "bench_cuda: libcuda lacks %s\n", #n);                     \
    exit(1);                                                                   \
  }
  SYM(cuInit) SYM(cuDeviceGetCount) SYM(cuDeviceGet) SYM(cuDevicePrimaryCtxRetain)
  SYM(cuCtxSetCurrent) SYM(cuModuleLoadData) SYM(cuModuleGetFunction) SYM(cuLaunchKernel)
  SYM(cuStreamCreate) SYM(cuStreamSynchronize) SYM(cuMemAlloc_v2) SYM(cuMemFree_v2)
  SYM(cuMemAllocHost_v2) SYM(cuMemFreeHost) SYM(cuMemcpyHtoDAsync_v2) SYM(cuMemcpyDtoHAsync_v2)
#undef SYM
  *(void **)&cu.cuGetErrorString = dlsym(h, "cuGetErrorString");
  *(void **)&cu.cuDeviceGetName = dlsym(h, "cuDeviceGetName");
  return 1;
}

/* ------------------------------------------------------ libomptarget ABI -- */
typedef struct {
  int32_t reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} ident_t;
struct offload_entry { /* llvm::offloading::EntryTy */
  uint64_t Reserved;
  uint16_t Version, Kind;
  uint32_t Flags;
  void *Address;
  const char *SymbolName;
  uint64_t Size, Data;
  void *AuxAddr;
};
struct tgt_device_image {
  void *ImageStart, *ImageEnd;
  struct offload_entry *EntriesBegin, *EntriesEnd;
};
struct tgt_bin_desc {
  int32_t NumDeviceImages;
  struct tgt_device_image *DeviceImages;
  struct offload_entry *HostEntriesBegin, *HostEntriesEnd;
};
struct kernel_args { /* KernelArgsTy, Version 3 */
  uint32_t Version, NumArgs;
  void **ArgBasePtrs, **ArgPtrs;
  int64_t *ArgSizes, *ArgTypes;
  void **ArgNames, **ArgMappers;
  uint64_t Tripcount, Flags;
  uint32_t NumTeams[3], ThreadLimit[3], DynCGroupMem;
};
void __tgt_register_lib(struct tgt_bin_desc *);
void __tgt_unregister_lib(struct tgt_bin_desc *);
int __tgt_target_kernel(ident_t *, int64_t, int32_t, int32_t, void *, struct kernel_args *);
int omp_get_num_devices(void);
int omp_get_initial_device(void);
void *omp_target_alloc(size_t, int);
void omp_target_free(void *, int);
void *llvm_omp_target_alloc_host(size_t, int);
void llvm_omp_target_free_host(void *, int);
int omp_target_memcpy(void *, const void *, size_t, size_t, size_t, int, int);

/* ---------------------------------------------------------------- image -- */
static const char empty_ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry empty(.param .u64 empty_param_0)\n{\n\tret;\n}\n";

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* 8-byte aligned, NUL-terminated (PTX needs it; a cubin ignores it). */
  char *b = aligned_alloc(8, ((size_t)n + 8) & ~(size_t)7);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "bench_cuda: cannot read %s\n", path);
    exit(1);
  }
  b[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return b;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int n_ok, n_miss;
static void row(const char *name, double raw, double rt, const char *unit, int higher_is_better) {
  double ratio = higher_is_better ? rt / raw : rt / raw;
  double goal = higher_is_better ? 0.95 : 1.10;
  int ok = higher_is_better ? ratio >= goal : ratio <= goal;
  printf("%-28s raw %10.2f %-5s  omptarget-rs %10.2f %-5s  ratio %5.3f  goal %s %.2f  %s\n", name,
         raw, unit, rt, unit, ratio, higher_is_better ? ">=" : "<=", goal, ok ? "OK" : "MISS");
  fflush(stdout);
  if (ok)
    n_ok++;
  else
    n_miss++;
}

static char region_empty; /* the host "region id" of the kernel entry */

int main(int argc, char **argv) {
  const char *image_path = NULL;
  int quick = getenv("BENCH_CUDA_QUICK") && *getenv("BENCH_CUDA_QUICK") == '1';
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--image") && i + 1 < argc)
      image_path = argv[++i];
    else if (!strcmp(argv[i], "--quick"))
      quick = 1;
    else {
      fprintf(stderr, "usage: %s [--image FILE] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (!load_driver()) {
    printf("skipped: no CUDA driver (libcuda.so.1 not found)\n");
    return 77;
  }
  int ndev = 0;
  if (cu.cuInit(0) != 0 || cu.cuDeviceGetCount(&ndev) != 0 || ndev == 0) {
    printf("skipped: no CUDA device\n");
    return 77;
  }
  CUdevice dev;
  CUcontext ctx;
  CK(cu.cuDeviceGet(&dev, 0));
  char name[256] = "?";
  if (cu.cuDeviceGetName)
    cu.cuDeviceGetName(name, sizeof name, dev);
  CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cu.cuCtxSetCurrent(ctx));
  CUstream stream;
  CK(cu.cuStreamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */));

  size_t image_len;
  char *image;
  if (image_path) {
    image = read_file(image_path, &image_len);
  } else {
    image_len = sizeof empty_ptx - 1;
    image = aligned_alloc(8, (sizeof empty_ptx + 7) & ~(size_t)7);
    memcpy(image, empty_ptx, sizeof empty_ptx);
  }
  CUmodule mod;
  CUfunction fn;
  CK(cu.cuModuleLoadData(&mod, image));
  CK(cu.cuModuleGetFunction(&fn, mod, "empty"));

  /* The same image through the runtime. */
  static struct offload_entry entries[1] = {{0, 1, 1, 0, &region_empty, "empty", 0, 0, 0}};
  struct tgt_device_image img = {image, image + image_len, entries, entries + 1};
  struct tgt_bin_desc desc = {1, &img, entries, entries + 1};
  __tgt_register_lib(&desc);
  int host = omp_get_initial_device();
  printf("device: %s; runtime sees %d device(s); image: %s\n", name, omp_get_num_devices(),
         image_path ? image_path : "embedded PTX");
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "bench_cuda: the runtime has no device for the image\n");
    return 1;
  }
  const int rt_dev = 0;

  /* ---- launch + sync ---- */
  uint64_t dyn_ptr = ~0ull;
  size_t arg_bytes = 8;
  void *extra[] = {(void *)1, &dyn_ptr, (void *)2, &arg_bytes, (void *)0};
  static ident_t loc = {0, 2, 0, 0, ";bench_cuda.c;main;0;0;;"};
  struct kernel_args ka;
  int reps = quick ? 20 : 5000, rounds = quick ? 2 : 5;
  double best_raw = 1e30, best_rt = 1e30;
  for (int w = 0; w < (quick ? 5 : 500); w++) {
    CK(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, extra));
    CK(cu.cuStreamSynchronize(stream));
  }
  for (int r = 0; r < rounds; r++) {
    double t0 = now();
    for (int i = 0; i < reps; i++) {
      CK(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, extra));
      CK(cu.cuStreamSynchronize(stream));
    }
    double t1 = now();
    for (int i = 0; i < reps; i++) {
      memset(&ka, 0, sizeof ka);
      ka.Version = 3;
      ka.NumTeams[0] = 1;
      ka.ThreadLimit[0] = 1;
      if (__tgt_target_kernel(&loc, rt_dev, 1, 1, &region_empty, &ka) != 0) {
        fprintf(stderr, "bench_cuda: __tgt_target_kernel declined\n");
        return 1;
      }
    }
    double t2 = now();
    if ((t1 - t0) / reps < best_raw)
      best_raw = (t1 - t0) / reps;
    if ((t2 - t1) / reps < best_rt)
      best_rt = (t2 - t1) / reps;
  }
  row("launch+sync (empty kernel)", best_raw * 1e6, best_rt * 1e6, "us", 0);

  /* ---- transfers ---- */
  const size_t MB = (size_t)1 << 20;
  size_t sizes[] = {1 * MB, 64 * MB, 1024 * MB};
  int nsizes = quick ? 1 : 3;
  for (int s = 0; s < nsizes; s++) {
    size_t n = sizes[s];
    int treps = n <= MB ? (quick ? 5 : 200) : n <= 64 * MB ? 10 : 3;
    CUdeviceptr draw;
    CK(cu.cuMemAlloc_v2(&draw, n));
    void *drt = omp_target_alloc(n, rt_dev);
    void *pin_raw, *pin_rt = llvm_omp_target_alloc_host(n, rt_dev);
    CK(cu.cuMemAllocHost_v2(&pin_raw, n));
    char *pageable = malloc(n);
    if (!drt || !pin_rt || !pageable) {
      fprintf(stderr, "bench_cuda: allocation of %zu bytes failed\n", n);
      return 1;
    }
    memset(pin_raw, 1, n);
    memset(pin_rt, 1, n);
    memset(pageable, 1, n);
    for (int kind = 0; kind < 2; kind++) {       /* 0 pinned, 1 pageable */
      for (int dir = 0; dir < 2; dir++) {        /* 0 H2D, 1 D2H */
        void *hraw = kind ? pageable : pin_raw, *hrt = kind ? pageable : pin_rt;
        double br = 1e30, bt = 1e30;
        for (int r = 0; r < (quick ? 1 : 3); r++) {
          double t0 = now();
          for (int i = 0; i < treps; i++) {
            if (dir == 0)
              CK(cu.cuMemcpyHtoDAsync_v2(draw, hraw, n, stream));
            else
              CK(cu.cuMemcpyDtoHAsync_v2(hraw, draw, n, stream));
            CK(cu.cuStreamSynchronize(stream));
          }
          double t1 = now();
          for (int i = 0; i < treps; i++) {
            int rc = dir == 0 ? omp_target_memcpy(drt, hrt, n, 0, 0, rt_dev, host)
                              : omp_target_memcpy(hrt, drt, n, 0, 0, host, rt_dev);
            if (rc != 0) {
              fprintf(stderr, "bench_cuda: omp_target_memcpy failed\n");
              return 1;
            }
          }
          double t2 = now();
          if ((t1 - t0) / treps < br)
            br = (t1 - t0) / treps;
          if ((t2 - t1) / treps < bt)
            bt = (t2 - t1) / treps;
        }
        char label[64];
        snprintf(label, sizeof label, "%s %s %zu MB", dir ? "D2H" : "H2D", kind ? "pageable" : "pinned",
                 n / MB);
        row(label, (double)n / br / 1e9, (double)n / bt / 1e9, "GB/s", 1);
      }
    }
    CK(cu.cuMemFree_v2(draw));
    CK(cu.cuMemFreeHost(pin_raw));
    omp_target_free(drt, rt_dev);
    llvm_omp_target_free_host(pin_rt, rt_dev);
    free(pageable);
  }
  __tgt_unregister_lib(&desc);
  printf("bench_cuda: %d ok, %d missed\n", n_ok, n_miss);
  return 0;
}
