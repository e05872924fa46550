/*
 * mock_hsa.c - a CPU-only stand-in for the HSA runtime (libhsa-runtime64.so.1)
 * for testing libomptarget-compatible runtimes without an AMD GPU.
 *
 * It exports every entry point LLVM 22.1's AMDGPU plugin resolves (so LLVM's
 * own runtime can be run against it as a reference) with "device memory" =
 * host memory:
 *   - one CPU agent and MOCK_HSA_GPUS GPU agents (default 1) whose ISA is
 *     MOCK_HSA_ISA (default gfx90a:sramecc+:xnack-);
 *   - memory pools: CPU fine-grained with KERNARG_INIT, CPU fine-grained,
 *     per GPU a coarse-grained global pool and a group-segment pool;
 *     allocations are tracked and filled with 0xCD; async copies and fills
 *     refuse memory that is neither an HSA allocation, locked host memory
 *     nor a loaded code object; hsa_amd_memory_lock hands out a *tagged*
 *     agent pointer (bit 62 set: not dereferenceable on the host), so a
 *     runtime that copies from the host pointer instead is caught;
 *   - code objects: the ELF checks of the real loader (EM_AMDGPU, HSA OS/ABI,
 *     code object v4-v6, processor and xnack/sramecc against the agent ISA),
 *     PT_LOAD segments copied to one "device" allocation, `.kd` kernel
 *     descriptors (group/private/kernarg sizes from the descriptor), globals,
 *     and the amdhsa msgpack metadata note (explicit argument bytes and the
 *     hidden-argument offsets), read by its own small msgpack reader;
 *   - queues: a real AQL ring; storing to the doorbell signal processes every
 *     published packet (header type != INVALID) in order: a kernel dispatch is
 *     checked (fences, setup dimensions, workgroup and grid sizes, segment
 *     sizes, the kernarg buffer's pool, and the hidden arguments against the
 *     packet) and - with MOCK_HSA_EMU naming a host build of the same kernels
 *     (-DOFFLOAD_EMULATE_GRID, gpu-images' kernels.emu.so) - RUN on the CPU,
 *     every work-item in turn with the explicit 8-byte argument slots (a
 *     library without ok_emu_ids is an OpenMP program's x86-64 host-offload
 *     image: the kernel is called once per dispatch); then
 *     its completion signal is decremented. Barrier-AND packets check their
 *     dependencies;
 *   - signals with waits, and hsa_amd_signal_async_handler callbacks run when
 *     the condition becomes true;
 *   - profiling timestamps: with hsa_amd_profiling_set_profiler_enabled on a
 *     queue its dispatches, and with hsa_amd_profiling_async_copy_enable(1)
 *     every async copy, stamp their completion signal with when they started
 *     and completed (system clock = CLOCK_MONOTONIC ns), which
 *     hsa_amd_profiling_get_dispatch_time / _get_async_copy_time return.
 *
 * Environment: MOCK_HSA_TRACE=1 (log calls to stderr), MOCK_HSA_LOG=file (one
 * line per dispatch), MOCK_HSA_EMU=path[:path...], MOCK_HSA_GPUS=N, MOCK_HSA_ISA=target-id,
 * MOCK_HSA_INIT_FAIL=1 (hsa_init fails like a machine without /dev/kfd),
 * MOCK_HSA_POOL_MB=n (the size the GPU agents' global pools report, default 64 GiB),
 * MOCK_HSA_FAULT_KERNEL=name (dispatches of that kernel raise a GPU memory
 * fault event and a queue error instead of completing), MOCK_HSA_TRAP_KERNEL=name
 * (dispatches of that kernel end in a queue error, HSA_STATUS_ERROR_EXCEPTION,
 * as a trap instruction does, without a fault event),
 * MOCK_HSA_DEFER=1 (deferred completion, below), MOCK_HSA_DEFER_US=n (the
 * time one deferred operation takes, default 2000 microseconds).
 *
 * Deferred completion (MOCK_HSA_DEFER=1): AQL packets and async copies do
 * not run when published but on a worker thread, like a GPU: an operation
 * starts once its dependencies are satisfied (a copy's dependency signals,
 * a barrier-AND packet's dep_signal[], and for every packet the packet
 * before it in its queue, which is processed in order) and completes
 * MOCK_HSA_DEFER_US later: only then does a kernel run, a copy move its
 * bytes (checking again that both ranges are still HSA or locked memory)
 * and the completion signal drop. Exported test hooks:
 * mock_hsa_defer_gate(0) stops starting operations until
 * mock_hsa_defer_gate(1); mock_hsa_defer_pending() counts the operations
 * not completed yet.
 * Problems a real runtime would refuse or that would break on a GPU are
 * printed as "[mock-hsa] WARNING: ..." (and logged to MOCK_HSA_LOG as
 * "WARNING ..."); tests fail on them.
 * Build: cc -shared -fPIC -O1 -o libhsa-runtime64.so.1 mock_hsa.c -ldl -lpthread
 * Limits: kernels with 8-byte explicit arguments only, no barriers, no LDS,
 * at most 32 argument slots; without MOCK_HSA_DEFER everything completes
 * synchronously.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int hsa_status_t;
enum {
  HSA_STATUS_SUCCESS = 0x0,
  HSA_STATUS_INFO_BREAK = 0x1,
  HSA_STATUS_ERROR = 0x1000,
  HSA_STATUS_ERROR_INVALID_ARGUMENT = 0x1001,
  HSA_STATUS_ERROR_INVALID_QUEUE_CREATION = 0x1002,
  HSA_STATUS_ERROR_INVALID_ALLOCATION = 0x1003,
  HSA_STATUS_ERROR_INVALID_AGENT = 0x1004,
  HSA_STATUS_ERROR_INVALID_SIGNAL = 0x1006,
  HSA_STATUS_ERROR_OUT_OF_RESOURCES = 0x1008,
  HSA_STATUS_ERROR_INVALID_PACKET_FORMAT = 0x1009,
  HSA_STATUS_ERROR_NOT_INITIALIZED = 0x100B,
  HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS = 0x100D,
  HSA_STATUS_ERROR_INVALID_ISA = 0x100F,
  HSA_STATUS_ERROR_INVALID_CODE_OBJECT = 0x1010,
  HSA_STATUS_ERROR_INVALID_EXECUTABLE = 0x1011,
  HSA_STATUS_ERROR_FROZEN_EXECUTABLE = 0x1012,
  HSA_STATUS_ERROR_INVALID_SYMBOL_NAME = 0x1013,
  HSA_STATUS_ERROR_EXCEPTION = 0x1016,
  HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER = 0x1021,
};

typedef struct { uint64_t handle; } hsa_agent_t;
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct { uint64_t handle; } hsa_isa_t;
typedef struct { uint64_t handle; } hsa_amd_memory_pool_t;
typedef struct { uint64_t handle; } hsa_code_object_reader_t;
typedef struct { uint64_t handle; } hsa_executable_t;
typedef struct { uint64_t handle; } hsa_executable_symbol_t;
typedef struct { uint64_t handle; } hsa_loaded_code_object_t;
typedef struct { uint64_t handle; } hsa_code_object_t;
typedef int64_t hsa_signal_value_t;
typedef struct { uint32_t x, y, z; } hsa_dim3_t;

typedef struct hsa_queue_s {
  uint32_t type;
  uint32_t features;
  void *base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

typedef struct {
  uint16_t header, setup;
  uint16_t workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0;
  uint32_t grid_size_x, grid_size_y, grid_size_z;
  uint32_t private_segment_size, group_segment_size;
  uint64_t kernel_object;
  void *kernarg_address;
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_kernel_dispatch_packet_t;

typedef struct {
  uint16_t header, reserved0;
  uint32_t reserved1;
  hsa_signal_t dep_signal[5];
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_barrier_and_packet_t;

typedef struct {
  int event_type;
  hsa_agent_t agent;
  uint64_t virtual_address;
  uint32_t fault_reason_mask;
} hsa_amd_event_t;

/* ------------------------------------------------------------ logging --- */

static int trace_on = -1;
static void trace(const char *fmt, ...) {
  if (trace_on < 0) {
    const char *t = getenv("MOCK_HSA_TRACE");
    trace_on = t && *t && *t != '0';
  }
  if (!trace_on)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[mock-hsa] ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}
