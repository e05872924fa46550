/* Cost of the call sequences rustc's offload codegen emits,
 * on LLVM 22.1's libomptarget and on omptarget-rs, host plugin.
 *
 *   zero_desc_cycle   one empty-descriptor register/unregister pair as older
 *                     rustc wraps every kernel call in:
 *                       __tgt_register_lib(&zero); __tgt_init_all_rtls();
 *                       __tgt_unregister_lib(&zero);
 *                     (the real descriptor stays registered, as in a real
 *                     binary, so the runtime is never torn down)
 *   zero_desc_cycle_cold  the same pair with nothing else registered (measured
 *                     first), so every unregister drops the last runtime
 *                     reference: LLVM de-initialises its plugins each time
 *   rustc_kernel_call one current-rustc kernel call on 2 small arrays + 1
 *                     scalar: __tgt_target_data_begin_mapper (TO, TO,
 *                     LITERAL|IMPLICIT), Version 3 __tgt_target_kernel
 *                     (Flags 1<<6, [2097152,1,1] x [256,1,1]),
 *                     __tgt_target_data_end_mapper (FROM, 0, 0)
 *
 * Output: one line `name ns_per_op` per metric (median over batches).
 * Exit status 1 if a computed result is wrong.
 *
 * Build and run (from the repository root):
 *   cc -O2 -shared -fPIC tests/fixtures/rustc/kernels.c -o /tmp/rk.so
 *   cc -O2 bench/rustc_seq.c -o /tmp/rustc_seq -ldl -L/usr/lib/llvm-22/lib -lomptarget
 *   /tmp/rustc_seq /tmp/rk.so                                  # LLVM's runtime
 *   mkdir -p /tmp/rs && ln -sf $PWD/target/release/libomptarget_rs.so /tmp/rs/libomptarget.so.22.1
 *   LD_LIBRARY_PATH=/tmp/rs /tmp/rustc_seq /tmp/rk.so          # omptarget-rs
 * Optional: argv[2] = batches (default 31), argv[3] = iterations per batch
 * (default 2000; the cold cycle uses 1/100 of it).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the ABI (abi-reference §1.7, §2.1, §2.2, §4.2) ---- */
typedef struct {
  int32_t reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} ident_t;

typedef struct {
  uint64_t Reserved;
  uint16_t Version, Kind;
  uint32_t Flags;
  void *Address;
  const char *SymbolName;
  uint64_t Size, Data;
  void *AuxAddr;
} entry_t; /* 56 bytes */

typedef struct {
  void *ImageStart, *ImageEnd;
  const entry_t *EntriesBegin, *EntriesEnd;
} device_image_t;

typedef struct {
  int32_t NumDeviceImages;
  device_image_t *DeviceImages;
  const entry_t *HostEntriesBegin, *HostEntriesEnd;
} bin_desc_t;

typedef struct {
  uint32_t Version, NumArgs;
  void **ArgBasePtrs, **ArgPtrs;
  int64_t *ArgSizes, *ArgTypes;
  void **ArgNames, **ArgMappers;
  uint64_t Tripcount, Flags;
  uint32_t NumTeams[3], ThreadLimit[3], DynCGroupMem;
} kernel_args_t; /* 104 bytes */

void __tgt_register_lib(bin_desc_t *);
void __tgt_unregister_lib(bin_desc_t *);
void __tgt_init_all_rtls(void);
void __tgt_target_data_begin_mapper(ident_t *, int64_t, int32_t, void **, void **, int64_t *, int64_t *,
                                    void **, void **);
void __tgt_target_data_end_mapper(ident_t *, int64_t, int32_t, void **, void **, int64_t *, int64_t *,
                                  void **, void **);
int __tgt_target_kernel(ident_t *, int64_t, int32_t, int32_t, void *, kernel_args_t *);
int omp_get_num_devices(void);

/* ---- what rustc emits ---- */
static ident_t ident = {0, 2, 0, 22, ";unknown;unknown;0;0;;"};
static const char add_n_region_id = 0;
__attribute__((section("llvm_offload_entries"), used, aligned(8))) static const entry_t add_n_entry = {
    0, 1, 1, 0, (void *)&add_n_region_id, "add_n", 0, 0, NULL};
extern const entry_t __start_llvm_offload_entries[] __attribute__((visibility("hidden")));
extern const entry_t __stop_llvm_offload_entries[] __attribute__((visibility("hidden")));

enum { TO = 1, FROM = 2, TARGET_PARAM = 0x20, LITERAL = 0x100, IMPLICIT = 0x200 };
static const int64_t begin_types[3] = {TO, TO, LITERAL | IMPLICIT};
static const int64_t kernel_types[3] = {TARGET_PARAM, TARGET_PARAM, LITERAL | IMPLICIT | TARGET_PARAM};
static const int64_t end_types[3] = {FROM, 0, 0};

