/*
 * mock_cuda_async.c - a deferring layer over mock-cuda (the CPU stand-in for
 * libcuda.so.1 that gpu-images builds), so tests can see whether the CUDA
 * plugin really waits for its streams.
 *
 * mock-cuda runs every stream operation when it is called. This library is
 * linked with a DT_NEEDED entry on mock-cuda and opened instead of it
 * (OMPTARGET_RS_LIBCUDA=.../libcuda-async.so): dlsym(handle, name) searches
 * this object before its dependencies, so the functions defined here win and
 * every other driver call resolves to mock-cuda. Each override forwards to
 * mock-cuda through dlsym(RTLD_NEXT, name).
 *
 * Deferred per stream, in order: cuMemcpy{HtoD,DtoH,DtoD,Peer,}Async(_v2),
 * cuMemsetD{8,16,32}Async, cuLaunchKernel (its parameter buffer is copied at
 * the call, as the driver does), and cuStreamWaitEvent. cuEventRecord marks
 * a position in a stream. Work runs only when someone waits for it:
 *   cuStreamSynchronize(s)    runs all of s;
 *   cuStreamQuery(s)          answers CUDA_ERROR_NOT_READY for the first
 *                             MOCK_ASYNC_NOT_READY (default 0) queries of
 *                             pending work, then runs all of s;
 *   cuEventSynchronize(e)     runs e's stream up to e;
 *   cuCtxSynchronize()        runs every stream;
 *   a queued wait for e       runs e's stream up to e (where e was when
 *                             cuStreamWaitEvent was called) before going on;
 *   cuStreamDestroy(s)        runs s first (the driver completes it too).
 * Work on the NULL stream, and launches with kernelParams instead of a
 * parameter buffer, run at once (after flushing the stream).
 * Event timing: an event is reached (keeps CLOCK_MONOTONIC for
 * cuEventElapsedTime) when its stream runs past its position: just before
 * the next queued operation runs, or at once when nothing is pending before
 * it, so two events around an operation time that operation.
 *
 * Errors: a queued launch of the kernel named by MOCK_ASYNC_FAIL_KERNEL fails
 * when it runs with CUDA_ERROR_LAUNCH_FAILED (719); the first failure of a
 * stream is returned once by the cuStreamSynchronize/cuStreamQuery that runs
 * it, and the rest of that stream's queued work is dropped (a faulted
 * context runs nothing more). cuMemFree(_v2)/cuMemFreeHost of a pointer that
 * queued work still names print "[mock-cuda-async] WARNING: ..." (a buffer
 * freed before the stream completed).
 *
 * Devices: MOCK_ASYNC_DEVICES=N presents N devices backed by mock-cuda's one
 * (distinct primary contexts); MOCK_ASYNC_PEER=1 lets them access each
 * other (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess are counted).
 *
 * Contexts: the context made current by cuCtxSetCurrent is tracked per host
 * thread; enqueueing work or creating streams/events without one fails with
 * CUDA_ERROR_INVALID_CONTEXT and a WARNING.
 *
 * Introspection for tests: mock_async_get_stats(), mock_async_origin(name)
 * (the file RTLD_NEXT resolves name to). MOCK_ASYNC_TRACE=1 logs to stderr.
 *
 * Build: cc -shared -fPIC -O1 -o libcuda-async.so mock_cuda_async.c \
 *           /path/to/mock-cuda/libcuda.so.1 -ldl -lpthread
 * (the mock has no SONAME, so DT_NEEDED records that absolute path).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

#include <time.h>
static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUfunction, *CUmodule;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_LAUNCH_FAILED = 719,
};

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int tracing(void) {
  const char *t = getenv("MOCK_ASYNC_TRACE");
  return t && *t && *t != '0';
}
#define TRACE(...)                                                             \
  do {                                                                         \
    if (tracing()) {                                                           \
      fprintf(stderr, "[mock-cuda-async] " __VA_ARGS__);                       \
      fprintf(stderr, "\n");                                                   \
    }                                                                          \
  } while (0)

/* The next definition of `name` (mock-cuda's). */
static void *next(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (!p) {
    fprintf(stderr, "[mock-cuda-async] FATAL: %s not found after this library\n", name);
    abort();
  }
  return p;
}
#define NEXT(T, name) ((T)next(name))

/* ------------------------------------------------------------ statistics --- */

