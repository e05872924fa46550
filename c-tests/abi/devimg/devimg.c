/* A tiny x86-64 "device image" for the ABI harnesses: an ordinary shared
 * object (cc -shared -fPIC) that LLVM's host plugin (and ours) loads with
 * dlopen. Kernels are plain C functions whose parameters are all
 * pointer-sized. Kernels launched with KernelArgs Version >= 3 receive the
 * implicit dyn_ptr as their FIRST parameter (value 0xffffffffffffffff for
 * these kernels); Version 1/2 launches pass no dyn_ptr (abi-reference 5.2).
 * Every function here is exported by name; the harnesses name them in their
 * offload entries.
 *
 * The globals have PROTECTED visibility so that the kernels of each loaded
 * copy use that copy's globals: LLVM's host plugin loads one copy per device
 * with dlopen(RTLD_GLOBAL), and with default visibility every copy's kernels
 * would bind to the first copy's globals (clang's device images do not have
 * this problem). */
#include <stdint.h>

#define DEVICE_GLOBAL __attribute__((visibility("protected")))

/* ---- device globals (named by global offload entries, Size != 0) ---- */
DEVICE_GLOBAL int dev_counter = 7;
DEVICE_GLOBAL double dev_table[4] = {0.5, 1.5, 2.5, 3.5};
DEVICE_GLOBAL uint64_t dev_last_dyn = 0;

/* ---- Version 3 kernels: (dyn_ptr, args...) ---- */

/* a[i] += val for i in [0, n) */
void k3_add(void *dyn, int *a, long n, long val) {
  dev_last_dyn = (uint64_t)(uintptr_t)dyn;
  for (long i = 0; i < n; i++)
    a[i] += (int)val;
}

/* out[0] = dyn_ptr value, out[1] = number of the extra (ignored) args seen as 0 */
void k3_dyn(void *dyn, uint64_t *out) { out[0] = (uint64_t)(uintptr_t)dyn; }

/* out[0] = x * y (two literals) */
void k3_mul(void *dyn, long x, long y, long *out) {
  (void)dyn;
  out[0] = x * y;
}

/* device global counter: dev_counter += inc; out[0] = new value */
void k3_count(void *dyn, long inc, long *out) {
  (void)dyn;
  dev_counter += (int)inc;
  out[0] = dev_counter;
}

/* sum of dev_table into out[0] (as integer * 10) */
void k3_table(void *dyn, long *out) {
  (void)dyn;
  double s = 0;
  for (int i = 0; i < 4; i++)
    s += dev_table[i];
  out[0] = (long)(s * 10);
}

struct Pair {
  long a, b;
  long arr[3];
};

/* firstprivate struct: read it, then clobber the private copy */
void k3_pair(void *dyn, struct Pair *p, long *out) {
  (void)dyn;
  out[0] = p->a + p->b + p->arr[0] + p->arr[1] + p->arr[2];
  p->a = -1;
  p->arr[2] = -1;
}

struct Holder {
  int n;
  int *data;
};

/* pointer attachment: h is the device copy of a struct whose member pointer
 * was attached to the device copy of the pointee */
void k3_holder(void *dyn, struct Holder *h, long *out) {
  (void)dyn;
  long s = 0;
  for (int i = 0; i < h->n; i++) {
    s += h->data[i];
    h->data[i] *= 10;
  }
  out[0] = s;
}

/* a is the device BASE address of a partially mapped array: write a[lo..hi) */
void k3_section(void *dyn, int *a, long lo, long hi) {
  (void)dyn;
  for (long i = lo; i < hi; i++)
    a[i] = -a[i];
}

/* ---- Version 1/2 kernels: no dyn_ptr ---- */

void k2_add(int *a, long n, long val) {
  for (long i = 0; i < n; i++)
    a[i] += (int)val;
}

/* records its first parameter so a test can see that no dyn_ptr was passed */
void k2_first(uint64_t first, uint64_t *out) {
  out[0] = first;
  dev_last_dyn = first;
}
