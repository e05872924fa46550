/*
 * async_harness.c - the asynchronous launch path of a libomptarget-compatible
 * runtime, end to end on a CUDA device (real, or the CPU stand-ins mock-cuda /
 * mock-cuda-async), driven through the libomptarget ABI like rustc's offload
 * codegen does.
 *
 * The sm_90 test image of c-tests/gpu/images (kernels.cu: saxpy, launch_dims,
 * read_global, write_global, many_args; globals g_value, g_table) is embedded
 * with .incbin (IMAGE_FILE: the raw cubin, or an OffloadBinary container,
 * which is unwrapped as harness.c's manual registration does) and registered
 * with __tgt_register_lib from a constructor, entries in section
 * llvm_offload_entries, exactly as llvm-offload-wrapper's code does.
 *
 * Entry points under test (not in LLVM 22.1; weak, so a runtime without them
 * fails the checks instead of failing to load):
 *   void *__tgt_async_info_create(int64_t device);
 *   int   __tgt_target_kernel_async(ident_t *, int64_t device, int32_t teams,
 *                                   int32_t threads, void *host_ptr,
 *                                   KernelArgs *, void *async_info);
 *   int   __tgt_async_info_synchronize(void *async_info);   0 / non-zero
 *   void  __tgt_async_info_destroy(void *async_info);
 *
 * Usage: async_harness [--deferred] [--fail]
 *   (default)   checks a) to d) below;
 *   --deferred  the driver defers stream work until it is waited for
 *               (mock-cuda-async): also check that nothing landed on the host
 *               before synchronisation, and the stand-in's queue statistics;
 *   --fail      only check e): run with MOCK_ASYNC_FAIL_KERNEL=saxpy on
 *               mock-cuda-async (may leave the device unusable, hence its own
 *               process).
 *
 * Checks (each prints [PASS]/[FAIL] name: detail; then "N passed, M failed";
 * exit status 0 iff none failed):
 *   a) one queued saxpy (y TO|FROM, x TO, two LITERALs) on a handle: returns
 *      0; (deferred) y still holds its old contents after the call; after
 *      __tgt_async_info_synchronize() == 0 y is right; destroy.
 *   b) two launches on one handle, the second reads the first's output
 *      (y = 1.5x + y; z = 2y + z): b1 with x/y/z kept mapped by
 *      __tgt_target_data_begin_mapper/end_mapper around them, b2 with
 *      per-launch to/from maps only. Ordering holds, results right.
 *   c) synchronize of an empty handle returns 0 (twice), NULL handles are
 *      accepted, and destroy without synchronize completes queued work.
 *   d) the synchronous __tgt_target_kernel (maps only, and inside
 *      begin/end_mapper) is complete when it returns.
 *   e) a queued launch that fails makes synchronize return non-zero.
 *
 * Build (no CUDA headers): cc -O2 -Wall -Wextra -DIMAGE_FILE='"kernels.sm_90.cubin"'
 *   async_harness.c -o async_harness -L<dir> -l:libomptarget.so.22.1 -ldl
 * Run with MOCK_CUDA_EMU=kernels.emu.so on the stand-ins (see run.sh).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IMAGE_FILE
#error "define IMAGE_FILE as a quoted path: -DIMAGE_FILE='\"path/kernels.sm_90.cubin\"'"
#endif

/* ------------------------------------------------------------------------ */
/* libomptarget ABI (LLVM 22)                                                */
/* ------------------------------------------------------------------------ */

typedef struct ident {
  int32_t reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} ident_t;

/* llvm::offloading::EntryTy (56 bytes). */
struct offload_entry {
  uint64_t Reserved;
  uint16_t Version;
  uint16_t Kind;
  uint32_t Flags;
  void *Address;
  const char *SymbolName;
  uint64_t Size;
  uint64_t Data;
  void *AuxAddr;
};
_Static_assert(sizeof(struct offload_entry) == 56, "EntryTy is 56 bytes");

struct tgt_device_image {
  void *ImageStart;
  void *ImageEnd;
  const struct offload_entry *EntriesBegin;
  const struct offload_entry *EntriesEnd;
};