struct mock_async_stats {
  unsigned long deferred;  /* operations queued */
  unsigned long executed;  /* queued operations run */
  unsigned long dropped;   /* queued operations dropped after a stream failed */
  unsigned long pending;   /* queued operations not yet run */
  unsigned long not_ready; /* CUDA_ERROR_NOT_READY answers */
  unsigned long waits;     /* queued event waits run */
  unsigned long unloads;   /* cuModuleUnload calls */
  unsigned long warnings;  /* WARNING lines printed */
  unsigned long streams;   /* live streams */
  unsigned long events;    /* live events */
  unsigned long no_context; /* calls refused: no context current on the calling thread */
  unsigned long peer_queries; /* cuDeviceCanAccessPeer calls */
  unsigned long peer_enables; /* cuCtxEnablePeerAccess calls */
  unsigned long peer_copies;  /* cuMemcpyPeerAsync calls */
  unsigned long dtod_copies;  /* cuMemcpyDtoDAsync(_v2) / cuMemcpyAsync calls */
};
static struct mock_async_stats stats;

/* ------------------------------------------------------------ devices ----- */

/* MOCK_ASYNC_DEVICES=N (1..8, default 1) devices, all mock-cuda's one device
 * (same host memory), each with its own primary context handle, so a plugin's
 * per-device state and peer copies can be exercised. cuDeviceCanAccessPeer
 * answers MOCK_ASYNC_PEER (default 0) for two different devices, read at each
 * call; cuCtxEnablePeerAccess answers CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
 * (704) the second time for a pair. */
#define MAX_DEVICES 8
static int num_devices(void) {
  const char *e = getenv("MOCK_ASYNC_DEVICES");
  int n = e && *e ? atoi(e) : 1;
  return n < 1 ? 1 : n > MAX_DEVICES ? MAX_DEVICES : n;
}
static char device_ctx[MAX_DEVICES];
static unsigned char peer_enabled[MAX_DEVICES][MAX_DEVICES];
static int ctx_device(CUcontext c) {
  for (int i = 0; i < MAX_DEVICES; i++)
    if (c == (CUcontext)&device_ctx[i])
      return i;
  return -1;
}

EXPORT CUresult cuDeviceGetCount(int *n) {
  *n = num_devices();
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal < 0 || ordinal >= num_devices())
    return CUDA_ERROR_INVALID_VALUE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int d) {
  if (d < 0 || d >= num_devices())
    return CUDA_ERROR_INVALID_VALUE;
  CUresult r = NEXT(CUresult (*)(CUcontext *, int), "cuDevicePrimaryCtxRetain")(c, 0);
  if (r == CUDA_SUCCESS)
    *c = (CUcontext)&device_ctx[d];
  return r;
}
EXPORT CUresult cuDeviceCanAccessPeer(int *can, int a, int b) {
  const char *e = getenv("MOCK_ASYNC_PEER");
  pthread_mutex_lock(&lock);
  stats.peer_queries++;
  pthread_mutex_unlock(&lock);
  *can = a != b && e && *e && *e != '0';
  return CUDA_SUCCESS;
}

/* ------------------------------------------------------------ contexts ---- */

/* The context current on each host thread. Work enqueued, and streams and
 * events created, on a thread without one are refused with
 * CUDA_ERROR_INVALID_CONTEXT, so a plugin that forgets cuCtxSetCurrent on a
 * thread it did not initialise on is caught (mock-cuda accepts anything). */
static __thread CUcontext current_ctx;

EXPORT CUresult cuCtxSetCurrent(CUcontext c) {
  current_ctx = c;
  return NEXT(CUresult (*)(CUcontext), "cuCtxSetCurrent")(c);
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *c) {
  *c = current_ctx;
  return CUDA_SUCCESS;
}

/* Enables access from the current context's device to `peer`'s. */
EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
  int from = ctx_device(current_ctx), to = ctx_device(peer);
  if (from < 0 || to < 0 || from == to || flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  stats.peer_enables++;
  int again = peer_enabled[from][to];
  peer_enabled[from][to] = 1;
  pthread_mutex_unlock(&lock);
  return again ? 704 /* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */ : CUDA_SUCCESS;
}

