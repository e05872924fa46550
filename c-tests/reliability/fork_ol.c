// Fork safety of liboffload: four parent threads use the ol* API
// without pause on the CPU devices (olMemAlloc, olMemcpy both ways, a queue,
// an event, olLaunchKernel of vadd, olGetMemInfo, an error result, and every
// 8th iteration olCreateProgram/olGetSymbol/olDestroyProgram) while the main
// thread forks FORKS times (default 60). Each child uses ol* at once: memory,
// copies and a launch through the parent's program and through a program of
// its own, and checks the results. A child that inherited an ol* lock held
// by a vanished parent thread hangs; the parent waits for it with a deadline
// and reports "child N hung" instead of getting stuck. A child forked while
// the parent's threads kept the runtime's locks busy for longer than the
// runtime waits (2 s) is refused with a clear error by every ol* call.
// Prints "fork_ol: N children ok, R refused (...), 0 failed" and exits 0
// when every child worked or was refused.
//
// Usage: fork_ol KERNEL.so [FORKS]   (KERNEL.so: c-tests/offload/kernel.c)
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <offload/OffloadAPI.h>

#define N 256
#define OK(call)                                                                                   \
  do {                                                                                             \
    ol_result_t r_ = (call);                                                                       \
    if (r_) {                                                                                      \
      fprintf(stderr, "%s: line %d: %s -> %d %s\n", who, __LINE__, #call, r_->Code, r_->Details); \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static ol_device_handle_t cpus[8], host;
static int ncpu;
static void *image;
static size_t image_size;
static ol_symbol_handle_t shared_vadd[8]; // one program per CPU device, kept by the parent
static atomic_int stop;
static atomic_long parent_iters;

static bool pick(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  if (olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t)) return true;
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  if (t == OL_DEVICE_TYPE_CPU && ncpu < 8) cpus[ncpu++] = d;
  return true;
}

// vadd on device `dev` with kernel `k`: out = a + b, checked.
static int vadd_check(const char *who, ol_device_handle_t dev, ol_symbol_handle_t k, int seed) {
  int64_t a[N], b[N], out[N];
  for (int i = 0; i < N; i++) a[i] = i + seed, b[i] = 3 * i;
  int64_t *da, *db, *dout;
  OK(olMemAlloc(dev, OL_ALLOC_TYPE_DEVICE, sizeof a, (void **)&da));
  OK(olMemAlloc(dev, OL_ALLOC_TYPE_DEVICE, sizeof b, (void **)&db));
  OK(olMemAlloc(dev, OL_ALLOC_TYPE_DEVICE, sizeof out, (void **)&dout));
  ol_queue_handle_t q;
  OK(olCreateQueue(dev, &q));
  OK(olMemcpy(q, da, dev, a, host, sizeof a));
  OK(olMemcpy(q, db, dev, b, host, sizeof b));
  struct { int64_t *out, *a, *b; int64_t n; } args = {dout, da, db, N};
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  OK(olLaunchKernel(q, dev, k, &args, sizeof args, &ls));
  ol_event_handle_t ev;
  OK(olCreateEvent(q, &ev));
  OK(olSyncEvent(ev));
  OK(olDestroyEvent(ev));
  OK(olMemcpy(q, out, host, dout, dev, sizeof out));
  OK(olSyncQueue(q));
  size_t size = 0;
  OK(olGetMemInfo(dout + 5, OL_MEM_INFO_SIZE, sizeof size, &size));
  OK(olDestroyQueue(q));
  OK(olMemFree(da));
  OK(olMemFree(db));
  OK(olMemFree(dout));
  if (size != sizeof out) {
    fprintf(stderr, "%s: olGetMemInfo size %zu, want %zu\n", who, size, sizeof out);
    return 1;
  }
  for (int i = 0; i < N; i++)
    if (out[i] != a[i] + b[i]) {
      fprintf(stderr, "%s: out[%d] = %lld, want %lld\n", who, i, (long long)out[i], (long long)(a[i] + b[i]));
      return 1;
    }
  return 0;
}

// A program of its own on `dev`: created, vadd looked up and run, destroyed.
static int own_program(const char *who, ol_device_handle_t dev, int seed) {
  ol_program_handle_t p;
  ol_symbol_handle_t k, g;
  OK(olCreateProgram(dev, image, image_size, &p));
  OK(olGetSymbol(p, "vadd", OL_SYMBOL_KIND_KERNEL, &k));
  OK(olGetSymbol(p, "counter", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &g));
  int rc = vadd_check(who, dev, k, seed);
  OK(olDestroyProgram(p));
  return rc;
}

static void *worker(void *arg) {
  int id = (int)(long)arg;
  char who[32];
  snprintf(who, sizeof who, "parent thread %d", id);
  ol_device_handle_t dev = cpus[id % ncpu];
  long it = 0;
  while (!atomic_load(&stop)) {
    if (vadd_check(who, dev, shared_vadd[id % ncpu], id + (int)it)) exit(3);
    // An error result (interned under its own lock).
    if (!olMemFree((void *)0x10)) {
      fprintf(stderr, "%s: olMemFree(0x10) succeeded\n", who);
      exit(3);
    }
    if (it % 8 == 0 && own_program(who, dev, (int)it)) exit(3);
    it++;
  }
  atomic_fetch_add(&parent_iters, it);
  return NULL;
}

static int child_main(void) {
  const char *who = "child";
  // A child forked while the parent's threads kept the runtime's locks busy
  // (longer than the runtime waits for them) gets a clear error from every
  // call instead of a lock no thread here will release: exit 3.
  ol_device_type_t type;
  ol_result_t busy = olGetDeviceInfo(cpus[0], OL_DEVICE_INFO_TYPE, sizeof type, &type);
  if (busy && busy->Details && strstr(busy->Details, "forked while other threads")) return 3;
  for (int d = 0; d < ncpu; d++) {
    for (int k = 0; k < 3; k++)
      if (vadd_check(who, cpus[d], shared_vadd[d], 1000 * d + k)) return 2;
    if (own_program(who, cpus[d], 77)) return 2;
  }
  ol_result_t r = olMemFree((void *)0x10);
  if (!r || r->Code != OL_ERRC_INVALID_ARGUMENT) return 4;
  OK(olShutDown());
  return 0;
}

int main(int argc, char **argv) {
  const char *who = "main";
  if (argc < 2) {
    fprintf(stderr, "usage: fork_ol KERNEL.so [FORKS]\n");
    return 2;
  }
  int forks = argc > 2 ? atoi(argv[2]) : 60;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  fseek(f, 0, SEEK_END);
  image_size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  image = malloc(image_size);
  if (fread(image, 1, image_size, f) != image_size) return 2;
  fclose(f);
  OK(olInit());
  OK(olIterateDevices(pick, NULL));
  if (!ncpu || !host) {
    fprintf(stderr, "fork_ol: no CPU device\n");
    return 2;
  }
  for (int d = 0; d < ncpu; d++) {
    ol_program_handle_t p;
    OK(olCreateProgram(cpus[d], image, image_size, &p));
    OK(olGetSymbol(p, "vadd", OL_SYMBOL_KIND_KERNEL, &shared_vadd[d]));
    if (vadd_check(who, cpus[d], shared_vadd[d], 7)) return 1;
  }
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  int ok = 0, bad = 0, refused = 0;
  for (int n = 0; n < forks; n++) {
    struct timespec d = {0, 2000000};
    nanosleep(&d, NULL);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) _exit(child_main());
    int status = 0, waited_ms = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
      if (++waited_ms == 10000) { // 10 s: the child is stuck
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fprintf(stderr, "child %d hung\n", n);
        status = -1;
        break;
      }
    }
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      ok++;
    } else if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
      refused++;
    } else {
      if (status != -1)
        fprintf(stderr, "child %d failed: %s %d\n", n, WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      bad++;
    }
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  printf("fork_ol: %d children ok, %d refused (runtime busy at fork), %d failed (parent threads ran %ld iterations, %d CPU devices)\n",
         ok, refused, bad, atomic_load(&parent_iters), ncpu);
  return bad ? 1 : 0;
}