static FILE *launch_log(void) {
  static FILE *f;
  static int done;
  if (!done) {
    done = 1;
    const char *p = getenv("MOCK_HSA_LOG");
    if (p && *p)
      f = fopen(p, "a");
  }
  return f;
}
/* Warnings go to stderr and, as "WARNING ..." lines, to MOCK_HSA_LOG. */
static void warn(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[mock-hsa] WARNING: %s\n", msg);
  FILE *lg = launch_log();
  if (lg) {
    fprintf(lg, "WARNING %s\n", msg);
    fflush(lg);
  }
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int copy_profiling; /* hsa_amd_profiling_async_copy_enable */
#define NEED_INIT()                                                            \
  do {                                                                         \
    if (!initialized) {                                                        \
      warn("%s called before hsa_init", __func__);                            \
      return HSA_STATUS_ERROR_NOT_INITIALIZED;                                 \
    }                                                                          \
  } while (0)

/* ------------------------------------------------------------- agents --- */

#define CPU_AGENT 0x1000u
#define GPU_AGENT0 0x2000u
#define MAX_GPUS 8
#define POOL_KERNARG 0x3001u
#define POOL_FINE 0x3002u
#define POOL_GPU0 0x4000u /* + 16 * gpu: coarse; + 1: group */
enum { DEV_CPU = 0, DEV_GPU = 1 };

static int num_gpus(void) {
  const char *s = getenv("MOCK_HSA_GPUS");
  int n = s && *s ? atoi(s) : 1;
  return n < 0 ? 0 : n > MAX_GPUS ? MAX_GPUS : n;
}
static int gpu_index(hsa_agent_t a) {
  if (a.handle < GPU_AGENT0 || a.handle >= GPU_AGENT0 + (uint64_t)num_gpus())
    return -1;
  return (int)(a.handle - GPU_AGENT0);
}
static bool is_agent(hsa_agent_t a) { return a.handle == CPU_AGENT || gpu_index(a) >= 0; }

/* The agent ISA: processor + features ("gfx90a:sramecc+:xnack-"). */
static const char *isa_target(void) {
  const char *s = getenv("MOCK_HSA_ISA");
  return s && *s ? s : "gfx90a:sramecc+:xnack-";
}
static void isa_processor(char *out, size_t n) {
  snprintf(out, n, "%s", isa_target());
  char *c = strchr(out, ':');
  if (c)
    *c = 0;
}
/* 1 = on, 0 = off, -1 = not given. */
static int isa_feature(const char *name) {
  char want[32];
  snprintf(want, sizeof want, ":%s+", name);
  if (strstr(isa_target(), want))
    return 1;
  snprintf(want, sizeof want, ":%s-", name);
  if (strstr(isa_target(), want))
    return 0;
  return -1;
}

static const struct { uint32_t mach; const char *name; } machs[] = {
    {0x22, "gfx700"}, {0x2c, "gfx900"}, {0x2f, "gfx906"}, {0x30, "gfx908"},
    {0x3f, "gfx90a"}, {0x4c, "gfx942"}, {0x4f, "gfx950"}, {0x36, "gfx1030"},
    {0x41, "gfx1100"}, {0x48, "gfx1200"}, {0x5f, "gfx9-4-generic"},
};
static const char *mach_name(uint32_t m) {
  for (size_t i = 0; i < sizeof machs / sizeof machs[0]; i++)
    if (machs[i].mach == m)
      return machs[i].name;
  return NULL;
}

/* ------------------------------------------------------------- memory --- */

enum { MEM_ALLOC = 1, MEM_CODE = 2, MEM_GLOBAL = 3 };
struct region {
  uintptr_t start;
  size_t size;
  int kind;
  uint64_t pool;
  int accessible; /* hsa_amd_agents_allow_access called */
  struct region *next;
};
static struct region *regions;
struct locked {
  uintptr_t start;
  size_t size;
  struct locked *next;
};
static struct locked *locks;
#define AGENT_PTR_TAG ((uintptr_t)1 << 62)

static void add_region(uintptr_t start, size_t size, int kind, uint64_t pool) {
  struct region *r = calloc(1, sizeof *r);
  r->start = start;
  r->size = size;
  r->kind = kind;
  r->pool = pool;
  pthread_mutex_lock(&lock);
  r->next = regions;
  regions = r;
  pthread_mutex_unlock(&lock);
}
static struct region *find_region(uintptr_t p, size_t n) {
  struct region *found = NULL;
  pthread_mutex_lock(&lock);
  for (struct region *r = regions; r; r = r->next)
    if (p >= r->start && p + n <= r->start + r->size && p + n >= p) {
      found = r;
      break;
    }
  pthread_mutex_unlock(&lock);
  return found;
}
static bool find_lock(uintptr_t p, size_t n) {
  bool ok = false;
  pthread_mutex_lock(&lock);
  for (struct locked *l = locks; l; l = l->next)
    if (p >= l->start && p + n <= l->start + l->size)
      ok = true;
  pthread_mutex_unlock(&lock);
  return ok;
}
/* Translates an address usable by an HSA copy to a host address, or NULL. */
static void *device_view(const void *p, size_t n, const char *what) {
  uintptr_t a = (uintptr_t)p;
  if (a & AGENT_PTR_TAG) {
    uintptr_t h = a & ~AGENT_PTR_TAG;
    if (find_lock(h, n))
      return (void *)h;
    warn("%s: %p is a tagged agent pointer outside any locked range", what, p);
    return NULL;
  }
  if (find_region(a, n))
    return (void *)a;
  if (find_lock(a, n)) {
    warn("%s: %p is locked host memory passed by its host address; use the agent "
         "pointer hsa_amd_memory_lock returned", what, p);
    return NULL;
  }
  warn("%s: %p (+%zu) is neither HSA memory nor locked host memory", what, p, n);
  return NULL;
}

/* ------------------------------------------------------------ signals --- */

typedef bool (*hsa_amd_signal_handler)(hsa_signal_value_t, void *);
struct handler {
  int cond;
  hsa_signal_value_t value;
  hsa_amd_signal_handler fn;
  void *arg;
  struct handler *next;
};
struct mock_queue;
struct signal {
  _Atomic int64_t value;
  struct mock_queue *doorbell_of;
  struct handler *handlers;
  uint32_t magic;
  /* Profiling timestamps (system clock ticks = CLOCK_MONOTONIC ns) of the
   * last operation that completed this signal; 0 when it was not profiled. */
  uint64_t ts_start, ts_end;
};
#define SIGNAL_MAGIC 0x5160a1u
static struct signal *sig(hsa_signal_t s) {
  struct signal *p = (struct signal *)(uintptr_t)s.handle;
  if (!p || p->magic != SIGNAL_MAGIC) {
    warn("invalid signal handle %#llx", (unsigned long long)s.handle);
    return NULL;
  }
  return p;
}
static bool cond_true(int cond, int64_t v, int64_t cmp) {
  switch (cond) {
  case 0: return v == cmp;
  case 1: return v != cmp;
  case 2: return v < cmp;
  case 3: return v >= cmp;
  default: return false;
  }
}
static void process_queue(struct mock_queue *q);
static uint64_t now_ns(void);
/* Stamps the completion signal of an operation that ran from t0 to now
 * (profiled) or clears its stamps; then the caller decrements it. */
static void stamp(hsa_signal_t done, int profiled, uint64_t t0) {
  struct signal *p = done.handle ? (struct signal *)(uintptr_t)done.handle : NULL;
  if (!p || p->magic != SIGNAL_MAGIC)
    return;
  p->ts_start = profiled ? t0 : 0;
  p->ts_end = profiled ? now_ns() : 0;
}
static int deferred(void);
static void defer_wake(void);
/* Guards every signal's handler list (handlers run without it). */
static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;
static void signal_changed(struct signal *s) {
  if (s->doorbell_of) {
    if (deferred())
      defer_wake();
    else
      process_queue(s->doorbell_of);
    return;
  }
  /* Take the handlers whose condition holds, run them unlocked (they may
   * change signals themselves), then put back those that asked to stay. */
  struct handler *ready = NULL;
  pthread_mutex_lock(&hlock);
  struct handler **pp = &s->handlers;
  while (*pp) {
    struct handler *h = *pp;
    if (cond_true(h->cond, atomic_load(&s->value), h->value)) {
      *pp = h->next;
      h->next = ready;
      ready = h;
    } else {
      pp = &h->next;
    }
  }
  pthread_mutex_unlock(&hlock);
  while (ready) {
    struct handler *h = ready;
    ready = h->next;
    bool again = h->fn(atomic_load(&s->value), h->arg);
    if (again) {
      /* Kept; it runs again on the next change (not now: that could loop forever). */
      pthread_mutex_lock(&hlock);
      h->next = s->handlers;
      s->handlers = h;
      pthread_mutex_unlock(&hlock);
    } else {
      free(h);
    }
  }
}

EXPORT hsa_status_t hsa_signal_create(hsa_signal_value_t v, uint32_t n, const hsa_agent_t *c, hsa_signal_t *out) {
  NEED_INIT();
  if (!out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct signal *s = calloc(1, sizeof *s);
  atomic_store(&s->value, v);
  s->magic = SIGNAL_MAGIC;
  out->handle = (uint64_t)(uintptr_t)s;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_signal_create(hsa_signal_value_t v, uint32_t n, const hsa_agent_t *c, uint64_t attr, hsa_signal_t *out) {
  return hsa_signal_create(v, n, c, out);
}
EXPORT hsa_status_t hsa_signal_destroy(hsa_signal_t h) {
  struct signal *s = sig(h);
  if (!s)
    return HSA_STATUS_ERROR_INVALID_SIGNAL;
  s->magic = 0;
  free(s);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t h) {
  struct signal *s = sig(h);
  return s ? atomic_load(&s->value) : 0;
}
EXPORT hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t h) { return hsa_signal_load_scacquire(h); }
EXPORT void hsa_signal_store_relaxed(hsa_signal_t h, hsa_signal_value_t v) {
  struct signal *s = sig(h);
  if (!s)
    return;
  atomic_store(&s->value, v);
  signal_changed(s);
}
EXPORT void hsa_signal_store_screlease(hsa_signal_t h, hsa_signal_value_t v) { hsa_signal_store_relaxed(h, v); }
EXPORT void hsa_signal_subtract_screlease(hsa_signal_t h, hsa_signal_value_t v) {
  struct signal *s = sig(h);
  if (!s)
    return;
  atomic_fetch_sub(&s->value, v);
  signal_changed(s);
}
EXPORT void hsa_signal_subtract_relaxed(hsa_signal_t h, hsa_signal_value_t v) { hsa_signal_subtract_screlease(h, v); }
EXPORT hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t h, int cond, hsa_signal_value_t cmp, uint64_t timeout_hint, int state) {
  struct signal *s = sig(h);
  if (!s)
    return 0;
  /* Everything completes synchronously: an unsatisfied wait only ends by
   * its timeout hint (read as nanoseconds, at most 100 ms per call). */
  uint64_t limit = timeout_hint < 100000000ull ? timeout_hint : 100000000ull;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int64_t v = atomic_load(&s->value);
    if (cond_true(cond, v, cmp))
      return v;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t ns = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)(t.tv_nsec - t0.tv_nsec);
    if (ns >= limit)
      return v;
    struct timespec d = {0, 1000000};
    nanosleep(&d, NULL);
  }
}
EXPORT hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t h, int c, hsa_signal_value_t v, uint64_t t, int s) {
  return hsa_signal_wait_scacquire(h, c, v, t, s);
}
EXPORT hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t h, int cond, hsa_signal_value_t value, hsa_amd_signal_handler fn, void *arg) {
  NEED_INIT();
  struct signal *s = sig(h);
  if (!s || !fn)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct handler *x = calloc(1, sizeof *x);
  x->cond = cond;
  x->value = value;
  x->fn = fn;
  x->arg = arg;
  pthread_mutex_lock(&hlock);
  x->next = s->handlers;
  s->handlers = x;
  pthread_mutex_unlock(&hlock);
  signal_changed(s);
  return HSA_STATUS_SUCCESS;
}

/* -------------------------------------------------------- code objects --- */

typedef struct {
  unsigned char e_ident[16];
  uint16_t e_type, e_machine;
  uint32_t e_version;
  uint64_t e_entry, e_phoff, e_shoff;
  uint32_t e_flags;
  uint16_t e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx;
} Ehdr;
typedef struct {
  uint32_t p_type, p_flags;
  uint64_t p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align;
} Phdr;
typedef struct {
  uint32_t sh_name, sh_type;
  uint64_t sh_flags, sh_addr, sh_offset, sh_size;
  uint32_t sh_link, sh_info;
  uint64_t sh_addralign, sh_entsize;
} Shdr;
typedef struct {
  uint32_t st_name;
  unsigned char st_info, st_other;
  uint16_t st_shndx;
  uint64_t st_value, st_size;
} Sym;

#define MAX_ARGS 32
enum {
  H_BLOCK_X, H_BLOCK_Y, H_BLOCK_Z, H_GROUP_X, H_GROUP_Y, H_GROUP_Z,
  H_REM_X, H_REM_Y, H_REM_Z, H_GRID_DIMS, H_DYN_LDS, H_COUNT
};
static const char *hidden_names[H_COUNT] = {
    "hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z",
    "hidden_group_size_x", "hidden_group_size_y", "hidden_group_size_z",
    "hidden_remainder_x", "hidden_remainder_y", "hidden_remainder_z",
    "hidden_grid_dims", "hidden_dynamic_lds_size"};