static int no_context(const char *call) {
  if (current_ctx)
    return 0;
  pthread_mutex_lock(&lock);
  stats.no_context++;
  stats.warnings++;
  pthread_mutex_unlock(&lock);
  fprintf(stderr, "[mock-cuda-async] WARNING: %s on a thread without a current context\n", call);
  return 1;
}

/* ------------------------------------------------------------ the queues --- */

enum { OP_HTOD, OP_DTOH, OP_DTOD, OP_PEER, OP_SET8, OP_SET16, OP_SET32, OP_LAUNCH, OP_WAIT };

struct stream;
struct op {
  int kind;
  uint64_t seq;
  CUdeviceptr dst, src;
  size_t n;
  unsigned value;
  CUcontext dst_ctx, src_ctx;
  /* OP_LAUNCH */
  CUfunction func;
  unsigned dims[7];
  unsigned char *params;
  size_t param_bytes;
  /* OP_WAIT */
  struct stream *wait_stream;
  uint64_t wait_seq;
  struct op *next;
};

struct stream {
  struct op *head, *tail;
  uint64_t last_seq; /* seq of the last queued op */
  uint64_t done_seq; /* every op with seq <= done_seq has run */
  CUresult error;    /* first failure not yet reported */
  int failed;        /* drop further work */
  int queries;       /* NOT_READY answers for the current pending work */
  struct stream *next_live;
};
static struct stream *live_streams;

struct event {
  struct stream *stream; /* NULL: never recorded */
  uint64_t seq;
  uint64_t ns; /* when it was reached (0: not yet); for cuEventElapsedTime */
  struct event *next_live;
};
static struct event *live_events;

/* Kernel names by function handle (from cuModuleGetFunction). */
struct fname {
  CUfunction f;
  char name[128];
  struct fname *next;
};
static struct fname *fnames;

static const char *func_name(CUfunction f) {
  for (struct fname *p = fnames; p; p = p->next)
    if (p->f == f)
      return p->name;
  return "?";
}

static struct stream *find_stream(void *s) {
  for (struct stream *p = live_streams; p; p = p->next_live)
    if ((void *)p == s)
      return p;
  return NULL;
}
static struct event *find_event(void *e) {
  for (struct event *p = live_events; p; p = p->next_live)
    if ((void *)p == e)
      return p;
  return NULL;
}

static void warn(const char *what, unsigned long long p) {
  stats.warnings++;
  fprintf(stderr, "[mock-cuda-async] WARNING: %s %#llx while queued work still uses it\n", what, p);
}

static void flush(struct stream *s, uint64_t upto);

static CUresult run(struct op *o) {
  switch (o->kind) {
  case OP_HTOD:
    return NEXT(CUresult (*)(CUdeviceptr, const void *, size_t, void *), "cuMemcpyHtoDAsync_v2")(
        o->dst, (const void *)(uintptr_t)o->src, o->n, NULL);
  case OP_DTOH:
    return NEXT(CUresult (*)(void *, CUdeviceptr, size_t, void *), "cuMemcpyDtoHAsync_v2")((void *)(uintptr_t)o->dst, o->src,
                                                                                           o->n, NULL);
  case OP_DTOD:
    return NEXT(CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, void *), "cuMemcpyDtoDAsync_v2")(o->dst, o->src, o->n, NULL);
  case OP_PEER:
    return NEXT(CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, void *), "cuMemcpyPeerAsync")(
        o->dst, o->dst_ctx, o->src, o->src_ctx, o->n, NULL);
  case OP_SET8:
    return NEXT(CUresult (*)(CUdeviceptr, unsigned char, size_t, void *), "cuMemsetD8Async")(o->dst, (unsigned char)o->value,
                                                                                             o->n, NULL);
  case OP_SET16:
    return NEXT(CUresult (*)(CUdeviceptr, unsigned short, size_t, void *), "cuMemsetD16Async")(o->dst, (unsigned short)o->value,
                                                                                               o->n, NULL);
  case OP_SET32:
    return NEXT(CUresult (*)(CUdeviceptr, unsigned, size_t, void *), "cuMemsetD32Async")(o->dst, o->value, o->n, NULL);
  case OP_LAUNCH: {
    const char *fail = getenv("MOCK_ASYNC_FAIL_KERNEL");
    if (fail && *fail && !strcmp(fail, func_name(o->func))) {
      TRACE("launch of %s fails (MOCK_ASYNC_FAIL_KERNEL)", fail);
      return CUDA_ERROR_LAUNCH_FAILED;
    }
    void *extra[5] = {(void *)1, o->params, (void *)2, &o->param_bytes, (void *)0};
    return NEXT(CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                             void **),
                "cuLaunchKernel")(o->func, o->dims[0], o->dims[1], o->dims[2], o->dims[3], o->dims[4], o->dims[5], o->dims[6],
                                  NULL, NULL, o->params ? extra : NULL);
  }
  case OP_WAIT:
    stats.waits++;
    if (find_stream(o->wait_stream))
      flush(o->wait_stream, o->wait_seq);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