#define N 64
static float y[N], x[N];

/* KernelArgs Flags (RUSTC_SEQ_FLAGS overrides rustc's 1 << 6, e.g. 0 or 0xc0 to compare paths). */
static uint64_t kernel_flags = 1 << 6;

static void rustc_kernel_call(void) {
  int64_t n = N;
  /* rustc (newest): a scalar's value in its base pointer, the address
   * of the stack slot holding it in its pointer. */
  uint64_t slot = (uint64_t)n;
  void *bases[3] = {y, x, (void *)(uintptr_t)n};
  void *ptrs[3] = {y, x, &slot};
  int64_t sizes[3] = {sizeof y, sizeof x, sizeof n};
  __tgt_target_data_begin_mapper(&ident, -1, 3, bases, ptrs, sizes, (int64_t *)begin_types, NULL, NULL);
  kernel_args_t args = {3, 3, bases, ptrs, sizes, (int64_t *)kernel_types, NULL, NULL, 0, kernel_flags,
                        {2097152, 1, 1}, {256, 1, 1}, 0};
  if (__tgt_target_kernel(&ident, -1, 2097152, 256, (void *)&add_n_region_id, &args) != 0) {
    fprintf(stderr, "rustc_seq: __tgt_target_kernel failed\n");
    exit(1);
  }
  __tgt_target_data_end_mapper(&ident, -1, 3, bases, ptrs, sizes, (int64_t *)end_types, NULL, NULL);
}

static bin_desc_t zero_desc;

static void zero_desc_cycle(void) {
  __tgt_register_lib(&zero_desc);
  __tgt_init_all_rtls();
  __tgt_unregister_lib(&zero_desc);
}

/* The same pair; its own symbol so profilers can tell the two apart. */
static void zero_desc_cycle_cold(void) {
  __tgt_register_lib(&zero_desc);
  __tgt_init_all_rtls();
  __tgt_unregister_lib(&zero_desc);
}

/* ---- timing ---- */
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double d = *(const double *)a - *(const double *)b;
  return (d > 0) - (d < 0);
}

/* Median over `batches` of (time of `iters` calls) / iters. */
static double measure(void (*op)(void), int batches, int iters) {
  double *per = malloc(sizeof(double) * (size_t)batches);
  for (int i = 0; i < iters / 10 + 1; i++) /* warm-up */
    op();
  for (int b = 0; b < batches; b++) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < iters; i++)
      op();
    per[b] = (double)(now_ns() - t0) / iters;
  }
  qsort(per, (size_t)batches, sizeof *per, cmp_double);
  double m = per[batches / 2];
  free(per);
  return m;
}

static void *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = aligned_alloc(8, ((size_t)n + 7) & ~(size_t)7);
  if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *len = (size_t)n;
  return p;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s DEVICE_IMAGE.so [batches [iterations]]\n", argv[0]);
    return 2;
  }
  if (getenv("RUSTC_SEQ_FLAGS"))
    kernel_flags = strtoull(getenv("RUSTC_SEQ_FLAGS"), NULL, 0);
  int batches = argc > 2 ? atoi(argv[2]) : 31;
  int iters = argc > 3 ? atoi(argv[3]) : 2000;
  size_t len;
  char *image = read_file(argv[1], &len);
  if (!image) {
    perror(argv[1]);
    return 2;
  }
  printf("zero_desc_cycle_cold %.1f\n", measure(zero_desc_cycle_cold, batches, iters / 100 > 10 ? iters / 100 : 10));
  fflush(stdout);

  /* What the linker wrapper's constructor does. */
  device_image_t img = {image, image + len, __start_llvm_offload_entries, __stop_llvm_offload_entries};
  bin_desc_t desc = {1, &img, __start_llvm_offload_entries, __stop_llvm_offload_entries};
  __tgt_register_lib(&desc);

  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "rustc_seq: no devices\n");
    return 1;
  }
  for (int i = 0; i < N; i++)
    x[i] = 1.0f;
  printf("zero_desc_cycle %.1f\n", measure(zero_desc_cycle, batches, iters));
  printf("rustc_kernel_call %.1f\n", measure(rustc_kernel_call, batches, iters));
  fflush(stdout);

  /* Every call added x (all ones) to y once; small counts stay exact in f32. */
  long calls = (long)batches * iters + iters / 10 + 1;
  for (int i = 0; i < N; i++)
    if (y[i] != (float)calls) {
      fprintf(stderr, "rustc_seq: y[%d] = %.1f, expected %ld\n", i, y[i], calls);
      return 1;
    }
  __tgt_unregister_lib(&desc);
  free(image);
  return 0;
}
