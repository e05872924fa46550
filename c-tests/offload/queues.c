// ol* queues are asynchronous and in order on the CPU devices: every
// operation runs on the queue's own thread while the enqueuing call returns.
//   - a host function that blocks until the main thread releases it (after
//     olLaunchHostFunction returned) neither deadlocks nor lets later work of
//     its queue run early; the queue and its events report it pending;
//   - olWaitEvents orders one queue after another's event;
//   - a chain of self-enqueuing host functions (argv[2] links, default 10^6)
//     completes without recursion;
//   - a host function that waits for its own queue gets an error, not a hang;
//   - a destroyed queue's pending work and events stay valid;
//   - 8 threads, each with its own queue, copy, launch and call back at once;
//   - olMemFree and olDestroyProgram wait for queued device work, not for a
//     host function blocked until the caller releases it afterwards;
//   - olShutDown with work in flight finishes it.
// Prints "ok N checks" on success; any failure prints FAIL and exits 1.
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ol_checks.h"


static ol_device_handle_t cpu, host;
// The first CPU device, of the platform named by OL_TEST_PLATFORM when it is
// set (c-tests/mpi runs this on a remote device with OL_TEST_PLATFORM=remote).
static bool pick(ol_device_handle_t d, void *u) {
  (void)u;
  ol_device_type_t t;
  olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t);
  const char *want = getenv("OL_TEST_PLATFORM");
  if (t == OL_DEVICE_TYPE_CPU && !cpu && (!want || on_platform(d, want))) cpu = d;
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  return true;
}

static bool queue_empty(ol_queue_handle_t q) {
  bool e = false;
  OK(olGetQueueInfo(q, OL_QUEUE_INFO_EMPTY, sizeof e, &e));
  return e;
}

static bool event_done(ol_event_handle_t ev) {
  bool c = false;
  OK(olGetEventInfo(ev, OL_EVENT_INFO_IS_COMPLETE, sizeof c, &c));
  return c;
}

// ---- a host function that waits for the main thread ----------------------
static atomic_int released, entered, order_pos;
static int order[8];
static void note(int what) { order[atomic_fetch_add(&order_pos, 1)] = what; }
static void blocker(void *u) {
  (void)u;
  atomic_store(&entered, 1);
  while (!atomic_load(&released)) usleep(100);
  note(1);
}
static void after(void *u) { note((int)(intptr_t)u); }

static void *release_later(void *u) {
  (void)u;
  usleep(50000);
  atomic_store(&released, 1);
  return NULL;
}

// ---- a chain of host functions, each enqueuing the next -------------------
static ol_queue_handle_t chain_q;
static long chain_left;
static atomic_long chain_done;
static void link_fn(void *u) {
  (void)u;
  atomic_fetch_add(&chain_done, 1);
  if (--chain_left > 0 && olLaunchHostFunction(chain_q, link_fn, NULL)) abort();
}

// ---- a host function that waits for its own queue --------------------------
static ol_queue_handle_t self_q;
static ol_result_t self_sync;
static void sync_self(void *u) { (void)u; self_sync = olSyncQueue(self_q); }