struct ksym {
  uint32_t magic;
  int is_kernel;
  char name[128]; /* as looked up: "saxpy.kd" or "g_value" */
  char kernel[128];
  uint64_t address; /* kernel descriptor or variable */
  uint32_t size, kernarg_size, group_size, private_size;
  int have_meta;
  uint32_t explicit_bytes, meta_kernarg_size;
  int hidden_off[H_COUNT], hidden_size[H_COUNT];
  void *emu;
  uint32_t *emu_ids;
  struct ksym *next;
};
#define SYM_MAGIC 0x5e1f5e1fu
struct executable {
  uint32_t magic;
  int frozen;
  struct ksym *syms;
  struct executable *next;
};
#define EXEC_MAGIC 0xe8ec0bu
static struct executable *executables;
struct reader {
  uint32_t magic;
  unsigned char *bytes;
  size_t size;
};
#define READER_MAGIC 0x7eade7u

/* MOCK_HSA_EMU: one or more emulation libraries, separated by ':'. */
#define MAX_EMU 8
static void *emu_libs[MAX_EMU];
static uint32_t *emu_idss[MAX_EMU];
static char emu_paths[MAX_EMU][512];
static int n_emu;
static void load_emu(void) {
  static int done;
  if (done)
    return;
  done = 1;
  const char *list = getenv("MOCK_HSA_EMU");
  if (!list || !*list)
    return;
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *p = strtok_r(buf, ":", &save); p && n_emu < MAX_EMU; p = strtok_r(NULL, ":", &save)) {
    void *lib = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fprintf(stderr, "[mock-hsa] cannot load MOCK_HSA_EMU=%s: %s\n", p, dlerror());
      continue;
    }
    /* Without ok_emu_ids: the x86-64 host-offload image of the same OpenMP
     * program (clang names kernels and globals as in the code object); each
     * dispatch then calls the kernel once and it runs its teams and threads
     * on libomp (c-tests/gpu/omp-suite.sh). */
    uint32_t *ids = (uint32_t *)dlsym(lib, "ok_emu_ids");
    emu_libs[n_emu] = lib;
    snprintf(emu_paths[n_emu], sizeof emu_paths[n_emu], "%s", p);
    emu_idss[n_emu++] = ids;
    trace("emulation library %s loaded%s", p, ids ? "" : " (no ok_emu_ids: an OpenMP host image, one call per dispatch)");
  }
}
/* OpenMP host images (no ok_emu_ids) are loaded once per code object load,
 * from a private copy (as LLVM's host plugin does per device), so that every
 * agent has its own globals; emu_cur[i] is the copy of the load in progress. */
static void *emu_cur[MAX_EMU];
static int emu_loads;
static void *dlopen_copy(const char *path) {
  char tmp[] = "/tmp/mock-hsa-emu-XXXXXX";
  int out = mkstemp(tmp);
  FILE *in = fopen(path, "rb");
  void *lib = NULL;
  if (out >= 0 && in) {
    char buf[65536];
    size_t n;
    int ok = 1;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
      ok &= write(out, buf, n) == (ssize_t)n;
    if (ok)
      lib = dlopen(tmp, RTLD_NOW | RTLD_LOCAL);
  }
  if (in)
    fclose(in);
  if (out >= 0) {
    close(out);
    unlink(tmp);
  }
  if (!lib)
    fprintf(stderr, "[mock-hsa] cannot load a copy of %s: %s\n", path, dlerror());
  return lib;
}
static void emu_begin_load(void) {
  for (int i = 0; i < n_emu; i++)
    emu_cur[i] = emu_idss[i] || emu_loads == 0 ? emu_libs[i] : dlopen_copy(emu_paths[i]);
  emu_loads++;
}
/* The first emulation library defining `name` (and its ids array). */
static void *emu_sym(const char *name, uint32_t **ids) {
  for (int i = 0; i < n_emu; i++) {
    if (!emu_cur[i])
      continue;
    void *p = dlsym(emu_cur[i], name);
    if (p) {
      if (ids)
        *ids = emu_idss[i];
      return p;
    }
  }
  return NULL;
}

/* A minimal msgpack reader for the metadata note. */
struct mp {
  const unsigned char *p, *end;
  int bad;
};
static uint64_t mp_be(struct mp *m, int n) {
  uint64_t v = 0;
  if (m->end - m->p < n) {
    m->bad = 1;
    return 0;
  }
  for (int i = 0; i < n; i++)
    v = (v << 8) | *m->p++;
  return v;
}
/* Reads a header: returns the kind ('m' map, 'a' array, 's' string, 'i' int,
 * 'o' other) and its length / value. */
static int mp_head(struct mp *m, uint64_t *len) {
  if (m->p >= m->end) {
    m->bad = 1;
    return 'o';
  }
  unsigned t = *m->p++;
  *len = 0;
  if (t <= 0x7f) { *len = t; return 'i'; }
  if (t >= 0xe0) { *len = (uint64_t)(int64_t)(int8_t)t; return 'i'; }
  if ((t & 0xf0) == 0x80) { *len = t & 0xf; return 'm'; }
  if ((t & 0xf0) == 0x90) { *len = t & 0xf; return 'a'; }
  if ((t & 0xe0) == 0xa0) { *len = t & 0x1f; return 's'; }
  switch (t) {
  case 0xc0: case 0xc2: case 0xc3: return 'o';
  case 0xcc: *len = mp_be(m, 1); return 'i';
  case 0xcd: *len = mp_be(m, 2); return 'i';
  case 0xce: *len = mp_be(m, 4); return 'i';
  case 0xcf: *len = mp_be(m, 8); return 'i';
  case 0xd0: *len = (uint64_t)(int8_t)mp_be(m, 1); return 'i';
  case 0xd1: *len = (uint64_t)(int16_t)mp_be(m, 2); return 'i';
  case 0xd2: *len = (uint64_t)(int32_t)mp_be(m, 4); return 'i';
  case 0xd3: *len = mp_be(m, 8); return 'i';
  case 0xca: mp_be(m, 4); return 'o';
  case 0xcb: mp_be(m, 8); return 'o';
  case 0xd9: *len = mp_be(m, 1); return 's';
  case 0xda: *len = mp_be(m, 2); return 's';
  case 0xdb: *len = mp_be(m, 4); return 's';
  case 0xc4: case 0xc5: case 0xc6: {
    uint64_t n = mp_be(m, 1 << (t - 0xc4));
    if ((uint64_t)(m->end - m->p) < n) m->bad = 1; else m->p += n;
    return 'o';
  }
  case 0xdc: *len = mp_be(m, 2); return 'a';
  case 0xdd: *len = mp_be(m, 4); return 'a';
  case 0xde: *len = mp_be(m, 2); return 'm';
  case 0xdf: *len = mp_be(m, 4); return 'm';
  default: m->bad = 1; return 'o'; /* ext types are not used by the metadata */
  }
}
static void mp_skip(struct mp *m, int depth) {
  uint64_t n;
  if (depth > 16) { m->bad = 1; return; }
  int k = mp_head(m, &n);
  if (m->bad) return;
  if (k == 's') {
    if ((uint64_t)(m->end - m->p) < n) m->bad = 1; else m->p += n;
  } else if (k == 'a') {
    for (uint64_t i = 0; i < n && !m->bad; i++) mp_skip(m, depth + 1);
  } else if (k == 'm') {
    for (uint64_t i = 0; i < 2 * n && !m->bad; i++) mp_skip(m, depth + 1);
  }
}
/* Reads a string into buf; returns 0 when the value is not a string. */
static int mp_str(struct mp *m, char *buf, size_t cap) {
  const unsigned char *save = m->p;
  uint64_t n;
  if (mp_head(m, &n) != 's' || (uint64_t)(m->end - m->p) < n) {
    m->p = save;
    mp_skip(m, 0);
    return 0;
  }
  size_t c = n < cap - 1 ? n : cap - 1;
  memcpy(buf, m->p, c);
  buf[c] = 0;
  m->p += n;
  return 1;
}
static uint64_t mp_uint(struct mp *m) {
  const unsigned char *save = m->p;
  uint64_t n;
  if (mp_head(m, &n) != 'i') {
    m->p = save;
    mp_skip(m, 0);
    return 0;
  }
  return n;
}

struct kmeta {
  char name[128];
  uint32_t kernarg_size, explicit_bytes;
  int hidden_off[H_COUNT], hidden_size[H_COUNT];
  struct kmeta *next;
};

static void parse_kernel_meta(struct mp *m, uint64_t fields, struct kmeta *k) {
  for (int h = 0; h < H_COUNT; h++)
    k->hidden_off[h] = -1;
  for (uint64_t f = 0; f < fields && !m->bad; f++) {
    char key[64];
    if (!mp_str(m, key, sizeof key)) { mp_skip(m, 0); continue; }
    if (!strcmp(key, ".name")) {
      if (!mp_str(m, k->name, sizeof k->name)) k->name[0] = 0;
    } else if (!strcmp(key, ".kernarg_segment_size")) {
      k->kernarg_size = (uint32_t)mp_uint(m);
    } else if (!strcmp(key, ".args")) {
      uint64_t n;
      if (mp_head(m, &n) != 'a') { m->bad = 1; return; }
      for (uint64_t a = 0; a < n && !m->bad; a++) {
        uint64_t nf;
        if (mp_head(m, &nf) != 'm') { m->bad = 1; return; }
        uint64_t off = 0, size = 0;
        char kind[64] = "";
        for (uint64_t j = 0; j < nf && !m->bad; j++) {
          char ak[64];
          if (!mp_str(m, ak, sizeof ak)) { mp_skip(m, 0); continue; }
          if (!strcmp(ak, ".offset")) off = mp_uint(m);
          else if (!strcmp(ak, ".size")) size = mp_uint(m);
          else if (!strcmp(ak, ".value_kind")) { if (!mp_str(m, kind, sizeof kind)) kind[0] = 0; }
          else mp_skip(m, 0);
        }
        if (strncmp(kind, "hidden_", 7) != 0) {
          if (off + size > k->explicit_bytes) k->explicit_bytes = (uint32_t)(off + size);
        } else {
          for (int h = 0; h < H_COUNT; h++)
            if (!strcmp(kind, hidden_names[h])) {
              k->hidden_off[h] = (int)off;
              k->hidden_size[h] = (int)size;
            }
        }
      }
    } else {
      mp_skip(m, 0);
    }
  }
}