struct tgt_bin_desc {
  int32_t NumDeviceImages;
  struct tgt_device_image *DeviceImages;
  const struct offload_entry *HostEntriesBegin;
  const struct offload_entry *HostEntriesEnd;
};

/* KernelArgsTy, version 3 (104 bytes). */
struct kernel_args {
  uint32_t Version;
  uint32_t NumArgs;
  void **ArgBasePtrs;
  void **ArgPtrs;
  int64_t *ArgSizes;
  int64_t *ArgTypes;
  void **ArgNames;
  void **ArgMappers;
  uint64_t Tripcount;
  uint64_t Flags;
  uint32_t NumTeams[3];
  uint32_t ThreadLimit[3];
  uint32_t DynCGroupMem;
};
_Static_assert(sizeof(struct kernel_args) == 104, "KernelArgsTy is 104 bytes");

enum {
  MAP_TO = 0x1,
  MAP_FROM = 0x2,
  MAP_TARGET_PARAM = 0x20,
  MAP_LITERAL = 0x100,
  MAP_IMPLICIT = 0x200,
};

void __tgt_register_lib(struct tgt_bin_desc *desc);
void __tgt_unregister_lib(struct tgt_bin_desc *desc);
void __tgt_target_data_begin_mapper(ident_t *loc, int64_t device_id, int32_t arg_num,
                                    void **args_base, void **args, int64_t *arg_sizes,
                                    int64_t *arg_types, void **arg_names,
                                    void **arg_mappers);
void __tgt_target_data_end_mapper(ident_t *loc, int64_t device_id, int32_t arg_num,
                                  void **args_base, void **args, int64_t *arg_sizes,
                                  int64_t *arg_types, void **arg_names,
                                  void **arg_mappers);
int __tgt_target_kernel(ident_t *loc, int64_t device_id, int32_t num_teams,
                        int32_t thread_limit, void *host_ptr, struct kernel_args *args);
int omp_get_num_devices(void) __attribute__((weak));

/* The asynchronous entry points (newest rustc; not in LLVM 22.1). */
void *__tgt_async_info_create(int64_t device) __attribute__((weak));
int __tgt_target_kernel_async(ident_t *loc, int64_t device_id, int32_t num_teams,
                              int32_t thread_limit, void *host_ptr,
                              struct kernel_args *args, void *async_info)
    __attribute__((weak));
int __tgt_async_info_synchronize(void *async_info) __attribute__((weak));
void __tgt_async_info_destroy(void *async_info) __attribute__((weak));

/* ------------------------------------------------------------------------ */
/* The image and its registration                                            */
/* ------------------------------------------------------------------------ */

__asm__(".section .rodata.gpu_async_image,\"a\",@progbits\n"
        ".balign 64\n"
        ".globl gpu_async_image_start\n"
        "gpu_async_image_start:\n"
        ".incbin \"" IMAGE_FILE "\"\n"
        ".globl gpu_async_image_end\n"
        "gpu_async_image_end:\n"
        ".previous\n");
extern char gpu_async_image_start[], gpu_async_image_end[];

/* Region ids: only their (distinct) addresses matter. */
char region_saxpy, region_launch_dims, region_read_global, region_write_global,
    region_many_args;
/* Host shadows of the device globals. */
int32_t host_g_value = -1;
int32_t host_g_table[4] = {-1, -1, -1, -1};

#define ENTRY(addr, name, size)                                                \
  { 0, 1, 1, 0, (void *)(addr), name, size, 0, 0 }

__attribute__((section("llvm_offload_entries"), used, aligned(8)))
const struct offload_entry async_harness_entries[] = {
    ENTRY(&region_saxpy, "saxpy", 0),
    ENTRY(&region_launch_dims, "launch_dims", 0),
    ENTRY(&region_read_global, "read_global", 0),
    ENTRY(&region_write_global, "write_global", 0),
    ENTRY(&region_many_args, "many_args", 0),
    ENTRY(&host_g_value, "g_value", sizeof(host_g_value)),
    ENTRY(host_g_table, "g_table", sizeof(host_g_table)),
};
extern const struct offload_entry __start_llvm_offload_entries[]
    __attribute__((visibility("hidden")));
