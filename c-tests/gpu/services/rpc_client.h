/*
 * rpc_client.h - a TEST-ONLY device-side client of LLVM 22.1's RPC protocol
 * (libc/shared/rpc.h), written from its description for the services tests
 * (docs/rpc.md). It is compiled, like the gpu-images kernels, for nvptx64
 * (sm_90), amdgcn (gfx90a) and the CPU emulation that mock-cuda / mock-hsa
 * run (offload_kernel.h's OFFLOAD_EMULATE_GRID).
 *
 * The image defines `__llvm_rpc_client` (LLVM's rpc::Client: port count,
 * four pointers into the host buffer, a lock bitfield); the runtime fills it
 * in when it loads the image. Each calling thread acts as a one-lane warp:
 * it takes a port of its own (lock bit, then both mailbox bits equal), so
 * the server sees a lane mask with one bit (its lane) and serves every
 * thread independently. RPC_LANES must be the device's warp size (32 on
 * CUDA, 64 on AMDGPU): the server lays the packets out per port by it.
 *
 * Limits (test code): no warp-cooperative ports (a real GPU libc batches a
 * warp's lanes in one port), no convergence handling on AMDGPU (threads of
 * one wave spinning on the same port lock could livelock there), no
 * server-to-client bulk transfers (recv_n).
 */
#ifndef RPC_CLIENT_H
#define RPC_CLIENT_H
#include "offload_kernel.h"

#ifndef RPC_LANES
#if defined(__NVPTX__)
#define RPC_LANES 32
#elif defined(__AMDGPU__) || defined(__AMDGCN__)
#define RPC_LANES 64
#else
#error "define RPC_LANES (the device's warp size) for the emulation build"
#endif
#endif

#define RPC_OP(n) ((u32)'c' << 24 | (u32)(n))
#define RPC_EXIT RPC_OP(1)
#define RPC_WRITE_TO_STDOUT RPC_OP(2)
#define RPC_WRITE_TO_STDERR RPC_OP(3)
#define RPC_WRITE_TO_STDOUT_NEWLINE RPC_OP(5)
#define RPC_MALLOC RPC_OP(10)
#define RPC_FREE RPC_OP(11)
#define RPC_ABORT RPC_OP(13)
#define RPC_PRINTF_TO_STDOUT RPC_OP(21)
#define RPC_PRINTF_TO_STDERR RPC_OP(22)
#define RPC_PRINTF_TO_STDOUT_PACKED RPC_OP(24)
#define RPC_PRINTF_TO_STDERR_PACKED RPC_OP(25)

typedef struct {
  u64 mask;
  u32 opcode;
} rpc_header_t;
typedef struct {
  u64 data[8];
} rpc_buffer_t;
typedef struct {
  u32 port_count;
  u32 *inbox;
  u32 *outbox;
  rpc_header_t *header;
  rpc_buffer_t *packet;
  u32 lock[128];
} rpc_client_t;

DEVICE_GLOBAL rpc_client_t __llvm_rpc_client = {0, 0, 0, 0, 0, {0}};

#if __has_builtin(__scoped_atomic_load_n)
#define RPC_LOAD(p) __scoped_atomic_load_n((p), __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM)
#define RPC_STORE(p, v) __scoped_atomic_store_n((p), (v), __ATOMIC_RELAXED, __MEMORY_SCOPE_SYSTEM)
#define RPC_OR(p, v) __scoped_atomic_fetch_or((p), (v), __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#define RPC_AND(p, v) __scoped_atomic_fetch_and((p), (v), __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE)
#else
#define RPC_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define RPC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define RPC_OR(p, v) __atomic_fetch_or((p), (v), __ATOMIC_RELAXED)
#define RPC_AND(p, v) __atomic_fetch_and((p), (v), __ATOMIC_RELAXED)
#endif
#define RPC_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define RPC_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)

DEVFN u32 rpc_lane_id(void) {
#if defined(__NVPTX__)
  return __nvvm_read_ptx_sreg_laneid();
#elif defined(__AMDGPU__) || defined(__AMDGCN__)
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
#else
  return 0; /* the emulation runs one thread at a time: a one-lane warp */
#endif
}

typedef struct {
  u32 index, out, lane;
  int owns, receive;
} rpc_port_t;

DEVFN rpc_buffer_t *rpc_slot(rpc_port_t *p) {
  return &__llvm_rpc_client.packet[(u64)p->index * RPC_LANES + p->lane];
}

/* Client::open: the first port whose lock we take while its bits are equal. */
DEVFN rpc_port_t rpc_open(u32 opcode) {
  rpc_client_t *c = &__llvm_rpc_client;
  rpc_port_t p;
  p.lane = rpc_lane_id();
  for (u32 i = 0;; i = i + 1 < c->port_count ? i + 1 : 0) {
    u32 bit = 1u << (i % 32);
    if (RPC_OR(&c->lock[i / 32], bit) & bit)
      continue;
    RPC_ACQUIRE();
    u32 in = RPC_LOAD(&c->inbox[i]), out = RPC_LOAD(&c->outbox[i]);
    if (in != out) {
      RPC_AND(&c->lock[i / 32], ~bit);
      continue;
    }
    c->header[i].opcode = opcode;
    c->header[i].mask = (u64)1 << p.lane;
    p.index = i;
    p.out = out;
    p.owns = 1;
    p.receive = 0;
    return p;
  }
}

