/*
 * rpc_kernels.cu - the services tests' device code: kernels that call the
 * host through rpc_client.h. One source for sm_90 (cubin), gfx90a (code
 * object) and the CPU emulation of mock-cuda / mock-hsa (see services.sh).
 * Every kernel takes `void *dyn_ptr` first and 8-byte parameters after it.
 */
#include "rpc_client.h"

#define USER_OPCODE 0x55535231u    /* 'USR1': served by the test's callback */
#define UNKNOWN_OPCODE 0x7a7a0001u /* served by nobody */

DEVFN u64 put_dec(char *d, u64 n, u64 v) {
  char t[24];
  u64 k = 0;
  do {
    t[k++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (k)
    d[n++] = t[--k];
  return n;
}

DEVFN u64 put_str(char *d, u64 n, const char *s) {
  while (*s)
    d[n++] = *s++;
  return n;
}

/* printf from every thread of every team: ints, a long, a double and a
 * string of 70 bytes (two packets), naturally aligned arguments. */
KERNEL void rpc_hello(void *dyn_ptr, i64 tag) {
  (void)dyn_ptr;
  struct {
    u32 team, thread;
    i64 gid;
    double x;
    const char *s;
    u32 tag;
  } a;
  a.team = BID_X;
  a.thread = TID_X;
  a.gid = GLOBAL_ID_X;
  a.x = (double)a.gid * 0.5;
  a.s = "a string that is long enough to need a second packet of the port 0123";
  a.tag = (u32)tag;
  rpc_printf(RPC_PRINTF_TO_STDOUT, "hello team %u thread %2u gid %ld x=%.1f [%s] tag %d\n", &a, sizeof a);
}

/* puts from every thread (WRITE_TO_STDOUT_NEWLINE). */
KERNEL void rpc_puts(void *dyn_ptr, i64 tag) {
  (void)dyn_ptr;
  char line[96];
  u64 n = put_str(line, 0, "puts team ");
  n = put_dec(line, n, BID_X);
  n = put_str(line, n, " thread ");
  n = put_dec(line, n, TID_X);
  n = put_str(line, n, " tag ");
  n = put_dec(line, n, (u64)tag);
  rpc_write(RPC_WRITE_TO_STDOUT_NEWLINE, line, n);
}

/* stderr: one fwrite and one packed printf per team (thread 0). */
KERNEL void rpc_stderr(void *dyn_ptr, i64 tag) {
  (void)dyn_ptr;
  if (TID_X != 0)
    return;
  char line[64];
  u64 n = put_str(line, 0, "stderr write team ");
  n = put_dec(line, n, BID_X);
  line[n++] = '\n';
  rpc_write(RPC_WRITE_TO_STDERR, line, n);
  unsigned char packed[4 + 8 + 8];
  u32 team = BID_X;
  i64 neg = -(i64)tag;
  const char *w = "packed";
  __builtin_memcpy(packed, &team, 4);
  __builtin_memcpy(packed + 4, &neg, 8);
  __builtin_memcpy(packed + 12, &w, 8);
  rpc_printf(RPC_PRINTF_TO_STDERR_PACKED, "stderr printf team %u value %ld %s\n", packed, sizeof packed);
}

/* malloc/free round trips: each thread allocates `bytes`, fills, checks,
 * frees; out[gid] = 1 when all went right. Thread 0 of team 0 then frees a
 * pointer malloc never returned (the host must refuse it, not crash). */
KERNEL void rpc_heap(void *dyn_ptr, i64 *out, i64 bytes) {
  (void)dyn_ptr;
  i64 gid = GLOBAL_ID_X;
  unsigned char *p = (unsigned char *)rpc_malloc((u64)bytes);
  i64 r = 1;
  if (!p) {
    r = -1;
  } else {
    for (i64 i = 0; i < bytes; ++i)
      p[i] = (unsigned char)(gid + i);
    for (i64 i = 0; i < bytes; ++i)
      if (p[i] != (unsigned char)(gid + i))
        r = -2;
    rpc_free(p);
  }
  out[gid] = r;
  if (gid == 0)
    rpc_free((void *)(uptr)0x1234560);
}

/* exit(code) from thread 0 of team 0. */
KERNEL void rpc_exit_kernel(void *dyn_ptr, i64 code) {
  (void)dyn_ptr;
  if (GLOBAL_ID_X == 0)
    rpc_exit((int)code);
}

KERNEL void rpc_abort_kernel(void *dyn_ptr) {
  (void)dyn_ptr;
  if (GLOBAL_ID_X == 0)
    rpc_abort();
}

/* An opcode nobody serves: the call must come back (unanswered). */
KERNEL void rpc_unknown(void *dyn_ptr, i64 *out) {
  (void)dyn_ptr;
  out[GLOBAL_ID_X] = (i64)rpc_call(UNKNOWN_OPCODE, 5);
}

/* A user opcode, answered by a callback the host registered. */
KERNEL void rpc_user(void *dyn_ptr, i64 *out) {
  (void)dyn_ptr;
  i64 gid = GLOBAL_ID_X;
  out[gid] = (i64)rpc_call(USER_OPCODE, (u64)gid);
}

/* Never calls the host. */
KERNEL void rpc_quiet(void *dyn_ptr, i64 *out) {
  (void)dyn_ptr;
  out[GLOBAL_ID_X] = GLOBAL_ID_X;
}

/* A client that gives up in the middle of a call (as a killed or corrupt
 * kernel would): the format goes out, the arguments never come. The host
 * must give up on it after OMPTARGET_RS_RPC_TIMEOUT, not hang. */
KERNEL void rpc_stall(void *dyn_ptr, i64 *out) {
  (void)dyn_ptr;
  if (GLOBAL_ID_X != 0)
    return;
  rpc_port_t p = rpc_open(RPC_PRINTF_TO_STDOUT);
  const char *fmt = "never printed %d\n";
  rpc_send_n(&p, fmt, rpc_strlen(fmt) + 1);
  out[0] = 1;
}