extern const struct offload_entry __stop_llvm_offload_entries[]
    __attribute__((visibility("hidden")));

struct ob_header { /* llvm::object::OffloadBinary::Header */
  uint8_t Magic[4];  /* 10 FF 10 AD */
  uint32_t Version;
  uint64_t Size, EntryOffset, EntrySize;
};
struct ob_entry { /* llvm::object::OffloadBinary::Entry */
  uint16_t ImageKind, OffloadKind;
  uint32_t Flags;
  uint64_t StringOffset, NumStrings, ImageOffset, ImageSize;
};

static struct tgt_device_image images[1];
static struct tgt_bin_desc desc;
static void unregister(void) { __tgt_unregister_lib(&desc); }
__attribute__((constructor(101))) static void register_image(void) {
  char *start = gpu_async_image_start, *end = gpu_async_image_end;
  const struct ob_header *h = (const struct ob_header *)start;
  if ((size_t)(end - start) >= sizeof *h && !memcmp(h->Magic, "\x10\xff\x10\xad", 4)) {
    /* An OffloadBinary: hand over its (first) image, as the wrapper does. */
    const struct ob_entry *e = (const struct ob_entry *)(start + h->EntryOffset);
    start = gpu_async_image_start + e->ImageOffset;
    end = start + e->ImageSize;
  }
  images[0].ImageStart = start;
  images[0].ImageEnd = end;
  images[0].EntriesBegin = __start_llvm_offload_entries;
  images[0].EntriesEnd = __stop_llvm_offload_entries;
  desc.NumDeviceImages = 1;
  desc.DeviceImages = images;
  desc.HostEntriesBegin = __start_llvm_offload_entries;
  desc.HostEntriesEnd = __stop_llvm_offload_entries;
  __tgt_register_lib(&desc);
  atexit(unregister);
}

/* ------------------------------------------------------------------------ */
/* mock-cuda-async's statistics (--deferred only)                            */
/* ------------------------------------------------------------------------ */

struct mock_async_stats {
  unsigned long deferred, executed, dropped, pending, not_ready, waits, unloads,
      warnings, streams, events, no_context, peer_queries, peer_enables,
      peer_copies, dtod_copies;
};
static void (*get_stats)(struct mock_async_stats *);