DEVFN void rpc_wait(rpc_port_t *p) {
  u32 in = p->owns ? p->out : RPC_LOAD(&__llvm_rpc_client.inbox[p->index]);
  while (in != p->out)
    in = RPC_LOAD(&__llvm_rpc_client.inbox[p->index]);
  RPC_ACQUIRE();
}

DEVFN void rpc_flip(rpc_port_t *p) {
  p->out = !p->out;
  RPC_RELEASE();
  RPC_STORE(&__llvm_rpc_client.outbox[p->index], p->out);
}

/* Port::send with the packet filled from `d` (8 words). */
DEVFN void rpc_send(rpc_port_t *p, const u64 *d) {
  rpc_wait(p);
  rpc_buffer_t *b = rpc_slot(p);
  for (int k = 0; k < 8; ++k)
    b->data[k] = d[k];
  rpc_flip(p);
  p->owns = 0;
  p->receive = 0;
}

/* Port::recv into `d` (8 words). */
DEVFN void rpc_recv(rpc_port_t *p, u64 *d) {
  if (p->receive) {
    rpc_flip(p);
    p->owns = 0;
  }
  rpc_wait(p);
  rpc_buffer_t *b = rpc_slot(p);
  for (int k = 0; k < 8; ++k)
    d[k] = b->data[k];
  p->receive = 1;
  p->owns = 1;
}

DEVFN void rpc_close(rpc_port_t *p) {
  RPC_RELEASE();
  RPC_AND(&__llvm_rpc_client.lock[p->index / 32], ~(1u << (p->index % 32)));
}

/* Port::send_n: the size and 56 bytes, then 64 bytes a packet. */
DEVFN void rpc_send_n(rpc_port_t *p, const void *src, u64 size) {
  const unsigned char *s = (const unsigned char *)src;
  u64 d[8];
  unsigned char *db = (unsigned char *)&d[1];
  d[0] = size;
  for (u64 k = 0; k < 56; ++k)
    db[k] = k < size ? s[k] : 0;
  rpc_send(p, d);
  for (u64 idx = 56; idx < size; idx += 64) {
    unsigned char *dc = (unsigned char *)d;
    for (u64 k = 0; k < 64; ++k)
      dc[k] = idx + k < size ? s[idx + k] : 0;
    rpc_send(p, d);
  }
}

DEVFN u64 rpc_strlen(const char *s) {
  u64 n = 0;
  while (s[n])
    ++n;
  return n;
}

/* fwrite/puts: WRITE_TO_STDOUT, _STDERR or _STDOUT_NEWLINE; bytes written. */
DEVFN u64 rpc_write(u32 opcode, const char *s, u64 len) {
  rpc_port_t p = rpc_open(opcode);
  rpc_send_n(&p, s, len);
  u64 d[8];
  rpc_recv(&p, d);
  rpc_close(&p);
  return d[0];
}

/* printf with the argument bytes laid out as the opcode says (natural
 * alignment, or packed for the _PACKED opcodes); the number printed. */
DEVFN int rpc_printf(u32 opcode, const char *fmt, const void *args, u64 args_size) {
  rpc_port_t p = rpc_open(opcode);
  rpc_send_n(&p, fmt, rpc_strlen(fmt) + 1);
  u64 d[8];
  rpc_recv(&p, d); /* the size the server's parser wants: we send ours */
  rpc_send_n(&p, args, args_size);
  for (;;) {
    rpc_recv(&p, d);
    const char *str = (const char *)(uptr)d[1];
    if (!str)
      break;
    rpc_send_n(&p, str, rpc_strlen(str) + 1);
  }
  rpc_close(&p);
  return (int)d[0];
}

/* A user opcode: one value there, one back (recv_and_send on the host). */
DEVFN u64 rpc_call(u32 opcode, u64 value) {
  rpc_port_t p = rpc_open(opcode);
  u64 d[8] = {value, 0, 0, 0, 0, 0, 0, 0};
  rpc_send(&p, d);
  rpc_recv(&p, d);
  rpc_close(&p);
  return d[0];
}

DEVFN void *rpc_malloc(u64 size) { return (void *)(uptr)rpc_call(RPC_MALLOC, size); }

DEVFN void rpc_free(void *ptr) {
  rpc_port_t p = rpc_open(RPC_FREE);
  u64 d[8] = {(u64)(uptr)ptr, 0, 0, 0, 0, 0, 0, 0};
  rpc_send(&p, d);
  rpc_close(&p);
}

/* exit/abort: a handshake, then the status; the host ends the process. */
DEVFN void rpc_exit(int status) {
  rpc_port_t p = rpc_open(RPC_EXIT);
  u64 d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  rpc_send(&p, d);
  rpc_recv(&p, d);
  d[0] = (u64)(u32)status;
  rpc_send(&p, d);
  for (;;) /* the host ends the process; an atomic load keeps the loop */
    (void)RPC_LOAD(&__llvm_rpc_client.port_count);
}

DEVFN void rpc_abort(void) {
  rpc_port_t p = rpc_open(RPC_ABORT);
  u64 d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  rpc_send(&p, d);
  rpc_recv(&p, d);
  rpc_send(&p, d);
  for (;;) /* the host ends the process; an atomic load keeps the loop */
    (void)RPC_LOAD(&__llvm_rpc_client.port_count);
}

#endif /* RPC_CLIENT_H */
