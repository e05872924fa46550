// A region maps a struct's pointees (present from an earlier enter data);
// clang 22 maps the pointer members themselves tofrom (implicitly) and
// attaches their device copies to the device pointees. At the region's
// end the pointer members are copied back. LLVM 22.1 writes the device
// address into the host struct and restores the host address later, so
// for a moment the host struct holds a device address: another thread
// mapping the same struct to another device then attaches through it
// (wrong results, or SIGSEGV where device memory is not host memory; see
// c-tests/mpi/struct_threads.c). OpenMP 5.2 §5.8.3 keeps the host value of
// an attached pointer; omptarget-rs never writes the device address there.
// An OMPT tool in this program looks at the host struct when each copy
// from the device has ended.
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  int *a;
  double *b;
} S;
static S sd;
static int *host_a;
static double *host_b;
static int copies_back, device_address_seen;

static void on_data_op(ompt_scope_endpoint_t endpoint, ompt_data_t *task, ompt_data_t *data, ompt_id_t *op,
                       ompt_target_data_op_t optype, void *src, int src_device, void *dst, int dst_device, size_t bytes,
                       const void *codeptr) {
  (void)task, (void)data, (void)op, (void)src, (void)src_device, (void)dst, (void)dst_device, (void)bytes, (void)codeptr;
  if (endpoint != ompt_scope_end || optype != ompt_target_data_transfer_from_device || !host_a) return;
  copies_back++;
  if (sd.a != host_a || sd.b != host_b) device_address_seen = 1;
}

static int init(ompt_function_lookup_t lookup, int device, ompt_data_t *data) {
  (void)device, (void)data;
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op);
  return 1;
}
static void fini(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime) {
  (void)version, (void)runtime;
  static ompt_start_tool_result_t r = {init, fini, {0}};
  return &r;
}

int main(void) {
  enum { N = 1000 };
  sd.n = N;
  sd.a = malloc(N * sizeof(int));
  sd.b = malloc(N * sizeof(double));
  for (int i = 0; i < N; i++) { sd.a[i] = i; sd.b[i] = 2 * i; }
#pragma omp target enter data map(to: sd.a[:N]) map(to: sd.b[:N])
  host_a = sd.a;
  host_b = sd.b;
  long s = 0;
#pragma omp target map(to: sd.n) map(to: sd.a[:N]) map(to: sd.b[:N]) map(tofrom: s)
  for (int i = 0; i < sd.n; i++) s += sd.a[i] + (long)sd.b[i];
  int kept = sd.a == host_a && sd.b == host_b;
  host_a = NULL;
#pragma omp target exit data map(delete: sd.a[:N]) map(delete: sd.b[:N])
  printf("sum %ld (want %ld), host pointers kept: %s\n", s, 3L * N * (N - 1) / 2, kept ? "yes" : "no");
  printf("copies back seen: %s; the host struct held a device address when one ended: %s\n", copies_back > 0 ? "yes" : "no",
         device_address_seen ? "yes" : "no");
  return 0;
}