/* Operations queued on the stand-in's streams and not run yet; -1 if unknown. */
static long pending_ops(void) {
  if (!get_stats)
    return -1;
  struct mock_async_stats s;
  memset(&s, 0, sizeof s);
  get_stats(&s);
  return (long)s.pending;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

#define DEVICE 0
static ident_t loc = {0, 2, 0, 22, ";async_harness.c;unknown;0;0;;"};
static int deferred; /* --deferred: the driver defers stream work */
static int n_pass, n_fail;

static void report(const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(const char *name, int ok, const char *fmt, ...) {
  va_list ap;
  printf("[%s] %s: ", ok ? "PASS" : "FAIL", name);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  if (ok)
    n_pass++;
  else
    n_fail++;
}

#define MAX_ARGS 8
struct arglist {
  int n;
  void *base[MAX_ARGS];
  void *ptr[MAX_ARGS];
  int64_t size[MAX_ARGS];
  int64_t type[MAX_ARGS];
};

static void arg_map(struct arglist *a, void *p, int64_t bytes, int64_t maptype) {
  a->base[a->n] = p;
  a->ptr[a->n] = p;
  a->size[a->n] = bytes;
  a->type[a->n] = maptype | MAP_TARGET_PARAM;
  a->n++;
}

/* A by-value scalar in the low bytes of a pointer-sized slot (clang's x.casted). */
static void arg_lit(struct arglist *a, const void *val, int64_t bytes, int implicit) {
  uint64_t slot = 0;
  memcpy(&slot, val, (size_t)bytes);
  a->base[a->n] = (void *)(uintptr_t)slot;
  a->ptr[a->n] = (void *)(uintptr_t)slot;
  a->size[a->n] = bytes;
  a->type[a->n] = MAP_LITERAL | MAP_TARGET_PARAM | (implicit ? MAP_IMPLICIT : 0);
  a->n++;
}

/* One saxpy launch, y[i] = a * x[i] + y[i]: its argument list and KernelArgs
 * (kept together so they outlive the queued work). */
struct saxpy_launch {
  struct arglist al;
  struct kernel_args ka;
  float a;
  int64_t n;
};

static void saxpy_setup(struct saxpy_launch *l, float *y, const float *x, float a,
                        int64_t n, int64_t ymap, int64_t xmap) {
  memset(l, 0, sizeof *l);
  l->a = a;
  l->n = n;
  arg_map(&l->al, y, n * (int64_t)sizeof *y, ymap);
  arg_map(&l->al, (void *)x, n * (int64_t)sizeof *x, xmap);
  arg_lit(&l->al, &l->a, sizeof l->a, 1);
  arg_lit(&l->al, &l->n, sizeof l->n, 0);
  l->ka.Version = 3;
  l->ka.NumArgs = (uint32_t)l->al.n;
  l->ka.ArgBasePtrs = l->al.base;
  l->ka.ArgPtrs = l->al.ptr;
  l->ka.ArgSizes = l->al.size;
  l->ka.ArgTypes = l->al.type;
  /* rustc's shape: {N, 0, 0} */
  l->ka.NumTeams[0] = 64;
  l->ka.ThreadLimit[0] = 128;
}

static int saxpy_async(struct saxpy_launch *l, void *h) {
  return __tgt_target_kernel_async(&loc, DEVICE, 64, 128, &region_saxpy, &l->ka, h);
}
static int saxpy_sync(struct saxpy_launch *l) {
  return __tgt_target_kernel(&loc, DEVICE, 64, 128, &region_saxpy, &l->ka);
}

#define N 100000
/* Inputs whose every result below is exact in float. */
static float v_x0(int64_t i) { return 0.5f * (float)i; }
static float v_y0(int64_t i) { return 2.0f + (float)i; }
static float v_z0(int64_t i) { return 1.0f + (float)(i % 1000); }
static float v_y1(int64_t i) { return 1.5f * v_x0(i) + v_y0(i); } /* after saxpy(y, x, 1.5) */
static float v_z1(int64_t i) { return 2.0f * v_y1(i) + v_z0(i); } /* after saxpy(z, y1, 2) */

static void fill(float *v, float (*f)(int64_t)) {
  for (int64_t i = 0; i < N; i++)
    v[i] = f(i);
}

/* -1 if v[i] == f(i) everywhere, else the first wrong index. */
static int64_t first_wrong(const float *v, float (*f)(int64_t)) {
  for (int64_t i = 0; i < N; i++)
    if (v[i] != f(i))
      return i;
  return -1;
}

/* "ok" or "v[i]=got want w" into buf. */
static const char *describe(char *buf, size_t len, const char *what, const float *v,
                            float (*f)(int64_t)) {
  int64_t i = first_wrong(v, f);
  if (i < 0)
    snprintf(buf, len, "%s right", what);
  else
    snprintf(buf, len, "%s[%" PRId64 "]=%g want %g", what, i, (double)v[i], (double)f(i));
  return buf;
}

static int have_async_api(void) {
  return __tgt_async_info_create && __tgt_target_kernel_async &&
         __tgt_async_info_synchronize && __tgt_async_info_destroy;
}

/* ------------------------------------------------------------------------ */
/* a) one queued launch                                                      */
/* ------------------------------------------------------------------------ */

static void test_a(void) {
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  fill(x, v_x0);
  fill(y, v_y0);
  char buf[160];
  void *h = __tgt_async_info_create(DEVICE);
  report("a: __tgt_async_info_create(0)", h != NULL, "handle %p", h);
  if (!h)
    goto out;
  struct saxpy_launch l;
  saxpy_setup(&l, y, x, 1.5f, N, MAP_TO | MAP_FROM, MAP_TO);
  int rc = saxpy_async(&l, h);
  report("a: __tgt_target_kernel_async(saxpy, y tofrom, x to)", rc == 0, "rc=%d", rc);
  if (deferred) {
    long pend = pending_ops();
    /* The stand-in has run nothing yet: y must be untouched. */
    report("a: host y unchanged right after the call (copy back queued)",
           first_wrong(y, v_y0) < 0, "%s, %ld operations pending on the stand-in",
           describe(buf, sizeof buf, "old y", y, v_y0), pend);
    report("a: the launch's work is queued, not run", pend > 0, "%ld pending", pend);
  }
  int s = __tgt_async_info_synchronize(h);
  report("a: __tgt_async_info_synchronize", s == 0 && first_wrong(y, v_y1) < 0,
         "returned %d, %s", s, describe(buf, sizeof buf, "y", y, v_y1));
  if (deferred)
    report("a: nothing left queued after synchronize", pending_ops() == 0, "%ld pending",
           pending_ops());
  __tgt_async_info_destroy(h);
  report("a: __tgt_async_info_destroy", first_wrong(y, v_y1) < 0 && first_wrong(x, v_x0) < 0,
         "returned; y and x intact");
out:
  free(x);
  free(y);
}

/* ------------------------------------------------------------------------ */
/* b) two dependent launches on one handle                                   */
/* ------------------------------------------------------------------------ */

static void test_b(int kept_mapped) {
  const char *tag = kept_mapped ? "b1 (kept mapped by begin/end_mapper)"
                                : "b2 (per-launch to/from maps)";
  char name[160], buf1[160], buf2[160];
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
  fill(x, v_x0);
  fill(y, v_y0);
  fill(z, v_z0);
  struct arglist data = {0};
  if (kept_mapped) {
    arg_map(&data, x, N * (int64_t)sizeof *x, MAP_TO);
    arg_map(&data, y, N * (int64_t)sizeof *y, MAP_TO | MAP_FROM);
    arg_map(&data, z, N * (int64_t)sizeof *z, MAP_TO | MAP_FROM);
    __tgt_target_data_begin_mapper(&loc, DEVICE, data.n, data.base, data.ptr, data.size,
                                   data.type, NULL, NULL);
  }
  void *h = __tgt_async_info_create(DEVICE);
  struct saxpy_launch l1, l2;
  /* y = 1.5 x + y, then z = 2 y + z: the second reads the first's output. */
  saxpy_setup(&l1, y, x, 1.5f, N, MAP_TO | MAP_FROM, MAP_TO);
  saxpy_setup(&l2, z, y, 2.0f, N, MAP_TO | MAP_FROM, MAP_TO);
  int rc1 = h ? saxpy_async(&l1, h) : -1;
  int rc2 = h ? saxpy_async(&l2, h) : -1;
  snprintf(name, sizeof name, "%s: two launches queued", tag);
  report(name, h && rc1 == 0 && rc2 == 0, "handle %p, rc=%d, %d", h, rc1, rc2);
  if (deferred && !kept_mapped) { /* (b1 copies nothing back before end_mapper) */
    snprintf(name, sizeof name, "%s: host y, z unchanged before synchronize", tag);
    report(name, first_wrong(y, v_y0) < 0 && first_wrong(z, v_z0) < 0, "%s, %s",
           describe(buf1, sizeof buf1, "old y", y, v_y0),
           describe(buf2, sizeof buf2, "old z", z, v_z0));
  }
  int s = h ? __tgt_async_info_synchronize(h) : -1;
  __tgt_async_info_destroy(h);
  if (kept_mapped)
    __tgt_target_data_end_mapper(&loc, DEVICE, data.n, data.base, data.ptr, data.size,
                                 data.type, NULL, NULL);
  snprintf(name, sizeof name, "%s: ordered, results right", tag);
  report(name, s == 0 && first_wrong(y, v_y1) < 0 && first_wrong(z, v_z1) < 0,
         "synchronize %d, %s, %s (z = 2*(1.5x+y)+z)", s,
         describe(buf1, sizeof buf1, "y", y, v_y1), describe(buf2, sizeof buf2, "z", z, v_z1));
  free(x);
  free(y);
  free(z);
}

/* ------------------------------------------------------------------------ */
/* c) empty handles, NULL, destroy without synchronize                       */
/* ------------------------------------------------------------------------ */

static void test_c(void) {
  void *h = __tgt_async_info_create(DEVICE);
  int s1 = h ? __tgt_async_info_synchronize(h) : -1;
  int s2 = h ? __tgt_async_info_synchronize(h) : -1;
  __tgt_async_info_destroy(h);
  report("c: synchronize of a handle with nothing queued", h && s1 == 0 && s2 == 0,
         "returned %d, then %d", s1, s2);
  int sn = __tgt_async_info_synchronize(NULL);
  __tgt_async_info_destroy(NULL);
  report("c: synchronize(NULL) / destroy(NULL)", sn == 0, "synchronize returned %d", sn);

  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  fill(x, v_x0);
  fill(y, v_y0);
  char buf[160];
  h = __tgt_async_info_create(DEVICE);
  struct saxpy_launch l;
  saxpy_setup(&l, y, x, 1.5f, N, MAP_TO | MAP_FROM, MAP_TO);
  int rc = h ? saxpy_async(&l, h) : -1;
  int before = first_wrong(y, v_y0) < 0;
  __tgt_async_info_destroy(h);
  report("c: destroy without synchronize completes the queued launch",
         rc == 0 && first_wrong(y, v_y1) < 0 && (!deferred || before), "rc=%d, %s%s", rc,
         describe(buf, sizeof buf, "y", y, v_y1),
         deferred ? (before ? ", y was untouched before destroy"
                            : ", y changed before destroy (not deferred?)")
                  : "");
  if (deferred)
    report("c: nothing left queued after destroy", pending_ops() == 0, "%ld pending",
           pending_ops());
  free(x);
  free(y);
}

/* ------------------------------------------------------------------------ */
/* d) the synchronous path                                                   */
/* ------------------------------------------------------------------------ */

static void test_d(void) {
  char buf[160];
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  fill(x, v_x0);
  fill(y, v_y0);
  struct saxpy_launch l;
  saxpy_setup(&l, y, x, 1.5f, N, MAP_TO | MAP_FROM, MAP_TO);
  int rc = saxpy_sync(&l);
  report("d: __tgt_target_kernel (maps only) complete on return",
         rc == 0 && first_wrong(y, v_y1) < 0, "rc=%d, %s", rc,
         describe(buf, sizeof buf, "y", y, v_y1));
  if (deferred)
    report("d: nothing left queued after the construct", pending_ops() == 0,
           "%ld pending", pending_ops());

  /* rustc's sequence: begin_mapper / kernel / end_mapper */
  fill(y, v_y0);
  __tgt_target_data_begin_mapper(&loc, DEVICE, l.al.n, l.al.base, l.al.ptr, l.al.size,
                                 l.al.type, NULL, NULL);
  rc = saxpy_sync(&l);
  __tgt_target_data_end_mapper(&loc, DEVICE, l.al.n, l.al.base, l.al.ptr, l.al.size,
                               l.al.type, NULL, NULL);
  report("d: begin_mapper / __tgt_target_kernel / end_mapper",
         rc == 0 && first_wrong(y, v_y1) < 0, "rc=%d, %s", rc,
         describe(buf, sizeof buf, "y", y, v_y1));
  if (deferred)
    report("d: nothing left queued after end_mapper", pending_ops() == 0, "%ld pending",
           pending_ops());
  free(x);
  free(y);
}

/* ------------------------------------------------------------------------ */
/* e) a queued launch fails (MOCK_ASYNC_FAIL_KERNEL=saxpy)                   */
/* ------------------------------------------------------------------------ */

static void test_e(void) {
  const char *fk = getenv("MOCK_ASYNC_FAIL_KERNEL");
  if (!fk || strcmp(fk, "saxpy") != 0)
    printf("[INFO] e: MOCK_ASYNC_FAIL_KERNEL is %s, not saxpy\n", fk ? fk : "unset");
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  fill(x, v_x0);
  fill(y, v_y0);
  void *h = __tgt_async_info_create(DEVICE);
  struct saxpy_launch l;
  saxpy_setup(&l, y, x, 1.5f, N, MAP_TO | MAP_FROM, MAP_TO);
  int rc = h ? saxpy_async(&l, h) : -1;
  /* The stand-in fails the launch only when the queue runs. */
  report("e: launch of the failing kernel is queued", rc == 0, "rc=%d", rc);
  int s = h ? __tgt_async_info_synchronize(h) : 0;
  report("e: __tgt_async_info_synchronize reports the queued failure", s != 0,
         "returned %d", s);
  int s2 = h ? __tgt_async_info_synchronize(h) : -1;
  printf("[INFO] e: a second synchronize of that handle returned %d\n", s2);
  __tgt_async_info_destroy(h);
  report("e: destroy after the failure", 1, "returned");

  /* Informational: is the device still usable (another kernel, new handle)? */
  int32_t out[256];
  memset(out, 0, sizeof out);
  struct arglist al = {0};
  const int64_t n = 256;
  arg_map(&al, out, sizeof out, MAP_FROM);
  arg_lit(&al, &n, sizeof n, 0);
  struct kernel_args ka;
  memset(&ka, 0, sizeof ka);
  ka.Version = 3;
  ka.NumArgs = (uint32_t)al.n;
  ka.ArgBasePtrs = al.base;
  ka.ArgPtrs = al.ptr;
  ka.ArgSizes = al.size;
  ka.ArgTypes = al.type;
  ka.NumTeams[0] = 2;
  ka.ThreadLimit[0] = 32;
  void *h2 = __tgt_async_info_create(DEVICE);
  int rc2 = h2 ? __tgt_target_kernel_async(&loc, DEVICE, 2, 32, &region_read_global, &ka, h2) : -1;
  int s3 = h2 ? __tgt_async_info_synchronize(h2) : -1;
  __tgt_async_info_destroy(h2);
  int good = 1;
  for (int64_t i = 0; i < n; i++)
    good &= out[i] == 42 * 1000 + (int32_t)((i & 3) + 1) + (int32_t)i;
  printf("[INFO] e: afterwards, read_global on a new handle: launch rc=%d, synchronize %d, "
         "output %s\n", rc2, s3, good ? "right" : "wrong");
  free(x);
  free(y);
}

int main(int argc, char **argv) {
  int fail_mode = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--deferred"))
      deferred = 1;
    else if (!strcmp(argv[i], "--fail"))
      fail_mode = 1;
    else {
      fprintf(stderr, "usage: %s [--deferred] [--fail]\n", argv[0]);
      return 2;
    }
  }
  int ndev = omp_get_num_devices ? omp_get_num_devices() : -1;
  printf("[INFO] async_harness: %s, image %zu bytes, %d offload entries, "
         "omp_get_num_devices()=%d\n",
         fail_mode ? "failure mode" : deferred ? "deferring driver" : "plain run",
         (size_t)(gpu_async_image_end - gpu_async_image_start),
         (int)(__stop_llvm_offload_entries - __start_llvm_offload_entries), ndev);
  if (deferred || fail_mode) {
    const char *drv = getenv("OMPTARGET_RS_LIBCUDA");
    void *dh = drv ? dlopen(drv, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (dh)
      get_stats = (void (*)(struct mock_async_stats *))dlsym(dh, "mock_async_get_stats");
    if (deferred)
      report("setup: mock-cuda-async queue statistics", get_stats != NULL,
             "mock_async_get_stats in OMPTARGET_RS_LIBCUDA=%s: %s", drv ? drv : "(unset)",
             get_stats ? "found" : "not found (not loaded, or not the deferring stand-in)");
  }
  report("setup: runtime exports the async entry points", have_async_api(),
         "__tgt_async_info_create/__tgt_target_kernel_async/"
         "__tgt_async_info_synchronize/__tgt_async_info_destroy");
  report("setup: an offload device", ndev >= 1, "omp_get_num_devices()=%d", ndev);
  if (have_async_api() && ndev >= 1) {
    if (fail_mode) {
      test_e();
    } else {
      test_a();
      test_b(1);
      test_b(0);
      test_c();
      test_d();
    }
  }
  printf("%d passed, %d failed\n", n_pass, n_fail);
  return n_fail ? 1 : 0;
}