/* Parses NT_AMDGPU_METADATA (owner "AMDGPU", type 32) of the image. */
static struct kmeta *parse_metadata(const unsigned char *b, size_t size, const Ehdr *eh) {
  struct kmeta *list = NULL;
  const Shdr *sh = (const Shdr *)(b + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != 7 /* SHT_NOTE */ || sh[i].sh_offset + sh[i].sh_size > size)
      continue;
    const unsigned char *p = b + sh[i].sh_offset, *end = p + sh[i].sh_size;
    while (end - p >= 12) {
      uint32_t namesz, descsz, type;
      memcpy(&namesz, p, 4);
      memcpy(&descsz, p + 4, 4);
      memcpy(&type, p + 8, 4);
      const unsigned char *name = p + 12;
      const unsigned char *desc = name + ((namesz + 3) & ~3u);
      if (desc > end || (size_t)(end - desc) < descsz)
        break;
      if (type == 32 && namesz == 7 && !memcmp(name, "AMDGPU", 7)) {
        struct mp m = {desc, desc + descsz, 0};
        uint64_t n;
        if (mp_head(&m, &n) != 'm')
          return NULL;
        for (uint64_t e = 0; e < n && !m.bad; e++) {
          char key[64];
          if (!mp_str(&m, key, sizeof key)) { mp_skip(&m, 0); continue; }
          if (strcmp(key, "amdhsa.kernels") != 0) { mp_skip(&m, 0); continue; }
          uint64_t nk;
          if (mp_head(&m, &nk) != 'a') break;
          for (uint64_t k = 0; k < nk && !m.bad; k++) {
            uint64_t nf;
            if (mp_head(&m, &nf) != 'm') { m.bad = 1; break; }
            struct kmeta *km = calloc(1, sizeof *km);
            parse_kernel_meta(&m, nf, km);
            km->next = list;
            list = km;
          }
        }
        if (m.bad)
          warn("malformed amdhsa metadata note");
        return list;
      }
      p = desc + ((descsz + 3) & ~3u);
    }
  }
  return list;
}

EXPORT hsa_status_t hsa_code_object_reader_create_from_memory(const void *code, size_t size, hsa_code_object_reader_t *out) {
  NEED_INIT();
  if (!code || !size || !out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct reader *r = calloc(1, sizeof *r);
  r->magic = READER_MAGIC;
  r->bytes = malloc(size);
  memcpy(r->bytes, code, size);
  r->size = size;
  out->handle = (uint64_t)(uintptr_t)r;
  trace("hsa_code_object_reader_create_from_memory(%zu bytes)", size);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t h) {
  struct reader *r = (struct reader *)(uintptr_t)h.handle;
  if (!r || r->magic != READER_MAGIC)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  r->magic = 0;
  free(r->bytes);
  free(r);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_executable_create_alt(int profile, int rounding, const char *options, hsa_executable_t *out) {
  NEED_INIT();
  if (!out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (profile != 1)
    warn("hsa_executable_create_alt: profile %d (the GPU agents are FULL profile)", profile);
  struct executable *e = calloc(1, sizeof *e);
  e->magic = EXEC_MAGIC;
  pthread_mutex_lock(&lock);
  e->next = executables;
  executables = e;
  pthread_mutex_unlock(&lock);
  out->handle = (uint64_t)(uintptr_t)e;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_executable_create(int profile, int state, const char *options, hsa_executable_t *out) {
  return hsa_executable_create_alt(profile, 0, options, out);
}
static struct executable *exe(hsa_executable_t h) {
  struct executable *e = (struct executable *)(uintptr_t)h.handle;
  return e && e->magic == EXEC_MAGIC ? e : NULL;
}

/* The loader: checks, segments, symbols, metadata. */
static hsa_status_t load_code_object(struct executable *e, hsa_agent_t agent, const unsigned char *b, size_t size) {
  if (gpu_index(agent) < 0)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (size < sizeof(Ehdr) || memcmp(b, "\x7f" "ELF", 4) != 0)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  if (eh.e_ident[4] != 2 || eh.e_machine != 224 || eh.e_ident[7] != 64 || eh.e_ident[8] < 2 || eh.e_ident[8] > 4) {
    trace("not a code object v4-v6 for amdgcn-amd-amdhsa");
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  if (eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Phdr) > size || eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Shdr) > size)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  /* ISA: processor and pinned features against the agent's. */
  char proc[64];
  isa_processor(proc, sizeof proc);
  const char *img = mach_name(eh.e_flags & 0xff);
  int xnack = (eh.e_flags >> 8) & 3, sramecc = (eh.e_flags >> 10) & 3; /* 2 off, 3 on */
  int ax = isa_feature("xnack"), as = isa_feature("sramecc");
  if (!img || strcmp(img, proc) != 0 || (xnack >= 2 && ax != xnack - 2) || (sramecc >= 2 && as != sramecc - 2)) {
    fprintf(stderr, "[mock-hsa] code object for %s (e_flags %#x) cannot run on %s\n", img ? img : "?", eh.e_flags, isa_target());
    return HSA_STATUS_ERROR_INVALID_ISA;
  }
  /* Segments. */
  const Phdr *ph = (const Phdr *)(b + eh.e_phoff);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < eh.e_phnum; i++)
    if (ph[i].p_type == 1) {
      if (ph[i].p_vaddr < lo) lo = ph[i].p_vaddr;
      if (ph[i].p_vaddr + ph[i].p_memsz > hi) hi = ph[i].p_vaddr + ph[i].p_memsz;
      if (ph[i].p_offset + ph[i].p_filesz > size || ph[i].p_filesz > ph[i].p_memsz)
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
  if (lo == UINT64_MAX || hi - lo > (1u << 30))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  unsigned char *base = NULL;
  if (posix_memalign((void **)&base, 4096, hi - lo + 1))
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(base, 0, hi - lo + 1);
  base -= lo; /* base + vaddr = loaded address */
  for (int i = 0; i < eh.e_phnum; i++)
    if (ph[i].p_type == 1)
      memcpy(base + ph[i].p_vaddr, b + ph[i].p_offset, ph[i].p_filesz);
  add_region((uintptr_t)(base + lo), hi - lo, MEM_CODE, 0);
  load_emu();
  emu_begin_load();
  struct kmeta *meta = parse_metadata(b, size, &eh);
  /* Symbols from .dynsym. */
  const Shdr *sh = (const Shdr *)(b + eh.e_shoff);
  for (int i = 0; i < eh.e_shnum; i++) {
    if (sh[i].sh_type != 11 /* SHT_DYNSYM */ || sh[i].sh_link >= eh.e_shnum)
      continue;
    const Shdr *strs = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size)
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    const Sym *syms = (const Sym *)(b + sh[i].sh_offset);
    const char *str = (const char *)b + strs->sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof(Sym); k++) {
      const Sym *s = &syms[k];
      if ((s->st_info & 0xf) != 1 /* OBJECT */ || s->st_shndx == 0 || s->st_name >= strs->sh_size)
        continue;
      const char *name = str + s->st_name;
      struct ksym *x = calloc(1, sizeof *x);
      x->magic = SYM_MAGIC;
      snprintf(x->name, sizeof x->name, "%s", name);
      size_t len = strlen(name);
      if (len > 3 && !strcmp(name + len - 3, ".kd")) {
        x->is_kernel = 1;
        snprintf(x->kernel, sizeof x->kernel, "%.*s", (int)(len - 3), name);
        x->address = (uint64_t)(uintptr_t)(base + s->st_value);
        const unsigned char *kd = base + s->st_value;
        memcpy(&x->group_size, kd + 0, 4);
        memcpy(&x->private_size, kd + 4, 4);
        memcpy(&x->kernarg_size, kd + 8, 4);
        for (struct kmeta *m = meta; m; m = m->next)
          if (!strcmp(m->name, x->kernel)) {
            x->have_meta = 1;
            x->explicit_bytes = m->explicit_bytes;
            x->meta_kernarg_size = m->kernarg_size;
            memcpy(x->hidden_off, m->hidden_off, sizeof x->hidden_off);
            memcpy(x->hidden_size, m->hidden_size, sizeof x->hidden_size);
          }
        if (!x->have_meta)
          warn("kernel %s has no metadata entry", x->kernel);
        x->emu = emu_sym(x->kernel, &x->emu_ids);
        trace("  kernel %s: kernarg %u (metadata %u, explicit %u), group %u, private %u%s", x->kernel, x->kernarg_size,
              x->meta_kernarg_size, x->explicit_bytes, x->group_size, x->private_size, x->emu ? ", emulated" : "");
      } else {
        x->size = (uint32_t)s->st_size;
        void *host = emu_sym(name, NULL);
        if (host) {
          /* Initialise the emulation's storage from the code object (skipped
           * when equal: read-only data of the emulation library). */
          if (memcmp(host, base + s->st_value, s->st_size) != 0)
            memcpy(host, base + s->st_value, s->st_size);
          x->address = (uint64_t)(uintptr_t)host;
          add_region((uintptr_t)host, s->st_size ? s->st_size : 1, MEM_GLOBAL, 0);
        } else {
          x->address = (uint64_t)(uintptr_t)(base + s->st_value);
        }
        trace("  global %s: %u bytes%s", name, x->size, host ? " (emulation library storage)" : "");
      }
      x->next = e->syms;
      e->syms = x;
    }
  }
  return HSA_STATUS_SUCCESS;
}

EXPORT hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t h, hsa_agent_t agent, hsa_code_object_reader_t rh,
                                                          const char *options, hsa_loaded_code_object_t *loaded) {
  NEED_INIT();
  struct executable *e = exe(h);
  struct reader *r = (struct reader *)(uintptr_t)rh.handle;
  if (!e)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (!r || r->magic != READER_MAGIC)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  if (e->frozen)
    return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  hsa_status_t st = load_code_object(e, agent, r->bytes, r->size);
  trace("hsa_executable_load_agent_code_object(%zu bytes) -> %#x", r->size, st);
  if (st == HSA_STATUS_SUCCESS && loaded)
    loaded->handle = (uint64_t)(uintptr_t)r->bytes;
  return st;
}
struct legacy_code_object {
  unsigned char *bytes;
  size_t size;
};
EXPORT hsa_status_t hsa_code_object_deserialize(void *p, size_t n, const char *o, hsa_code_object_t *out) {
  NEED_INIT();
  struct legacy_code_object *c = calloc(1, sizeof *c);
  c->bytes = malloc(n);
  memcpy(c->bytes, p, n);
  c->size = n;
  out->handle = (uint64_t)(uintptr_t)c;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_code_object_destroy(hsa_code_object_t h) { return HSA_STATUS_SUCCESS; }
EXPORT hsa_status_t hsa_executable_load_code_object(hsa_executable_t h, hsa_agent_t agent, hsa_code_object_t c, const char *o) {
  NEED_INIT();
  struct executable *e = exe(h);
  struct legacy_code_object *co = (struct legacy_code_object *)(uintptr_t)c.handle;
  if (!e || !co)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return load_code_object(e, agent, co->bytes, co->size);
}
EXPORT hsa_status_t hsa_executable_freeze(hsa_executable_t h, const char *options) {
  NEED_INIT();
  struct executable *e = exe(h);
  if (!e)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (e->frozen)
    return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  e->frozen = 1;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_executable_validate(hsa_executable_t h, uint32_t *result) {
  struct executable *e = exe(h);
  if (!e || !result)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = 0;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_executable_destroy(hsa_executable_t h) {
  struct executable *e = exe(h);
  return e ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_EXECUTABLE;
}
EXPORT hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t h, const char *name, const hsa_agent_t *agent, hsa_executable_symbol_t *out) {
  NEED_INIT();
  struct executable *e = exe(h);
  if (!e || !name || !out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!e->frozen) {
    warn("hsa_executable_get_symbol_by_name(%s) on an executable that is not frozen", name);
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  }
  if (!agent || gpu_index(*agent) < 0)
    warn("hsa_executable_get_symbol_by_name(%s) without the GPU agent (code object v3+ symbols are agent symbols)", name);
  for (struct ksym *s = e->syms; s; s = s->next)
    if (!strcmp(s->name, name)) {
      out->handle = (uint64_t)(uintptr_t)s;
      trace("hsa_executable_get_symbol_by_name(%s) -> found", name);
      return HSA_STATUS_SUCCESS;
    }
  trace("hsa_executable_get_symbol_by_name(%s) -> not found", name);
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}
EXPORT hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t h, int attr, void *value) {
  NEED_INIT();
  struct ksym *s = (struct ksym *)(uintptr_t)h.handle;
  if (!s || s->magic != SYM_MAGIC || !value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attr) {
  case 0: *(uint32_t *)value = s->is_kernel ? 1 : 0; break;                 /* TYPE */
  case 1: *(uint32_t *)value = (uint32_t)strlen(s->name); break;           /* NAME_LENGTH */
  case 2: memcpy(value, s->name, strlen(s->name)); break;                  /* NAME */
  case 21: if (s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint64_t *)value = s->address; break;
  case 9: if (s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint32_t *)value = s->size; break;
  case 22: if (!s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint64_t *)value = s->address; break;
  case 11: if (!s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint32_t *)value = s->kernarg_size; break;
  case 12: if (!s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint32_t *)value = 16; break; /* kernarg align */
  case 13: if (!s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint32_t *)value = s->group_size; break;
  case 14: if (!s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(uint32_t *)value = s->private_size; break;
  case 15: if (!s->is_kernel) return HSA_STATUS_ERROR_INVALID_ARGUMENT; *(bool *)value = false; break;
  default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_executable_iterate_symbols(hsa_executable_t h, hsa_status_t (*cb)(hsa_executable_t, hsa_executable_symbol_t, void *), void *data) {
  NEED_INIT();
  struct executable *e = exe(h);
  if (!e || !cb)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (struct ksym *s = e->syms; s; s = s->next) {
    hsa_executable_symbol_t x = {(uint64_t)(uintptr_t)s};
    hsa_status_t st = cb(h, x, data);
    if (st != HSA_STATUS_SUCCESS)
      return st;
  }
  return HSA_STATUS_SUCCESS;
}
static struct ksym *kernel_by_object(uint64_t object) {
  struct ksym *found = NULL;
  pthread_mutex_lock(&lock);
  for (struct executable *e = executables; e && !found; e = e->next)
    for (struct ksym *s = e->syms; s; s = s->next)
      if (s->is_kernel && s->address == object) {
        found = s;
        break;
      }
  pthread_mutex_unlock(&lock);
  return found;
}

/* -------------------------------------------------------------- queues --- */

struct mock_queue {
  hsa_queue_t q; /* first: the runtime sees this */
  _Atomic uint64_t read_index, write_index;
  void (*callback)(hsa_status_t, hsa_queue_t *, void *);
  void *data;
  hsa_agent_t agent;
  int busy;
  int profiling; /* hsa_amd_profiling_set_profiler_enabled */
  /* Deferred mode: when the head packet started (0: not yet); the queue
   * stopped after an error. */
  uint64_t head_started_ns;
  int dead;
  struct mock_queue *next_queue;
};
typedef hsa_status_t (*hsa_amd_system_event_callback_t)(const hsa_amd_event_t *, void *);
static hsa_amd_system_event_callback_t event_cb;
static void *event_data;

EXPORT hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, uint32_t type,
                                     void (*cb)(hsa_status_t, hsa_queue_t *, void *), void *data,
                                     uint32_t priv, uint32_t group, hsa_queue_t **out) {
  NEED_INIT();
  if (gpu_index(agent) < 0 || !out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size == 0 || (size & (size - 1)) || size > 131072)
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  struct mock_queue *q = calloc(1, sizeof *q);
  hsa_kernel_dispatch_packet_t *ring = NULL;
  if (posix_memalign((void **)&ring, 64, (size_t)size * 64))
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  for (uint32_t i = 0; i < size; i++) {
    memset(&ring[i], 0, 64);
    ring[i].header = 1; /* HSA_PACKET_TYPE_INVALID */
  }
  q->q.type = type;
  q->q.features = 1;
  q->q.base_address = ring;
  q->q.size = size;
  static uint64_t ids;
  q->q.id = ++ids;
  q->callback = cb;
  q->data = data;
  q->agent = agent;
  void defer_add_queue(struct mock_queue *);
  defer_add_queue(q);
  struct signal *door = calloc(1, sizeof *door);
  door->magic = SIGNAL_MAGIC;
  door->doorbell_of = q;
  q->q.doorbell_signal.handle = (uint64_t)(uintptr_t)door;
  *out = &q->q;
  trace("hsa_queue_create(size %u) -> %p", size, (void *)q);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_queue_destroy(hsa_queue_t *q) { return q ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT; }
EXPORT uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t *q, uint64_t v) {
  return atomic_fetch_add(&((struct mock_queue *)q)->write_index, v);
}
EXPORT uint64_t hsa_queue_add_write_index_screlease(const hsa_queue_t *q, uint64_t v) { return hsa_queue_add_write_index_relaxed(q, v); }
EXPORT uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *q) { return atomic_load(&((struct mock_queue *)q)->read_index); }
EXPORT uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *q) { return hsa_queue_load_read_index_scacquire(q); }
EXPORT uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *q) { return atomic_load(&((struct mock_queue *)q)->write_index); }