/* Events of s whose position the stream has passed are reached now: they
 * get the time (cuEventElapsedTime measures the work between two events as
 * a GPU's timestamps do). Lock held. */
static void reach_events(struct stream *s) {
  uint64_t now = 0;
  for (struct event *e = live_events; e; e = e->next_live)
    if (e->stream == s && !e->ns && e->seq <= s->done_seq)
      e->ns = now ? now : (now = now_ns());
}

/* Runs s's queued work with seq <= upto, in order. Lock held. */
static void flush(struct stream *s, uint64_t upto) {
  while (s->head && s->head->seq <= upto) {
    reach_events(s); /* those recorded before the next operation */
    struct op *o = s->head;
    s->head = o->next;
    if (!s->head)
      s->tail = NULL;
    stats.pending--;
    if (s->failed) {
      stats.dropped++;
    } else {
      CUresult r = run(o);
      stats.executed++;
      if (r != CUDA_SUCCESS) {
        TRACE("stream %p: queued operation %d failed with %d", (void *)s, o->kind, r);
        s->error = r;
        s->failed = 1;
      }
    }
    s->done_seq = o->seq;
    free(o->params);
    free(o);
  }
  if (!s->head) {
    s->done_seq = s->last_seq;
    s->queries = 0;
  }
  reach_events(s);
}

static void flush_all(void) {
  for (struct stream *p = live_streams; p; p = p->next_live)
    flush(p, p->last_seq);
}

/* Queues `o` on stream `sh`; runs it now for the NULL or an unknown stream. */
static CUresult enqueue(void *sh, struct op *o) {
  if (no_context("enqueueing stream work")) {
    free(o->params);
    free(o);
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  pthread_mutex_lock(&lock);
  struct stream *s = find_stream(sh);
  CUresult r = CUDA_SUCCESS;
  if (!s) {
    TRACE("operation %d on stream %p runs at once", o->kind, sh);
    r = run(o);
    free(o->params);
    free(o);
  } else {
    o->seq = ++s->last_seq;
    o->next = NULL;
    if (s->tail)
      s->tail->next = o;
    else
      s->head = o;
    s->tail = o;
    stats.deferred++;
    stats.pending++;
    TRACE("stream %p: queued operation %d as #%llu", (void *)s, o->kind, (unsigned long long)o->seq);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

static struct op *new_op(int kind) {
  struct op *o = calloc(1, sizeof *o);
  if (o)
    o->kind = kind;
  return o;
}

/* Whether queued work names address p (copy ends, fill target, parameter slot). */
static int in_use(unsigned long long p) {
  for (struct stream *s = live_streams; s; s = s->next_live)
    for (struct op *o = s->head; o; o = o->next) {
      if (o->kind == OP_WAIT)
        continue;
      if (o->dst == p || (o->kind != OP_SET8 && o->kind != OP_SET16 && o->kind != OP_SET32 && o->src == p))
        return 1;
      for (size_t i = 0; o->params && i + 8 <= o->param_bytes; i += 8) {
        uint64_t v;
        memcpy(&v, o->params + i, 8);
        if (v == p)
          return 1;
      }
    }
  return 0;
}

/* ------------------------------------------------------------ copies ------ */

static CUresult copy(int kind, CUdeviceptr dst, CUdeviceptr src, size_t n, void *s) {
  struct op *o = new_op(kind);
  if (!o)
    return CUDA_ERROR_OUT_OF_MEMORY;
  o->dst = dst;
  o->src = src;
  o->n = n;
  return enqueue(s, o);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, void *s) {
  return copy(OP_HTOD, d, (CUdeviceptr)(uintptr_t)h, n, s);
}
EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *h, size_t n, void *s) { return cuMemcpyHtoDAsync_v2(d, h, n, s); }
EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, void *s) {
  return copy(OP_DTOH, (CUdeviceptr)(uintptr_t)h, d, n, s);
}
EXPORT CUresult cuMemcpyDtoHAsync(void *h, CUdeviceptr d, size_t n, void *s) { return cuMemcpyDtoHAsync_v2(h, d, n, s); }
static CUresult dtod(CUdeviceptr a, CUdeviceptr b, size_t n, void *s) {
  pthread_mutex_lock(&lock);
  stats.dtod_copies++;
  pthread_mutex_unlock(&lock);
  return copy(OP_DTOD, a, b, n, s);
}
EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr a, CUdeviceptr b, size_t n, void *s) { return dtod(a, b, n, s); }
EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr a, CUdeviceptr b, size_t n, void *s) { return dtod(a, b, n, s); }
EXPORT CUresult cuMemcpyAsync(CUdeviceptr a, CUdeviceptr b, size_t n, void *s) { return dtod(a, b, n, s); }
EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr a, CUcontext ca, CUdeviceptr b, CUcontext cb, size_t n, void *s) {
  if (ctx_device(ca) < 0 || ctx_device(cb) < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  stats.peer_copies++;
  pthread_mutex_unlock(&lock);
  struct op *o = new_op(OP_PEER);
  if (!o)
    return CUDA_ERROR_OUT_OF_MEMORY;
  o->dst = a;
  o->dst_ctx = ca;
  o->src = b;
  o->src_ctx = cb;
  o->n = n;
  return enqueue(s, o);
}

static CUresult fill(int kind, CUdeviceptr d, unsigned v, size_t n, void *s) {
  struct op *o = new_op(kind);
  if (!o)
    return CUDA_ERROR_OUT_OF_MEMORY;
  o->dst = d;
  o->value = v;
  o->n = n;
  return enqueue(s, o);
}
EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *s) { return fill(OP_SET8, d, v, n, s); }
EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *s) { return fill(OP_SET16, d, v, n, s); }
EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) { return fill(OP_SET32, d, v, n, s); }