// ---- threads ---------------------------------------------------------------
static ol_symbol_handle_t vadd;
static atomic_int called[8];
static void mark(void *u) { atomic_fetch_add(&called[(intptr_t)u], 1); }
static void *worker(void *arg) {
  intptr_t id = (intptr_t)arg;
  enum { N = 256 };
  ol_queue_handle_t q;
  OK(olCreateQueue(cpu, &q));
  int64_t a[N], b[N], out[N];
  for (int i = 0; i < N; ++i) { a[i] = i; b[i] = id * 1000; }
  int64_t *da, *db, *dout;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof a, (void **)&da));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof b, (void **)&db));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof out, (void **)&dout));
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  for (int round = 0; round < 50; ++round) {
    OK(olMemcpy(q, da, cpu, a, host, sizeof a));
    OK(olMemcpy(q, db, cpu, b, host, sizeof b));
    struct { int64_t *out; const int64_t *a, *b; int64_t n; } args = {dout, da, db, N};
    OK(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &ls));
    OK(olMemcpy(q, out, host, dout, cpu, sizeof out));
    OK(olLaunchHostFunction(q, mark, (void *)id));
    OK(olSyncQueue(q));
    for (int i = 0; i < N; ++i) if (out[i] != i + id * 1000) FAIL("thread %d round %d out[%d] = %lld", (int)id, round, i, (long long)out[i]);
    b[0] = id * 1000; // the host arrays stay as copied
  }
  OK(olMemFree(da)); OK(olMemFree(db)); OK(olMemFree(dout));
  OK(olDestroyQueue(q));
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  long links = argc > 2 ? atol(argv[2]) : 1000000;
  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  if (!cpu || !host) FAIL("no CPU device or no host device");
  size_t size;
  void *img = slurp(argv[1], &size);
  ol_program_handle_t prog;
  OK(olCreateProgram(cpu, img, size, &prog));
  OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));

  // 1. A blocked host function: the call returned, later work waits for it.
  ol_queue_handle_t q;
  OK(olCreateQueue(cpu, &q));
  int64_t src = 42, dst = 0, *dev;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 8, (void **)&dev));
  OK(olLaunchHostFunction(q, blocker, NULL));
  ol_event_handle_t ev_blocked;
  OK(olCreateEvent(q, &ev_blocked));
  OK(olMemcpy(q, dev, cpu, &src, host, 8));
  OK(olMemcpy(q, &dst, host, dev, cpu, 8));
  OK(olLaunchHostFunction(q, after, (void *)2));
  ol_event_handle_t ev_end;
  OK(olCreateEvent(q, &ev_end));
  while (!atomic_load(&entered)) usleep(100);
  usleep(20000);
  TRUE(dst == 0);                        // the copies behind the host function did not run
  TRUE(atomic_load(&order_pos) == 0);
  TRUE(!queue_empty(q));
  TRUE(!event_done(ev_blocked));
  TRUE(!event_done(ev_end));
  atomic_store(&released, 1);
  OK(olSyncEvent(ev_end));
  TRUE(event_done(ev_blocked) && event_done(ev_end));
  TRUE(queue_empty(q));
  TRUE(dst == 42);
  TRUE(atomic_load(&order_pos) == 2 && order[0] == 1 && order[1] == 2);
  OK(olDestroyEvent(ev_blocked)); OK(olDestroyEvent(ev_end));

  // 2. olWaitEvents: q2's work runs after q's blocked host function.
  atomic_store(&released, 0); atomic_store(&entered, 0); atomic_store(&order_pos, 0);
  ol_queue_handle_t q2;
  OK(olCreateQueue(cpu, &q2));
  OK(olLaunchHostFunction(q, blocker, NULL));
  ol_event_handle_t ev_q;
  OK(olCreateEvent(q, &ev_q));
  OK(olWaitEvents(q2, &ev_q, 1));
  OK(olLaunchHostFunction(q2, after, (void *)3));
  while (!atomic_load(&entered)) usleep(100);
  usleep(20000);
  TRUE(atomic_load(&order_pos) == 0);
  TRUE(!queue_empty(q2));
  atomic_store(&released, 1);
  OK(olSyncQueue(q2));
  TRUE(atomic_load(&order_pos) == 2 && order[0] == 1 && order[1] == 3);
  OK(olDestroyEvent(ev_q));

  // 3. A chain of self-enqueuing host functions.
  OK(olCreateQueue(cpu, &chain_q));
  chain_left = links;
  OK(olLaunchHostFunction(chain_q, link_fn, NULL));
  while (atomic_load(&chain_done) < links) usleep(1000);
  OK(olSyncQueue(chain_q));
  TRUE(atomic_load(&chain_done) == links);
  OK(olDestroyQueue(chain_q));

  // 4. A host function that waits for its own queue: an error, no hang.
  OK(olCreateQueue(cpu, &self_q));
  OK(olLaunchHostFunction(self_q, sync_self, NULL));
  OK(olSyncQueue(self_q));
  TRUE(self_sync != NULL && self_sync->Code == OL_ERRC_INVALID_ARGUMENT);
  OK(olDestroyQueue(self_q));

  // 5. Destroying a queue with work pending keeps the work and its events.
  atomic_store(&released, 0); atomic_store(&entered, 0); atomic_store(&order_pos, 0);
  ol_queue_handle_t q3;
  OK(olCreateQueue(cpu, &q3));
  OK(olLaunchHostFunction(q3, blocker, NULL));
  OK(olLaunchHostFunction(q3, after, (void *)4));
  ol_event_handle_t ev3;
  OK(olCreateEvent(q3, &ev3));
  OK(olDestroyQueue(q3));
  ERR(olSyncQueue(q3), OL_ERRC_INVALID_QUEUE);
  TRUE(!event_done(ev3));
  atomic_store(&released, 1);
  OK(olSyncEvent(ev3));
  TRUE(atomic_load(&order_pos) == 2 && order[1] == 4);
  OK(olDestroyEvent(ev3));

  // 6. Eight threads with their own queues.
  pthread_t t[8];
  for (intptr_t i = 0; i < 8; ++i) pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < 8; ++i) pthread_join(t[i], NULL);
  for (int i = 0; i < 8; ++i) TRUE(atomic_load(&called[i]) == 50);

  // 7. Freeing memory and destroying a program wait for queued copies and
  // launches, not for host functions queued after them: a host function
  // blocked until this thread releases it, after the free and the destroy,
  // does not deadlock them.
  atomic_store(&released, 0); atomic_store(&entered, 0); atomic_store(&order_pos, 0);
  ol_program_handle_t prog2;
  OK(olCreateProgram(cpu, img, size, &prog2));
  int64_t *dev2;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, 8, (void **)&dev2));
  OK(olMemcpy(q, dev2, cpu, &src, host, 8));
  OK(olLaunchHostFunction(q, blocker, NULL));
  while (!atomic_load(&entered)) usleep(100);
  OK(olMemFree(dev2));
  OK(olDestroyProgram(prog2));
  TRUE(atomic_load(&order_pos) == 0);
  atomic_store(&released, 1);
  OK(olSyncQueue(q));
  TRUE(atomic_load(&order_pos) == 1);

  // 8. olShutDown with work in flight finishes it.
  atomic_store(&released, 0); atomic_store(&entered, 0); atomic_store(&order_pos, 0);
  OK(olLaunchHostFunction(q, blocker, NULL));
  OK(olLaunchHostFunction(q, after, (void *)5));
  while (!atomic_load(&entered)) usleep(100);
  pthread_t releaser;
  pthread_create(&releaser, NULL, release_later, NULL);
  OK(olMemFree(dev));
  OK(olDestroyProgram(prog));
  OK(olShutDown()); // returns once the blocked host function and the one after it ran
  TRUE(atomic_load(&order_pos) == 2 && order[1] == 5);
  pthread_join(releaser, NULL);
  free(img);
  printf("ok %d checks\n", checks);
  return 0;
}