typedef void (*kfn32)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                      uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                      uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                      uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

static uint64_t read_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* Returns 0 when the dispatch completed, non-zero for a queue error. */
static int run_dispatch(struct mock_queue *q, const hsa_kernel_dispatch_packet_t *pk, uint16_t header) {
  struct ksym *k = kernel_by_object(pk->kernel_object);
  if (!k) {
    warn("dispatch of unknown kernel object %#llx", (unsigned long long)pk->kernel_object);
    return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  }
  const char *name = k->kernel;
  unsigned acq = (header >> 9) & 3, rel = (header >> 11) & 3;
  if (acq == 0 || rel == 0)
    warn("%s: dispatch header %#x has no acquire/release fence (system-scope data would be stale)", name, header);
  uint32_t wg[3] = {pk->workgroup_size_x, pk->workgroup_size_y, pk->workgroup_size_z};
  uint32_t gs[3] = {pk->grid_size_x, pk->grid_size_y, pk->grid_size_z};
  unsigned dims = pk->setup & 3;
  unsigned want_dims = gs[2] > 1 ? 3 : gs[1] > 1 ? 2 : 1;
  if (dims != want_dims)
    warn("%s: setup says %u dimensions, the grid (%u,%u,%u) has %u", name, dims, gs[0], gs[1], gs[2], want_dims);
  uint64_t flat = (uint64_t)wg[0] * wg[1] * wg[2];
  if (!wg[0] || !wg[1] || !wg[2] || flat > 1024) {
    warn("%s: invalid workgroup size (%u,%u,%u)", name, wg[0], wg[1], wg[2]);
    return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  }
  uint32_t blocks[3];
  for (int d = 0; d < 3; d++) {
    if (!gs[d]) {
      warn("%s: grid size %d is 0", name, d);
      return HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    if (gs[d] % wg[d])
      warn("%s: grid size %u is not a multiple of the workgroup size %u (non-uniform launches are not emulated)", name, gs[d], wg[d]);
    blocks[d] = gs[d] / wg[d];
  }
  if (pk->group_segment_size < k->group_size)
    warn("%s: group segment %u is below the kernel's static %u bytes", name, pk->group_segment_size, k->group_size);
  if (pk->private_segment_size < k->private_size)
    warn("%s: private segment %u is below the kernel's %u bytes", name, pk->private_segment_size, k->private_size);
  const unsigned char *ka = pk->kernarg_address;
  struct region *kr = ka ? find_region((uintptr_t)ka, k->kernarg_size ? k->kernarg_size : 1) : NULL;
  if (k->kernarg_size && !kr) {
    warn("%s: kernarg buffer %p (+%u) is not HSA memory", name, (void *)ka, k->kernarg_size);
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  if (kr && kr->pool != POOL_KERNARG)
    warn("%s: kernarg buffer %p is not from the kernarg (KERNARG_INIT) pool", name, (void *)ka);
  if (kr && !kr->accessible)
    warn("%s: kernarg buffer %p was never made accessible to the GPU agents", name, (void *)ka);
  if ((uintptr_t)ka % 16)
    warn("%s: kernarg buffer %p is not 16-byte aligned", name, (void *)ka);
  /* Hidden arguments against the packet. */
  uint64_t expect[H_COUNT] = {blocks[0], blocks[1], blocks[2], wg[0], wg[1], wg[2], 0, 0, 0, want_dims, 0};
  char hidden[256] = "";
  int ho = 0;
  if (k->have_meta) {
    for (int h = 0; h < H_COUNT; h++) {
      if (k->hidden_off[h] < 0 || (uint32_t)(k->hidden_off[h] + k->hidden_size[h]) > k->kernarg_size)
        continue;
      uint64_t v = read_le(ka + k->hidden_off[h], k->hidden_size[h]);
      if (h == H_DYN_LDS) {
        ho += snprintf(hidden + ho, sizeof hidden - ho, " dyn_lds=%llu", (unsigned long long)v);
        if (v + k->group_size > pk->group_segment_size)
          warn("%s: hidden_dynamic_lds_size %llu exceeds the packet's group segment %u", name, (unsigned long long)v, pk->group_segment_size);
        continue;
      }
      if (v != expect[h])
        warn("%s: %s at kernarg offset %d is %llu, the packet implies %llu", name, hidden_names[h], k->hidden_off[h],
             (unsigned long long)v, (unsigned long long)expect[h]);
    }
  }
  int nslots = (int)((k->have_meta ? k->explicit_bytes : 0) + 7) / 8;
  if (nslots > MAX_ARGS)
    nslots = MAX_ARGS;
  uint64_t slot[MAX_ARGS] = {0};
  for (int i = 0; i < nslots; i++)
    slot[i] = read_le(ka + 8 * i, 8);
  FILE *lg = launch_log();
  if (trace_on > 0 || lg) {
    char line[1024];
    int o = snprintf(line, sizeof line, "launch %s grid=(%u,%u,%u) block=(%u,%u,%u) group=%u kernarg=%u args:", name, blocks[0],
                     blocks[1], blocks[2], wg[0], wg[1], wg[2], pk->group_segment_size, k->kernarg_size);
    for (int i = 0; i < nslots && o < (int)sizeof line - 24; i++)
      o += snprintf(line + o, sizeof line - o, " %#llx", (unsigned long long)slot[i]);
    snprintf(line + o, sizeof line - o, "%s", hidden);
    trace("%s", line);
    if (lg) {
      fprintf(lg, "%s\n", line);
      fflush(lg);
    }
  }
  const char *fault = getenv("MOCK_HSA_FAULT_KERNEL");
  if (fault && !strcmp(fault, name)) {
    fprintf(stderr, "[mock-hsa] injecting a memory fault in %s\n", name);
    if (event_cb) {
      hsa_amd_event_t ev = {0, q->agent, 0xdead000, 1};
      event_cb(&ev, event_data);
    }
    return HSA_STATUS_ERROR_EXCEPTION;
  }
  const char *trap = getenv("MOCK_HSA_TRAP_KERNEL");
  if (trap && !strcmp(trap, name)) {
    fprintf(stderr, "[mock-hsa] injecting a trap in %s\n", name);
    return HSA_STATUS_ERROR_EXCEPTION; /* a queue error without a memory fault event */
  }
  if (!k->emu) {
    trace("%s not emulated (no MOCK_HSA_EMU): dispatch only checked", name);
    return 0;
  }
  if (!k->emu_ids) { /* an OpenMP host-offload image: the whole grid in one call */
    ((kfn32)k->emu)(slot[0], slot[1], slot[2], slot[3], slot[4], slot[5], slot[6], slot[7], slot[8], slot[9],
                    slot[10], slot[11], slot[12], slot[13], slot[14], slot[15], slot[16], slot[17], slot[18],
                    slot[19], slot[20], slot[21], slot[22], slot[23], slot[24], slot[25], slot[26], slot[27],
                    slot[28], slot[29], slot[30], slot[31]);
    return 0;
  }
  for (uint32_t z = 0; z < blocks[2]; z++)
    for (uint32_t y = 0; y < blocks[1]; y++)
      for (uint32_t x = 0; x < blocks[0]; x++)
        for (uint32_t tz = 0; tz < wg[2]; tz++)
          for (uint32_t ty = 0; ty < wg[1]; ty++)
            for (uint32_t tx = 0; tx < wg[0]; tx++) {
              uint32_t ids[12] = {x, y, z, tx, ty, tz, wg[0], wg[1], wg[2], blocks[0], blocks[1], blocks[2]};
              memcpy(k->emu_ids, ids, sizeof ids);
              ((kfn32)k->emu)(slot[0], slot[1], slot[2], slot[3], slot[4], slot[5], slot[6], slot[7], slot[8], slot[9],
                              slot[10], slot[11], slot[12], slot[13], slot[14], slot[15], slot[16], slot[17], slot[18],
                              slot[19], slot[20], slot[21], slot[22], slot[23], slot[24], slot[25], slot[26], slot[27],
                              slot[28], slot[29], slot[30], slot[31]);
            }
  return 0;
}

static void process_queue(struct mock_queue *q) {
  if (q->busy)
    return; /* a completion callback rang the doorbell again: the loop below continues */
  q->busy = 1;
  hsa_kernel_dispatch_packet_t *ring = q->q.base_address;
  uint32_t mask = q->q.size - 1;
  for (;;) {
    uint64_t r = atomic_load(&q->read_index);
    if (r >= atomic_load(&q->write_index))
      break;
    hsa_kernel_dispatch_packet_t *pk = &ring[r & mask];
    uint32_t word = __atomic_load_n((uint32_t *)pk, __ATOMIC_ACQUIRE);
    uint16_t header = (uint16_t)word;
    unsigned type = header & 0xff;
    if (type == 1)
      break; /* reserved but not published yet */
    hsa_signal_t done = pk->completion_signal;
    int err = 0;
    uint64_t t0 = now_ns();
    if (type == 2) {
      err = run_dispatch(q, pk, header);
    } else if (type == 3) {
      hsa_barrier_and_packet_t *b = (hsa_barrier_and_packet_t *)pk;
      for (int i = 0; i < 5; i++)
        if (b->dep_signal[i].handle && hsa_signal_load_scacquire(b->dep_signal[i]) != 0)
          warn("barrier-AND packet depends on a signal that is still %lld (would wait forever here)",
               (long long)hsa_signal_load_scacquire(b->dep_signal[i]));
      done = b->completion_signal;
    } else {
      warn("packet of type %u is not supported", type);
      err = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    }
    if (err) {
      /* Like a real queue error: the queue stops, the callback runs, and the
       * completion signal is never decremented. */
      q->busy = 0;
      if (q->callback)
        q->callback(err, &q->q, q->data);
      return;
    }
    __atomic_store_n((uint32_t *)pk, 1u, __ATOMIC_RELEASE);
    atomic_store(&q->read_index, r + 1);
    stamp(done, q->profiling && type == 2, t0);
    if (done.handle)
      hsa_signal_subtract_screlease(done, 1);
  }
  q->busy = 0;
}

/* ------------------------------------------------------ init, agents --- */

EXPORT hsa_status_t hsa_init(void) {
  const char *f = getenv("MOCK_HSA_INIT_FAIL");
  if (f && *f && *f != '0') {
    trace("hsa_init -> HSA_STATUS_ERROR_OUT_OF_RESOURCES (MOCK_HSA_INIT_FAIL)");
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  initialized++;
  trace("hsa_init (%d GPU agents, ISA %s%s)", num_gpus(), isa_target(), deferred() ? ", deferred completion" : "");
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_shut_down(void) {
  if (!initialized)
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  initialized--;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_status_string(hsa_status_t s, const char **out) {
  if (!out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (s) {
  case HSA_STATUS_SUCCESS: *out = "HSA_STATUS_SUCCESS: The function has been executed successfully."; break;
  case HSA_STATUS_INFO_BREAK: *out = "HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing."; break;
  case HSA_STATUS_ERROR: *out = "HSA_STATUS_ERROR: A generic error has occurred."; break;
  case HSA_STATUS_ERROR_INVALID_ARGUMENT: *out = "HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument."; break;
  case HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: *out = "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid."; break;
  case HSA_STATUS_ERROR_INVALID_AGENT: *out = "HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid."; break;
  case HSA_STATUS_ERROR_INVALID_SIGNAL: *out = "HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid."; break;
  case HSA_STATUS_ERROR_OUT_OF_RESOURCES: *out = "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events."; break;
  case HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: *out = "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The packet format is invalid."; break;
  case HSA_STATUS_ERROR_NOT_INITIALIZED: *out = "HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero."; break;
  case HSA_STATUS_ERROR_INVALID_ISA: *out = "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid."; break;
  case HSA_STATUS_ERROR_INVALID_CODE_OBJECT: *out = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid."; break;
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE: *out = "HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid."; break;
  case HSA_STATUS_ERROR_FROZEN_EXECUTABLE: *out = "HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen."; break;
  case HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: *out = "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name."; break;
  case HSA_STATUS_ERROR_EXCEPTION: *out = "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception."; break;
  case HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: *out = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid."; break;
  default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_system_get_info(int attr, void *value) {
  NEED_INIT();
  switch (attr) {
  case 0: *(uint16_t *)value = 1; break;             /* VERSION_MAJOR */
  case 1: *(uint16_t *)value = 14; break;            /* VERSION_MINOR */
  case 2: { /* TIMESTAMP: CLOCK_MONOTONIC in ns (the frequency below) */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(uint64_t *)value = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    break;
  }
  case 3: *(uint64_t *)value = 1000000000ull; break; /* TIMESTAMP_FREQUENCY */
  case 4: *(uint64_t *)value = 1000000000ull; break; /* SIGNAL_MAX_WAIT */
  default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void *), void *data) {
  NEED_INIT();
  if (!cb)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  hsa_agent_t cpu = {CPU_AGENT};
  hsa_status_t st = cb(cpu, data);
  if (st != HSA_STATUS_SUCCESS)
    return st;
  for (int i = 0; i < num_gpus(); i++) {
    hsa_agent_t g = {GPU_AGENT0 + (uint64_t)i};
    st = cb(g, data);
    if (st != HSA_STATUS_SUCCESS)
      return st;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_agent_get_info(hsa_agent_t a, int attr, void *value) {
  NEED_INIT();
  if (!is_agent(a) || !value)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  int g = gpu_index(a);
  char proc[64];
  isa_processor(proc, sizeof proc);
  switch (attr) {
  case 0: memset(value, 0, 64); snprintf(value, 64, "%s", g >= 0 ? proc : "Mock CPU"); break; /* NAME */
  case 1: memset(value, 0, 64); snprintf(value, 64, "%s", g >= 0 ? "AMD" : "CPU"); break;     /* VENDOR_NAME */
  case 2: *(uint32_t *)value = g >= 0 ? 1 : 0; break;                                          /* FEATURE */
  case 3: *(uint32_t *)value = 1; break;                                                       /* MACHINE_MODEL */
  case 4: *(uint32_t *)value = g >= 0 ? 0 : 1; break;                                          /* PROFILE */
  case 6: *(uint32_t *)value = g >= 0 ? 64 : 0; break;                                         /* WAVEFRONT_SIZE */
  case 7: { uint16_t d[3] = {1024, 1024, 1024}; memcpy(value, d, sizeof d); break; }           /* WORKGROUP_MAX_DIM */
  case 8: *(uint32_t *)value = 1024; break;                                                    /* WORKGROUP_MAX_SIZE */
  case 9: { hsa_dim3_t d = {0xffffffffu, 0xffffffffu, 0xffffffffu}; memcpy(value, &d, sizeof d); break; } /* GRID_MAX_DIM */
  case 10: *(uint32_t *)value = 0xffffffffu; break;                                            /* GRID_MAX_SIZE */
  case 11: *(uint32_t *)value = 32; break;                                                     /* FBARRIER_MAX_SIZE */
  case 12: *(uint32_t *)value = g >= 0 ? 128 : 0; break;                                       /* QUEUES_MAX */
  case 13: *(uint32_t *)value = 64; break;                                                     /* QUEUE_MIN_SIZE */
  case 14: *(uint32_t *)value = 131072; break;                                                 /* QUEUE_MAX_SIZE */
  case 16: *(uint32_t *)value = g >= 0 ? (uint32_t)g + 1 : 0; break;                           /* NODE */
  case 17: *(uint32_t *)value = g >= 0 ? DEV_GPU : DEV_CPU; break;                             /* DEVICE */
  case 18: { uint32_t c[4] = {16384, 8 << 20, 0, 0}; memcpy(value, c, sizeof c); break; }      /* CACHE_SIZE */
  case 24: *(bool *)value = true; break;                                                       /* FAST_F16 */
  case 0xA000: *(uint32_t *)value = 0x740c; break;                                             /* CHIP_ID */
  case 0xA001: *(uint32_t *)value = 128; break;                                                /* CACHELINE_SIZE */
  case 0xA002: *(uint32_t *)value = g >= 0 ? 104 : 16; break;                                  /* COMPUTE_UNIT_COUNT */
  case 0xA003: *(uint32_t *)value = 1700; break;                                               /* MAX_CLOCK_FREQUENCY */
  case 0xA008: *(uint32_t *)value = 1600; break;                                               /* MEMORY_MAX_FREQUENCY */
  case 0xA009: memset(value, 0, 64); snprintf(value, 64, "%s", g >= 0 ? "Mock AMD Instinct (mock-hsa, CPU)" : "Mock CPU"); break;
  case 0xA00A: *(uint32_t *)value = 32; break;                                                 /* MAX_WAVES_PER_CU */
  case 0xA00B: *(uint32_t *)value = 4; break;                                                  /* NUM_SIMDS_PER_CU */
  case 0xA010: *(uint32_t *)value = 1; break;                                                  /* COOPERATIVE_QUEUES */
  case 0xA011: memset(value, 0, 21); snprintf(value, 21, g >= 0 ? "GPU-%016x" : "CPU-XX", 0x5eedf00du + (unsigned)(g < 0 ? 0 : g)); break;
  case 0xA016: *(uint64_t *)value = 100000000ull; break;                                       /* TIMESTAMP_FREQUENCY */
  case 0xA114: memset(value, 0, 8); break;                                                     /* MEMORY_PROPERTIES (not an APU) */
  default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_agent_iterate_isas(hsa_agent_t a, hsa_status_t (*cb)(hsa_isa_t, void *), void *data) {
  NEED_INIT();
  if (!is_agent(a) || !cb)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (gpu_index(a) < 0)
    return HSA_STATUS_SUCCESS; /* CPU agents list no ISA here */
  hsa_isa_t isa = {0x5000};
  hsa_status_t st = cb(isa, data);
  return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
}
EXPORT hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, int attr, void *value) {
  NEED_INIT();
  if (isa.handle != 0x5000 || !value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  char name[128];
  snprintf(name, sizeof name, "amdgcn-amd-amdhsa--%s", isa_target());
  if (attr == 0)
    *(uint32_t *)value = (uint32_t)strlen(name) + 1; /* length including the NUL, as ROCr */
  else if (attr == 1)
    memcpy(value, name, strlen(name) + 1);
  else
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_SUCCESS;
}

/* ---------------------------------------------------------- mem pools --- */

static int pool_gpu(uint64_t p) {
  if (p < POOL_GPU0)
    return -1;
  uint64_t g = (p - POOL_GPU0) / 16;
  return g < (uint64_t)num_gpus() ? (int)g : -1;
}
static bool is_pool(uint64_t p) {
  return p == POOL_KERNARG || p == POOL_FINE || (pool_gpu(p) >= 0 && (p - POOL_GPU0) % 16 <= 1);
}
EXPORT hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t a, hsa_status_t (*cb)(hsa_amd_memory_pool_t, void *), void *data) {
  NEED_INIT();
  if (!is_agent(a) || !cb)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  uint64_t list[2];
  int n = 0;
  int g = gpu_index(a);
  if (g < 0) {
    list[n++] = POOL_KERNARG;
    list[n++] = POOL_FINE;
  } else {
    list[n++] = POOL_GPU0 + 16 * (uint64_t)g;
    list[n++] = POOL_GPU0 + 16 * (uint64_t)g + 1;
  }
  for (int i = 0; i < n; i++) {
    hsa_amd_memory_pool_t p = {list[i]};
    hsa_status_t st = cb(p, data);
    if (st != HSA_STATUS_SUCCESS)
      return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
  }
  return HSA_STATUS_SUCCESS;
}
/* The global pools' reported size: MOCK_HSA_POOL_MB megabytes, default 64 GiB
 * (LLVM 22.1's record/replay reserves the whole reported size). */
static size_t pool_bytes(void) {
  const char *m = getenv("MOCK_HSA_POOL_MB");
  long long mb = m && *m ? atoll(m) : 0;
  return mb > 0 ? (size_t)mb << 20 : (size_t)64 << 30;
}
EXPORT hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t p, int attr, void *value) {
  NEED_INIT();
  if (!is_pool(p.handle) || !value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  bool group = pool_gpu(p.handle) >= 0 && (p.handle - POOL_GPU0) % 16 == 1;
  switch (attr) {
  case 0: *(uint32_t *)value = group ? 3 : 0; break; /* SEGMENT */
  case 1:                                            /* GLOBAL_FLAGS */
    *(uint32_t *)value = p.handle == POOL_KERNARG ? 1 | 2 : p.handle == POOL_FINE ? 2 : group ? 0 : 4;
    break;
  case 2: *(size_t *)value = group ? 65536 : pool_bytes(); break;     /* SIZE */
  case 5: *(bool *)value = !group; break;                             /* RUNTIME_ALLOC_ALLOWED */
  case 6: *(size_t *)value = 4096; break;                             /* RUNTIME_ALLOC_GRANULE */
  case 7: *(size_t *)value = 4096; break;                             /* RUNTIME_ALLOC_ALIGNMENT */
  case 15: *(bool *)value = p.handle == POOL_KERNARG || p.handle == POOL_FINE; break; /* ACCESSIBLE_BY_ALL */
  default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t a, hsa_amd_memory_pool_t p, int attr, void *value) {
  NEED_INIT();
  if (!is_agent(a) || !is_pool(p.handle) || attr != 0 || !value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  int pg = pool_gpu(p.handle);
  /* ACCESS: 0 never, 1 allowed by default, 2 disallowed by default. */
  *(uint32_t *)value = pg < 0 ? 1 : (gpu_index(a) == pg ? 1 : 2);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t p, size_t size, uint32_t flags, void **out) {
  NEED_INIT();
  if (!is_pool(p.handle) || !out || size == 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (pool_gpu(p.handle) >= 0 && (p.handle - POOL_GPU0) % 16 == 1)
    return HSA_STATUS_ERROR_INVALID_ALLOCATION; /* group segment */
  void *m = NULL;
  size_t rounded = (size + 4095) & ~(size_t)4095;
  if (posix_memalign(&m, 4096, rounded))
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(m, 0xcd, rounded);
  add_region((uintptr_t)m, size, MEM_ALLOC, p.handle);
  *out = m;
  trace("hsa_amd_memory_pool_allocate(pool %#llx, %zu) -> %p", (unsigned long long)p.handle, size, m);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_memory_pool_free(void *ptr) {
  NEED_INIT();
  pthread_mutex_lock(&lock);
  for (struct region **pp = &regions; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)ptr && (*pp)->kind == MEM_ALLOC) {
      struct region *r = *pp;
      *pp = r->next;
      pthread_mutex_unlock(&lock);
      trace("hsa_amd_memory_pool_free(%p)", ptr);
      free(r);
      free(ptr);
      return HSA_STATUS_SUCCESS;
    }
  pthread_mutex_unlock(&lock);
  warn("hsa_amd_memory_pool_free(%p): not an allocation (double free?)", ptr);
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
EXPORT hsa_status_t hsa_amd_agents_allow_access(uint32_t n, const hsa_agent_t *agents, const uint32_t *flags, const void *ptr) {
  NEED_INIT();
  if (!n || !agents)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < n; i++)
    if (!is_agent(agents[i]))
      return HSA_STATUS_ERROR_INVALID_AGENT;
  struct region *r = find_region((uintptr_t)ptr, 1);
  if (!r || r->start != (uintptr_t)ptr) {
    warn("hsa_amd_agents_allow_access(%p): not the start of an allocation", ptr);
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  r->accessible = 1;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_memory_lock(void *host, size_t size, hsa_agent_t *agents, int n, void **agent_ptr) {
  NEED_INIT();
  if (!host || !size || !agent_ptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct locked *l = calloc(1, sizeof *l);
  l->start = (uintptr_t)host;
  l->size = size;
  pthread_mutex_lock(&lock);
  l->next = locks;
  locks = l;
  pthread_mutex_unlock(&lock);
  *agent_ptr = (void *)((uintptr_t)host | AGENT_PTR_TAG);
  trace("hsa_amd_memory_lock(%p, %zu) -> %p", host, size, *agent_ptr);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_memory_unlock(void *host) {
  NEED_INIT();
  pthread_mutex_lock(&lock);
  for (struct locked **pp = &locks; *pp; pp = &(*pp)->next)
    if ((*pp)->start == (uintptr_t)host) {
      struct locked *l = *pp;
      *pp = l->next;
      pthread_mutex_unlock(&lock);
      free(l);
      return HSA_STATUS_SUCCESS;
    }
  pthread_mutex_unlock(&lock);
  warn("hsa_amd_memory_unlock(%p): not locked", host);
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}
typedef struct {
  uint32_t size;
  int type;
  void *agentBaseAddress, *hostBaseAddress;
  size_t sizeInBytes;
} hsa_amd_pointer_info_t;
EXPORT hsa_status_t hsa_amd_pointer_info(const void *ptr, hsa_amd_pointer_info_t *info, void *(*alloc)(size_t), uint32_t *n, hsa_agent_t **acc) {
  NEED_INIT();
  if (!info)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct region *r = find_region((uintptr_t)ptr, 1);
  if (n)
    *n = 0;
  info->type = 0;
  info->agentBaseAddress = info->hostBaseAddress = NULL;
  info->sizeInBytes = 0;
  if (r && r->kind == MEM_ALLOC) {
    info->type = 1; /* HSA */
    info->agentBaseAddress = info->hostBaseAddress = (void *)r->start;
    info->sizeInBytes = r->size;
  }
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t da, const void *src, hsa_agent_t sa, size_t size,
                                              uint32_t ndep, const hsa_signal_t *deps, hsa_signal_t done) {
  NEED_INIT();
  if (!is_agent(da) || !is_agent(sa))
    return HSA_STATUS_ERROR_INVALID_AGENT;
  for (uint32_t i = 0; i < ndep && !deferred(); i++)
    if (hsa_signal_load_scacquire(deps[i]) > 0)
      warn("hsa_amd_memory_async_copy: dependency %u is still pending (would wait)", i);
  void *d = device_view(dst, size, "hsa_amd_memory_async_copy dst");
  void *s = device_view(src, size, "hsa_amd_memory_async_copy src");
  if (!d || !s)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (deferred()) {
    hsa_status_t defer_copy(void *, const void *, size_t, uint32_t, const hsa_signal_t *, hsa_signal_t);
    trace("hsa_amd_memory_async_copy(%p <- %p, %zu, %u deps) deferred", dst, src, size, ndep);
    return defer_copy(dst, src, size, ndep, deps, done);
  }
  uint64_t t0 = now_ns();
  memmove(d, s, size);
  trace("hsa_amd_memory_async_copy(%p <- %p, %zu)", dst, src, size);
  stamp(done, copy_profiling, t0);
  if (done.handle)
    hsa_signal_subtract_screlease(done, 1);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size) {
  NEED_INIT();
  memmove(dst, src, size);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_memory_fill(void *ptr, uint32_t value, size_t count) {
  NEED_INIT();
  if ((uintptr_t)ptr % 4)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  uint32_t *p = device_view(ptr, count * 4, "hsa_amd_memory_fill");
  if (!p)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < count; i++)
    p[i] = value;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t cb, void *data) {
  NEED_INIT();
  event_cb = cb;
  event_data = data;
  return HSA_STATUS_SUCCESS;
}
/* Profiling: a queue with profiling on stamps its dispatches' completion
 * signals, hsa_amd_profiling_async_copy_enable(true) every async copy's;
 * times are the system clock's (TIMESTAMP: CLOCK_MONOTONIC ns): when the
 * operation started (deferred mode: its dependencies were met) and when it
 * completed (after the kernel ran / the bytes moved). */
EXPORT hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t *q, int enable) {
  NEED_INIT();
  if (!q)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  ((struct mock_queue *)q)->profiling = enable != 0;
  trace("hsa_amd_profiling_set_profiler_enabled(%p, %d)", (void *)q, enable);
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_profiling_async_copy_enable(bool enable) {
  NEED_INIT();
  copy_profiling = enable;
  trace("hsa_amd_profiling_async_copy_enable(%d)", (int)enable);
  return HSA_STATUS_SUCCESS;
}
typedef struct {
  uint64_t start, end;
} hsa_amd_profiling_time_t;
EXPORT hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal, hsa_amd_profiling_time_t *time) {
  NEED_INIT();
  struct signal *p = sig(signal);
  if (!p)
    return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!time || gpu_index(agent) < 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (atomic_load(&p->value) > 0)
    warn("hsa_amd_profiling_get_dispatch_time: the signal is still %lld (the dispatch has not completed)", (long long)atomic_load(&p->value));
  time->start = p->ts_start;
  time->end = p->ts_end;
  return HSA_STATUS_SUCCESS;
}
EXPORT hsa_status_t hsa_amd_profiling_get_async_copy_time(hsa_signal_t signal, hsa_amd_profiling_time_t *time) {
  NEED_INIT();
  struct signal *p = sig(signal);
  if (!p)
    return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!time)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (atomic_load(&p->value) > 0)
    warn("hsa_amd_profiling_get_async_copy_time: the signal is still %lld (the copy has not completed)", (long long)atomic_load(&p->value));
  time->start = p->ts_start;
  time->end = p->ts_end;
  return HSA_STATUS_SUCCESS;
}

/* ----------------------------------------------- deferred completion --- */

static int deferred(void) {
  static int on = -1;
  if (on < 0) {
    const char *d = getenv("MOCK_HSA_DEFER");
    on = d && *d && *d != '0';
  }
  return on;
}
static uint64_t defer_ns(void) {
  static int64_t ns = -1;
  if (ns < 0) {
    const char *u = getenv("MOCK_HSA_DEFER_US");
    ns = (u && *u ? atoll(u) : 2000) * 1000;
    if (ns < 0)
      ns = 0;
  }
  return (uint64_t)ns;
}
static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct deferred_copy {
  void *dst;
  const void *src;
  size_t size;
  uint32_t ndep;
  hsa_signal_t deps[16];
  hsa_signal_t done;
  uint64_t started_ns;
  struct deferred_copy *next;
};
/* dlock guards the lists and the gate; operations run without it. */
static pthread_mutex_t dlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dcond = PTHREAD_COND_INITIALIZER;
static struct deferred_copy *dcopies;
static struct mock_queue *dqueues;
static int gate_open = 1;
static int worker_started;

static void *defer_worker(void *);
static void defer_start_locked(void) {
  if (worker_started)
    return;
  worker_started = 1;
  /* The worker runs this library's code until the process ends: keep it
   * mapped when the runtime dlcloses it (LLVM's libomptarget does at exit). */
  Dl_info self;
  if (dladdr((void *)defer_worker, &self) && self.dli_fname)
    dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  pthread_t t;
  pthread_create(&t, NULL, defer_worker, NULL);
  pthread_detach(t);
}
static void defer_wake(void) {
  pthread_mutex_lock(&dlock);
  defer_start_locked();
  pthread_cond_broadcast(&dcond);
  pthread_mutex_unlock(&dlock);
}
void defer_add_queue(struct mock_queue *q) {
  pthread_mutex_lock(&dlock);
  q->next_queue = dqueues;
  dqueues = q;
  pthread_mutex_unlock(&dlock);
}
hsa_status_t defer_copy(void *dst, const void *src, size_t size, uint32_t ndep, const hsa_signal_t *deps, hsa_signal_t done) {
  if (ndep > 16) {
    warn("hsa_amd_memory_async_copy: %u dependencies (the mock keeps 16)", ndep);
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  struct deferred_copy *c = calloc(1, sizeof *c);
  c->dst = dst;
  c->src = src;
  c->size = size;
  c->ndep = ndep;
  for (uint32_t i = 0; i < ndep; i++) {
    if (!sig(deps[i])) {
      free(c);
      return HSA_STATUS_ERROR_INVALID_SIGNAL;
    }
    c->deps[i] = deps[i];
  }
  c->done = done;
  pthread_mutex_lock(&dlock);
  struct deferred_copy **pp = &dcopies; /* FIFO */
  while (*pp)
    pp = &(*pp)->next;
  *pp = c;
  defer_start_locked();
  pthread_cond_broadcast(&dcond);
  pthread_mutex_unlock(&dlock);
  return HSA_STATUS_SUCCESS;
}
static bool signals_zero(const hsa_signal_t *s, int n) {
  for (int i = 0; i < n; i++)
    if (s[i].handle && hsa_signal_load_scacquire(s[i]) != 0)
      return false;
  return true;
}

EXPORT void mock_hsa_defer_gate(int open) {
  pthread_mutex_lock(&dlock);
  gate_open = open;
  pthread_cond_broadcast(&dcond);
  pthread_mutex_unlock(&dlock);
}
EXPORT int mock_hsa_defer_pending(void) {
  int n = 0;
  pthread_mutex_lock(&dlock);
  for (struct deferred_copy *c = dcopies; c; c = c->next)
    n++;
  for (struct mock_queue *q = dqueues; q; q = q->next_queue)
    if (!q->dead)
      n += (int)(atomic_load(&q->write_index) - atomic_load(&q->read_index));
  pthread_mutex_unlock(&dlock);
  return n;
}

/* Runs the head packet of q (called without dlock); returns 1 if it completed. */
static void run_head(struct mock_queue *q, hsa_kernel_dispatch_packet_t *pk, uint16_t header, uint64_t started) {
  unsigned type = header & 0xff;
  hsa_signal_t done = pk->completion_signal;
  int err = 0;
  if (type == 2) {
    err = run_dispatch(q, pk, header);
  } else if (type == 3) {
    done = ((hsa_barrier_and_packet_t *)pk)->completion_signal;
  } else {
    warn("packet of type %u is not supported", type);
    err = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  }
  if (err) {
    q->dead = 1;
    if (q->callback)
      q->callback(err, &q->q, q->data);
    return;
  }
  __atomic_store_n((uint32_t *)pk, 1u, __ATOMIC_RELEASE);
  atomic_fetch_add(&q->read_index, 1);
  stamp(done, q->profiling && type == 2, started);
  if (done.handle)
    hsa_signal_subtract_screlease(done, 1);
}

static void *defer_worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&dlock);
  for (;;) {
    uint64_t now = now_ns(), wait_until = 0;
    struct mock_queue *run_q = NULL;
    hsa_kernel_dispatch_packet_t *run_pk = NULL;
    uint16_t run_header = 0;
    uint64_t run_started = 0;
    struct deferred_copy *run_c = NULL;
    if (gate_open) {
      for (struct mock_queue *q = dqueues; q && !run_q; q = q->next_queue) {
        uint64_t r = atomic_load(&q->read_index);
        if (q->dead || r >= atomic_load(&q->write_index))
          continue;
        hsa_kernel_dispatch_packet_t *pk = &((hsa_kernel_dispatch_packet_t *)q->q.base_address)[r & (q->q.size - 1)];
        uint16_t header = (uint16_t)__atomic_load_n((uint32_t *)pk, __ATOMIC_ACQUIRE);
        if ((header & 0xff) == 1)
          continue; /* reserved, not published yet */
        if ((header & 0xff) == 3 && !signals_zero(((hsa_barrier_and_packet_t *)pk)->dep_signal, 5))
          continue; /* a barrier-AND waits for its dependencies */
        if (!q->head_started_ns)
          q->head_started_ns = now;
        if (now >= q->head_started_ns + defer_ns()) {
          run_q = q;
          run_pk = pk;
          run_header = header;
          run_started = q->head_started_ns;
          q->head_started_ns = 0;
        } else if (!wait_until || q->head_started_ns + defer_ns() < wait_until) {
          wait_until = q->head_started_ns + defer_ns();
        }
      }
      for (struct deferred_copy **pp = &dcopies; *pp && !run_q && !run_c; pp = &(*pp)->next) {
        struct deferred_copy *c = *pp;
        if (!signals_zero(c->deps, (int)c->ndep))
          continue;
        if (!c->started_ns)
          c->started_ns = now;
        if (now >= c->started_ns + defer_ns()) {
          *pp = c->next;
          run_c = c;
          break;
        }
        if (!wait_until || c->started_ns + defer_ns() < wait_until)
          wait_until = c->started_ns + defer_ns();
      }
    }
    if (!run_q && !run_c) {
      /* Nothing to run yet: sleep until the next completion time, a new
       * operation, or at most 1 ms (dependencies are polled). */
      uint64_t until = now + 1000000;
      if (wait_until && wait_until < until)
        until = wait_until;
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      uint64_t rel = until > now ? until - now : 0;
      ts.tv_sec += (time_t)(rel / 1000000000ull);
      ts.tv_nsec += (long)(rel % 1000000000ull);
      if (ts.tv_nsec >= 1000000000l) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000l;
      }
      pthread_cond_timedwait(&dcond, &dlock, &ts);
      continue;
    }
    pthread_mutex_unlock(&dlock);
    if (run_q) {
      run_head(run_q, run_pk, run_header, run_started);
    } else {
      void *d = device_view(run_c->dst, run_c->size, "deferred hsa_amd_memory_async_copy dst");
      void *s = device_view(run_c->src, run_c->size, "deferred hsa_amd_memory_async_copy src");
      if (d && s)
        memmove(d, s, run_c->size);
      trace("deferred copy %p <- %p (%zu bytes) done", run_c->dst, run_c->src, run_c->size);
      stamp(run_c->done, copy_profiling, run_c->started_ns);
      if (run_c->done.handle)
        hsa_signal_subtract_screlease(run_c->done, 1);
      free(run_c);
    }
    pthread_mutex_lock(&dlock);
  }
  return NULL;
}