/* ------------------------------------------------------------ launches ---- */

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                               unsigned smem, void *s, void **params, void **extra) {
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (no_context("cuLaunchKernel"))
    return CUDA_ERROR_INVALID_CONTEXT;
  /* Launch-configuration errors are reported at the call, as by the driver. */
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || (uint64_t)bx * by * bz > 1024 || bz > 64 || gy > 65535 ||
      gz > 65535)
    return CUDA_ERROR_INVALID_VALUE;
  if (params) {
    /* Parameter sizes are only known to the driver: flush and run now. */
    pthread_mutex_lock(&lock);
    struct stream *st = find_stream(s);
    if (st)
      flush(st, st->last_seq);
    pthread_mutex_unlock(&lock);
    return NEXT(CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
                             void **),
                "cuLaunchKernel")(f, gx, gy, gz, bx, by, bz, smem, NULL, params, extra);
  }
  struct op *o = new_op(OP_LAUNCH);
  if (!o)
    return CUDA_ERROR_OUT_OF_MEMORY;
  o->func = f;
  unsigned dims[7] = {gx, gy, gz, bx, by, bz, smem};
  memcpy(o->dims, dims, sizeof dims);
  if (extra) { /* {CU_LAUNCH_PARAM_BUFFER_POINTER=1, p, ..._SIZE=2, &n, END=0}: copy the buffer now */
    const void *buf = NULL;
    size_t bytes = 0;
    for (int i = 0; extra[i]; i += 2) {
      if ((uintptr_t)extra[i] == 1)
        buf = extra[i + 1];
      else if ((uintptr_t)extra[i] == 2)
        bytes = *(size_t *)extra[i + 1];
    }
    o->params = malloc(bytes ? bytes : 1);
    if (!o->params) {
      free(o);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (buf && bytes)
      memcpy(o->params, buf, bytes);
    o->param_bytes = bytes;
  }
  return enqueue(s, o);
}

/* ------------------------------------------------------------ streams ----- */

