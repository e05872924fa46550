/*
 * rpc_host.c - the host side of the services tests: loads an image with
 * liboffload (generation 23, for olPlatformRegisterRPCCallback) on the
 * first GPU device and runs one test kernel of rpc_kernels.cu.
 *
 *   rpc_host IMAGE MODE [TEAMS THREADS]
 *
 * MODE: hello | puts | stderr | heap | exit | abort | unknown | user |
 *       stall (a client that stops mid-call) |
 *       quiet (an image WITHOUT a client: gpu-images' kernels, saxpy).
 * Prints "host: ..." lines that services.sh checks, and the number of
 * RPC server threads (threads named omptarget-rpc) at the points that matter.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <offload/OffloadAPI.h>

#define OK(call)                                                                                   \
  do {                                                                                             \
    ol_result_t r_ = (call);                                                                       \
    if (r_) {                                                                                      \
      printf("host: FAIL line %d: %s -> %d %s\n", __LINE__, #call, r_->Code, r_->Details);         \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define USER_OPCODE 0x55535231u

static ol_device_handle_t gpu, host;
static bool pick(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t));
  if (t == OL_DEVICE_TYPE_GPU && !gpu)
    gpu = d;
  if (t == OL_DEVICE_TYPE_HOST)
    host = d;
  return true;
}

static void *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  if (!f) {
    printf("host: cannot open %s\n", p);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = malloc(*n);
  if (fread(b, 1, *n, f) != *n)
    exit(1);
  fclose(f);
  return b;
}

/* Threads of this process named omptarget-rpc. */
static int rpc_threads(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[300], comm[64] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f) {
      if (fgets(comm, sizeof comm, f) && !strncmp(comm, "omptarget-rpc", 13))
        n++;
      fclose(f);
    }
  }
  if (d)
    closedir(d);
  return n;
}

/* A server-side callback compiled against LLVM's rpc::Port<true> layout
 * (what a user of libc/shared/rpc.h would get inlined): serves USER_OPCODE
 * with recv_and_send, answering 2 * value + 1 for each lane. */
