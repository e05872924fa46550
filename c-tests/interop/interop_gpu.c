/* interop_gpu.c - interop objects on the CUDA and HSA stand-ins.
 * Linked with a gpu-images registration object (wrap.sm_90.o / wrap.gfx90a.o)
 * so that the GPU plugin has a device.
 *   interop_gpu table  : every property of a target and a targetsync object
 *                        (value class, return code); compared with LLVM 22.1
 *   interop_gpu order  : (CUDA) work the program queues on the targetsync
 *                        stream through the driver is complete after
 *                        `interop use` and after `interop destroy`; completion
 *                        callbacks run there. Needs LIBCUDA=<driver path>.
 *   interop_gpu order-hsa : (HSA, run with MOCK_HSA_DEFER=1) the targetsync
 *                        property is a real hsa_queue_t of the stand-in; AQL
 *                        packets the program publishes there (barrier-AND
 *                        packets held by a signal another thread releases
 *                        later, whose completion handler writes device
 *                        memory) are complete after `interop use` and after
 *                        `interop destroy`; `depend` is waited for; `nowait`
 *                        leaves the work queued; callbacks run. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s(const char *p) { return p ? p : "(null)"; }

static void table(omp_interop_t obj, const char *what) {
  printf("%s: %s\n", what, obj ? "object" : "none");
  if (!obj) return;
  for (int p = -1; p >= -9; p--) {
    int e1 = 99, e2 = 99, e3 = 99;
    long v = (long)omp_get_interop_int(obj, p, &e1);
    void *q = omp_get_interop_ptr(obj, p, &e2);
    const char *str = omp_get_interop_str(obj, p, &e3);
    printf("  property %d: int %ld rc %d | ptr %s rc %d | str %s rc %d\n", p, v, e1, q ? "set" : "NULL", e2, s(str), e3);
  }
  int e = 99;
  omp_get_interop_int(obj, 0, &e);
  printf("  property 0: rc %d\n", e);
  e = 99;
  omp_get_interop_int(obj, -10, &e);
  printf("  property -10: rc %d\n", e);
}

static int calls;
static void cb(omp_interop_t o, void *d) { (void)o; calls++; printf("callback %s\n", (const char *)d); }
extern int ompx_interop_add_completion_callback(omp_interop_t, void (*)(omp_interop_t, void *), void *);

/* The HSA side, declared here as the program would (hsa.h layout). */
typedef struct { uint64_t handle; } hsa_signal_t;
typedef struct {
  uint32_t type, features;
  void *base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size, reserved1;
  uint64_t id;
} hsa_queue_t;
typedef struct {
  uint16_t header, reserved0;
  uint32_t reserved1;
  hsa_signal_t dep_signal[5];
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_barrier_and_packet_t;
static struct {
  int (*signal_create)(int64_t, uint32_t, const void *, hsa_signal_t *);
  void (*signal_store)(hsa_signal_t, int64_t);
  int64_t (*signal_load)(hsa_signal_t);
  uint64_t (*add_write_index)(const hsa_queue_t *, uint64_t);
  uint64_t (*load_read_index)(const hsa_queue_t *);
  int (*async_handler)(hsa_signal_t, int, int64_t, bool (*)(int64_t, void *), void *);
} hsa;

/* Work for the interop queue: fill [d+off, d+off+n) with v once the packet completes. */
struct fill { unsigned char *d; size_t off, n; unsigned char v; };
static bool fill_now(int64_t value, void *arg) {
  (void)value;
  struct fill *f = arg;
  memset(f->d + f->off, f->v, f->n);
  return false;
}
struct release { hsa_signal_t gate; int ms; };
static void *release_later(void *arg) {
  struct release *r = arg;
  usleep(r->ms * 1000);
  hsa.signal_store(r->gate, 0);
  return NULL;
}
/* Publishes a barrier-AND packet waiting for `gate` whose completion runs `f`;
 * a thread opens the gate after `ms` milliseconds. */
static int queue_fill(hsa_queue_t *q, struct fill *f, struct release *r, pthread_t *t, int ms) {
  hsa_signal_t done;
  if (hsa.signal_create(1, 0, NULL, &r->gate) || hsa.signal_create(1, 0, NULL, &done)) return 1;
  if (hsa.async_handler(done, 0 /* EQ */, 0, fill_now, f)) return 1;
  uint64_t i = hsa.add_write_index(q, 1);
  while (i - hsa.load_read_index(q) >= q->size) ;
  hsa_barrier_and_packet_t *pk = (hsa_barrier_and_packet_t *)q->base_address + (i & (q->size - 1));
  memset((char *)pk + 4, 0, 60);
  pk->dep_signal[0] = r->gate;
  pk->completion_signal = done;
  uint32_t header = 3u | 1u << 8 | 2u << 9 | 2u << 11; /* barrier-AND, barrier bit, system fences */
  __atomic_store_n((uint32_t *)pk, header, __ATOMIC_RELEASE);
  hsa.signal_store(q->doorbell_signal, (int64_t)i);
  r->ms = ms;
  return pthread_create(t, NULL, release_later, r);
}

static int order_hsa(omp_interop_t tgt, omp_interop_t sync) {
  void *rt = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (rt) {
    *(void **)&hsa.signal_create = dlsym(rt, "hsa_signal_create");
    *(void **)&hsa.signal_store = dlsym(rt, "hsa_signal_store_screlease");
    *(void **)&hsa.signal_load = dlsym(rt, "hsa_signal_load_scacquire");
    *(void **)&hsa.add_write_index = dlsym(rt, "hsa_queue_add_write_index_relaxed");
    *(void **)&hsa.load_read_index = dlsym(rt, "hsa_queue_load_read_index_scacquire");
    *(void **)&hsa.async_handler = dlsym(rt, "hsa_amd_signal_async_handler");
  }
  int e = 0, fr = (int)omp_get_interop_int(sync, omp_ipr_fr_id, &e);
  hsa_queue_t *q = omp_get_interop_ptr(sync, omp_ipr_targetsync, &e);
  if (!hsa.async_handler || !q || e) { printf("FAIL no HSA runtime (%p) or no queue (%p, rc %d)\n", rt, (void *)q, e); return 1; }
  printf("targetsync: fr_id %d, %s, a queue of %u packets (%s)\n", fr, omp_get_interop_type_desc(sync, omp_ipr_targetsync),
         q->size, q->size && !(q->size & (q->size - 1)) && q->base_address && q->doorbell_signal.handle ? "valid" : "INVALID");
  void *dev = omp_get_interop_ptr(tgt, omp_ipr_device, &e);
  printf("target: device handle %s rc %d\n", dev ? "set" : "NULL", e);
  enum { N = 256 };
  unsigned char host[N];
  memset(host, 0, N);
  unsigned char *d = omp_target_alloc(N, 0);
  omp_target_memcpy(d, host, N, 0, 0, 0, omp_get_initial_device());
  printf("callback added: %d\n", ompx_interop_add_completion_callback(sync, cb, "after use"));
  struct fill f1 = {d, 0, N, 0x5a}, f2 = {d, 16, 32, 0x33}, f3 = {d, 100, 8, 0x77};
  struct release r1, r2, r3;
  pthread_t t1, t2, t3;
  if (queue_fill(q, &f1, &r1, &t1, 50)) { printf("FAIL queueing\n"); return 1; }
  /* depend: the task runs first. */
  volatile int flag = 0;
#pragma omp task depend(out : flag) shared(flag)
  { usleep(30000); flag = 1; }
#pragma omp interop use(sync) depend(in : flag)
  int flag_at_use = flag;
  omp_target_memcpy(host, d, N, 0, 0, omp_get_initial_device(), 0);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += host[i] != 0x5a;
  printf("after use: %d bytes not 0x5a, depend %s, %d callback(s)\n", bad, flag_at_use ? "done first" : "NOT WAITED", calls);
  /* nowait: returns with the work still queued. */
  if (queue_fill(q, &f2, &r2, &t2, 50)) { printf("FAIL queueing\n"); return 1; }
#pragma omp interop use(sync) nowait
  int pending_after_nowait = hsa.load_read_index(q) != hsa.add_write_index(q, 0);
  printf("after use nowait: work %s\n", pending_after_nowait ? "still queued" : "already done");
  ompx_interop_add_completion_callback(sync, cb, "after destroy");
  if (queue_fill(q, &f3, &r3, &t3, 80)) { printf("FAIL queueing\n"); return 1; }
#pragma omp interop destroy(sync)
  omp_target_memcpy(host, d, N, 0, 0, omp_get_initial_device(), 0);
  int bad2 = 0;
  for (int i = 0; i < N; i++) bad2 += host[i] != (i >= 16 && i < 48 ? 0x33 : i >= 100 && i < 108 ? 0x77 : 0x5a);
  printf("after destroy: %d bytes wrong, %d callback(s)\n", bad2, calls);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  pthread_join(t3, NULL);
#pragma omp interop destroy(tgt)
  omp_target_free(d, 0);
  int ok = !bad && !bad2 && flag_at_use && pending_after_nowait && calls == 2;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return !ok;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const char *mode = argc > 1 ? argv[1] : "table";
  printf("devices: %d\n", omp_get_num_devices());
  omp_interop_t tgt = omp_interop_none, sync = omp_interop_none;
#pragma omp interop init(target : tgt) device(0)
#pragma omp interop init(targetsync : sync) device(0)
  if (!strcmp(mode, "table")) {
    table(tgt, "target");
    table(sync, "targetsync");
    return 0;
  }
  if (!strcmp(mode, "order-hsa"))
    return order_hsa(tgt, sync);
  /* order */
  void *drv = dlopen(getenv("LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  typedef int (*memset_t)(unsigned long long, unsigned char, size_t, void *);
  memset_t set8 = drv ? (memset_t)dlsym(drv, "cuMemsetD8Async") : NULL;
  int e = 0;
  void *stream = omp_get_interop_ptr(sync, omp_ipr_targetsync, &e);
  if (!set8 || !stream || e) { printf("FAIL no driver (%p) or no stream (%p, rc %d)\n", (void *)set8, stream, e); return 1; }
  enum { N = 256 };
  unsigned char host[N];
  memset(host, 0, N);
  unsigned char *d = omp_target_alloc(N, 0);
  omp_target_memcpy(d, host, N, 0, 0, 0, omp_get_initial_device());
  int bad = 0;
  printf("callback added: %d\n", ompx_interop_add_completion_callback(sync, cb, "after use"));
  set8((unsigned long long)(size_t)d, 0x5a, N, stream);
#pragma omp interop use(sync)
  omp_target_memcpy(host, d, N, 0, 0, omp_get_initial_device(), 0);
  for (int i = 0; i < N; i++) bad += host[i] != 0x5a;
  printf("after use: %d bytes not 0x5a, %d callback(s)\n", bad, calls);
  ompx_interop_add_completion_callback(sync, cb, "after destroy");
  set8((unsigned long long)(size_t)d + 16, 0x33, 32, stream);
#pragma omp interop destroy(sync)
  omp_target_memcpy(host, d, N, 0, 0, omp_get_initial_device(), 0);
  int bad2 = 0;
  for (int i = 0; i < N; i++) bad2 += host[i] != (i >= 16 && i < 48 ? 0x33 : 0x5a);
  printf("after destroy: %d bytes wrong, %d callback(s)\n", bad2, calls);
#pragma omp interop destroy(tgt)
  omp_target_free(d, 0);
  int ok = !bad && !bad2 && calls == 2;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return !ok;
}