EXPORT CUresult cuStreamCreate(void **out, unsigned flags) {
  if (no_context("cuStreamCreate"))
    return CUDA_ERROR_INVALID_CONTEXT;
  struct stream *s = calloc(1, sizeof *s);
  if (!s)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  s->next_live = live_streams;
  live_streams = s;
  stats.streams++;
  pthread_mutex_unlock(&lock);
  *out = s;
  TRACE("cuStreamCreate -> %p", (void *)s);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamCreateWithPriority(void **out, unsigned flags, int prio) { return cuStreamCreate(out, flags); }

EXPORT CUresult cuStreamDestroy_v2(void *sh) {
  pthread_mutex_lock(&lock);
  struct stream *s = find_stream(sh);
  if (!s) {
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  flush(s, s->last_seq);
  for (struct stream **p = &live_streams; *p; p = &(*p)->next_live)
    if (*p == s) {
      *p = s->next_live;
      break;
    }
  stats.streams--;
  pthread_mutex_unlock(&lock);
  TRACE("cuStreamDestroy(%p)", sh);
  free(s);
  return CUDA_SUCCESS;
}
EXPORT CUresult cuStreamDestroy(void *sh) { return cuStreamDestroy_v2(sh); }

/* Runs all of s; returns (and clears) its first failure. Lock held. */
static CUresult complete(struct stream *s) {
  flush(s, s->last_seq);
  CUresult r = s->error;
  s->error = CUDA_SUCCESS;
  s->failed = 0;
  return r;
}

EXPORT CUresult cuStreamSynchronize(void *sh) {
  pthread_mutex_lock(&lock);
  struct stream *s = find_stream(sh);
  CUresult r = s ? complete(s) : CUDA_SUCCESS;
  pthread_mutex_unlock(&lock);
  TRACE("cuStreamSynchronize(%p) -> %d", sh, r);
  return r;
}

EXPORT CUresult cuStreamQuery(void *sh) {
  pthread_mutex_lock(&lock);
  struct stream *s = find_stream(sh);
  CUresult r = CUDA_SUCCESS;
  if (s) {
    const char *e = getenv("MOCK_ASYNC_NOT_READY");
    int n = e && *e ? atoi(e) : 0;
    if (s->head && s->queries < n) {
      s->queries++;
      stats.not_ready++;
      r = CUDA_ERROR_NOT_READY;
    } else {
      r = complete(s);
    }
  }
  pthread_mutex_unlock(&lock);
  TRACE("cuStreamQuery(%p) -> %d", sh, r);
  return r;
}

EXPORT CUresult cuCtxSynchronize(void) {
  pthread_mutex_lock(&lock);
  CUresult r = CUDA_SUCCESS;
  for (struct stream *p = live_streams; p; p = p->next_live) {
    CUresult e = complete(p);
    if (r == CUDA_SUCCESS)
      r = e;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* ------------------------------------------------------------ events ------ */

EXPORT CUresult cuEventCreate(void **out, unsigned flags) {
  if (no_context("cuEventCreate"))
    return CUDA_ERROR_INVALID_CONTEXT;
  struct event *e = calloc(1, sizeof *e);
  if (!e)
    return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&lock);
  e->next_live = live_events;
  live_events = e;
  stats.events++;
  pthread_mutex_unlock(&lock);
  *out = e;
  return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(void *eh) {
  pthread_mutex_lock(&lock);
  struct event *e = find_event(eh);
  if (e) {
    for (struct event **p = &live_events; *p; p = &(*p)->next_live)
      if (*p == e) {
        *p = e->next_live;
        break;
      }
    stats.events--;
  }
  pthread_mutex_unlock(&lock);
  free(e);
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
EXPORT CUresult cuEventDestroy(void *eh) { return cuEventDestroy_v2(eh); }

EXPORT CUresult cuEventRecord(void *eh, void *sh) {
  pthread_mutex_lock(&lock);
  struct event *e = find_event(eh);
  struct stream *s = find_stream(sh);
  CUresult r = CUDA_SUCCESS;
  if (!e) {
    r = CUDA_ERROR_INVALID_HANDLE;
  } else if (s) {
    e->stream = s;
    e->seq = s->last_seq;
  } else {
    flush_all(); /* the NULL stream: everything before it */
    e->stream = NULL;
  }
  if (e) /* reached at once on the NULL stream or behind nothing pending */
    e->ns = (!s || s->done_seq >= e->seq) ? now_ns() : 0;
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuStreamWaitEvent(void *sh, void *eh, unsigned flags) {
  pthread_mutex_lock(&lock);
  struct event *e = find_event(eh);
  int ok = e != NULL;
  struct stream *from = e ? e->stream : NULL;
  uint64_t seq = e ? e->seq : 0;
  pthread_mutex_unlock(&lock);
  if (!ok)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!from)
    return CUDA_SUCCESS; /* never recorded: nothing to wait for */
  struct op *o = new_op(OP_WAIT);
  if (!o)
    return CUDA_ERROR_OUT_OF_MEMORY;
  o->wait_stream = from;
  o->wait_seq = seq;
  return enqueue(sh, o);
}

EXPORT CUresult cuEventSynchronize(void *eh) {
  pthread_mutex_lock(&lock);
  struct event *e = find_event(eh);
  if (e && e->stream && find_stream(e->stream))
    flush(e->stream, e->seq);
  if (e && !e->ns)
    e->ns = now_ns(); /* reached now (the stand-in's approximation for stream events) */
  pthread_mutex_unlock(&lock);
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Milliseconds between two reached events (CUDA_ERROR_NOT_READY before). */
EXPORT CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  pthread_mutex_lock(&lock);
  struct event *a = find_event(start), *b = find_event(end);
  CUresult r = (!a || !b || !ms) ? CUDA_ERROR_INVALID_HANDLE : (!a->ns || !b->ns) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS)
    *ms = (float)((double)((int64_t)(b->ns - a->ns)) / 1e6);
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult cuEventQuery(void *eh) {
  pthread_mutex_lock(&lock);
  struct event *e = find_event(eh);
  CUresult r = !e ? CUDA_ERROR_INVALID_HANDLE
               : (e->stream && find_stream(e->stream) && e->stream->done_seq < e->seq) ? CUDA_ERROR_NOT_READY
                                                                                       : CUDA_SUCCESS;
  pthread_mutex_unlock(&lock);
  return r;
}

/* ------------------------------------------------------------ the rest ---- */

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  CUresult r = NEXT(CUresult (*)(CUfunction *, CUmodule, const char *), "cuModuleGetFunction")(f, m, name);
  if (r == CUDA_SUCCESS) {
    pthread_mutex_lock(&lock);
    if (strcmp(func_name(*f), name) != 0) {
      struct fname *n = calloc(1, sizeof *n);
      if (n) {
        n->f = *f;
        snprintf(n->name, sizeof n->name, "%s", name);
        n->next = fnames;
        fnames = n;
      }
    }
    pthread_mutex_unlock(&lock);
  }
  return r;
}

EXPORT CUresult cuModuleUnload(CUmodule m) {
  pthread_mutex_lock(&lock);
  stats.unloads++;
  pthread_mutex_unlock(&lock);
  return NEXT(CUresult (*)(CUmodule), "cuModuleUnload")(m);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
  pthread_mutex_lock(&lock);
  if (in_use(p))
    warn("cuMemFree of", p);
  pthread_mutex_unlock(&lock);
  return NEXT(CUresult (*)(CUdeviceptr), "cuMemFree_v2")(p);
}
EXPORT CUresult cuMemFree(CUdeviceptr p) { return cuMemFree_v2(p); }
EXPORT CUresult cuMemFreeHost(void *p) {
  pthread_mutex_lock(&lock);
  if (in_use((unsigned long long)(uintptr_t)p))
    warn("cuMemFreeHost of", (unsigned long long)(uintptr_t)p);
  pthread_mutex_unlock(&lock);
  return NEXT(CUresult (*)(void *), "cuMemFreeHost")(p);
}

EXPORT CUresult cuGetErrorString(CUresult e, const char **s) {
  switch (e) {
  case CUDA_ERROR_NOT_READY:
    *s = "device not ready";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_CONTEXT:
    *s = "invalid device context";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_FAILED:
    *s = "unspecified launch failure";
    return CUDA_SUCCESS;
  default:
    return NEXT(CUresult (*)(CUresult, const char **), "cuGetErrorString")(e, s);
  }
}

EXPORT void mock_async_get_stats(struct mock_async_stats *out) {
  pthread_mutex_lock(&lock);
  *out = stats;
  pthread_mutex_unlock(&lock);
}

/* The file that dlsym(RTLD_NEXT, name) finds from here (NULL: none). */
EXPORT const char *mock_async_origin(const char *name) {
  Dl_info info;
  void *p = dlsym(RTLD_NEXT, name);
  if (!p || !dladdr(p, &info))
    return NULL;
  return info.dli_fname;
}