typedef struct {
  uint64_t mask;
  uint32_t opcode;
} hdr_t;
typedef struct {
  uint64_t data[8];
} buf_t;
typedef struct {
  uint32_t port_count;
  const uint32_t *inbox;
  uint32_t *outbox;
  hdr_t *header;
  buf_t *packet;
  uint32_t lock[128];
} process_t;
typedef struct {
  process_t *process;
  uint64_t lane_mask;
  uint32_t lane_size, index, out;
  bool receive, owns_buffer;
} port_t;
static unsigned user_calls;
static uint32_t user_cb(void *p, unsigned lanes) {
  port_t *port = (port_t *)p;
  if (port->process->header[port->index].opcode != USER_OPCODE)
    return 0x1001; /* RPC_UNHANDLED_OPCODE: the next handler's turn */
  if (lanes != port->lane_size)
    return 0x1000;
  /* recv: the server owns the packet right after opening the port. */
  buf_t *slot = &port->process->packet[(size_t)port->index * port->lane_size];
  for (unsigned l = 0; l < lanes && l < 64; ++l)
    if (port->lane_mask >> l & 1)
      slot[l].data[0] = slot[l].data[0] * 2 + 1;
  /* send: hand the packet back by flipping our outbox bit. */
  __atomic_thread_fence(__ATOMIC_RELEASE);
  port->out = !port->out;
  __atomic_store_n(&port->process->outbox[port->index], port->out, __ATOMIC_RELAXED);
  port->owns_buffer = false;
  port->receive = false;
  __atomic_fetch_add(&user_calls, 1, __ATOMIC_RELAXED);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: rpc_host IMAGE MODE [TEAMS THREADS]\n");
    return 2;
  }
  const char *mode = argv[2];
  unsigned teams = argc > 3 ? (unsigned)atoi(argv[3]) : 4, threads = argc > 4 ? (unsigned)atoi(argv[4]) : 8;
  setvbuf(stdout, NULL, _IOFBF, 1 << 16); /* as when piped: the device's lines must still come in order */
  OK(olInit(NULL));
  OK(olIterateDevices(pick, NULL));
  if (!gpu) {
    printf("host: no GPU device\n");
    return 3;
  }
  printf("host: rpc threads before load: %d\n", rpc_threads());
  if (!strcmp(mode, "user")) {
    ol_platform_handle_t plat;
    OK(olGetDeviceInfo(gpu, OL_DEVICE_INFO_PLATFORM, sizeof plat, &plat));
    OK(olPlatformRegisterRPCCallback(plat, user_cb));
  }
  size_t n;
  void *img = slurp(argv[1], &n);
  ol_program_handle_t prog;
  OK(olCreateProgram(gpu, img, n, &prog));
  /* A new thread names itself: give it a moment to show up (2 s at most). */
  int nt = rpc_threads();
  for (int i = 0; i < 2000 && nt == 0 && strcmp(mode, "quiet"); ++i) {
    usleep(1000);
    nt = rpc_threads();
  }
  printf("host: rpc threads after load: %d\n", nt);
  ol_queue_handle_t q;
  OK(olCreateQueue(gpu, &q));
  size_t items = (size_t)teams * threads;
  int64_t *dout;
  OK(olMemAlloc(gpu, OL_ALLOC_TYPE_DEVICE, items * 8, (void **)&dout));
  int64_t *out = calloc(items, 8);
  ol_kernel_launch_size_args_t ls = {1, {teams, 1, 1}, {threads, 1, 1}, 0};
  ol_symbol_handle_t k;
  const char *name = !strcmp(mode, "hello")    ? "rpc_hello"
                     : !strcmp(mode, "puts")   ? "rpc_puts"
                     : !strcmp(mode, "stderr") ? "rpc_stderr"
                     : !strcmp(mode, "heap")   ? "rpc_heap"
                     : !strcmp(mode, "exit")   ? "rpc_exit_kernel"
                     : !strcmp(mode, "abort")  ? "rpc_abort_kernel"
                     : !strcmp(mode, "unknown") ? "rpc_unknown"
                     : !strcmp(mode, "user")   ? "rpc_user"
                     : !strcmp(mode, "stall")  ? "rpc_stall"
                     : !strcmp(mode, "quiet")  ? "saxpy"
                                               : NULL;
  if (!name) {
    printf("host: unknown mode %s\n", mode);
    return 2;
  }
  OK(olGetSymbol(prog, name, OL_SYMBOL_KIND_KERNEL, &k));
  fflush(stdout);
  if (!strcmp(mode, "hello") || !strcmp(mode, "puts") || !strcmp(mode, "stderr") || !strcmp(mode, "exit")) {
    struct { void *dyn; int64_t v; } a = {NULL, !strcmp(mode, "exit") ? 42 : 7};
    OK(olLaunchKernel(q, gpu, k, &a, sizeof a, &ls));
  } else if (!strcmp(mode, "abort")) {
    struct { void *dyn; } a = {NULL};
    OK(olLaunchKernel(q, gpu, k, &a, sizeof a, &ls));
  } else if (!strcmp(mode, "heap")) {
    struct { void *dyn; int64_t *out; int64_t bytes; } a = {NULL, dout, 100};
    OK(olLaunchKernel(q, gpu, k, &a, sizeof a, &ls));
  } else if (!strcmp(mode, "quiet")) {
    /* gpu-images' saxpy(y, x, a, n) on n = 0 elements: no data needed. */
    struct { void *dyn; void *y, *x; uint64_t a; int64_t n; } a = {NULL, dout, dout, 0, 0};
    OK(olLaunchKernel(q, gpu, k, &a, sizeof a, &ls));
  } else {
    struct { void *dyn; int64_t *out; } a = {NULL, dout};
    OK(olLaunchKernel(q, gpu, k, &a, sizeof a, &ls));
  }
  OK(olSyncQueue(q));
  if (!strcmp(mode, "stall"))
    usleep(1500 * 1000); /* let the server find the half-made call and time out on it (1 s) */
  OK(olMemcpy(q, out, host, dout, gpu, items * 8));
  OK(olSyncQueue(q));
  fflush(stdout);
  if (!strcmp(mode, "heap")) {
    size_t good = 0;
    for (size_t i = 0; i < items; ++i)
      good += out[i] == 1;
    printf("host: heap round trips ok: %zu of %zu\n", good, items);
  } else if (!strcmp(mode, "unknown")) {
    printf("host: unknown opcode call returned %lld\n", (long long)out[0]);
  } else if (!strcmp(mode, "user")) {
    size_t good = 0;
    for (size_t i = 0; i < items; ++i)
      good += out[i] == (int64_t)(2 * i + 1);
    printf("host: user opcode answers ok: %zu of %zu (callback calls %u)\n", good, items, user_calls);
  }
  printf("host: rpc threads after the kernel: %d\n", rpc_threads());
  OK(olDestroyQueue(q));
  OK(olMemFree(dout));
  OK(olDestroyProgram(prog));
  /* The server thread was joined; the kernel may list its task a moment
   * longer (the join returns when it has exited, before it is released). */
  nt = rpc_threads();
  for (int i = 0; i < 1000 && nt != 0; ++i) {
    usleep(1000);
    nt = rpc_threads();
  }
  printf("host: rpc threads after unload: %d\n", nt);
  OK(olShutDown());
  printf("host: done\n");
  return 0;
}
