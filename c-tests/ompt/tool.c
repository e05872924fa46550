// OMPT tool for the c-tests/ompt differential suite: prints every
// offloading callback it receives, one line each, with addresses masked.
//
// Loaded with OMP_TOOL_LIBRARIES=<this .so>. OMPT_TOOL_MODE selects the
// registrations: "emi" (default), "noemi", or "both". Pointers print as
// "nil" or "ptr"; ids the runtime or the tool hands out print renumbered
// in order of first appearance, so sequences compare across runtimes.
// codeptr_ra prints as "file+0xOFFSET" (dladdr: the object it lies in and
// its offset from that object's load base), so the same program under two
// runtimes prints the same text when both report the same call site.
// With OMPT_TOOL_QUIET_DEVICES=1 the device_* callbacks are counted only
// (printed at the end as totals), for programs whose device set differs.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ompt_set_callback_t set_cb;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1000;
static uint64_t seen[4096];
static int nseen;
static int counts[64];

#define P(x) ((x) ? "ptr" : "nil")

// A code address as "file+0xOFFSET" ("nil", or "unknown" when no object
// holds it). Called with `lock` held: one static buffer.
static const char *RA(const void *ra) {
  static char buf[512];
  Dl_info info;
  if (!ra)
    return "nil";
  if (!dladdr(ra, &info) || !info.dli_fbase)
    return "unknown";
  const char *f = info.dli_fname ? info.dli_fname : "";
  const char *slash = strrchr(f, '/');
  snprintf(buf, sizeof buf, "%s+%#lx", slash ? slash + 1 : f,
           (unsigned long)((const char *)ra - (const char *)info.dli_fbase));
  return buf;
}

// Renumbers an id: its index among the ids seen so far (0 = id 0).
static int renum(uint64_t id) {
  if (id == 0)
    return 0;
  for (int i = 0; i < nseen; i++)
    if (seen[i] == id)
      return i + 1;
  if (nseen < 4096)
    seen[nseen++] = id;
  return nseen;
}

static const char *op_name(int op) {
  switch (op) {
  case ompt_target_data_alloc: return "alloc";
  case ompt_target_data_transfer_to_device: return "to_device";
  case ompt_target_data_transfer_from_device: return "from_device";
  case ompt_target_data_delete: return "delete";
  case ompt_target_data_associate: return "associate";
  case ompt_target_data_disassociate: return "disassociate";
  case 7: return "memcpy";
  case 8: return "memset";
  default: return "other";
  }
}

static const char *kind_name(int k) {
  switch (k) {
  case ompt_target: return "target";
  case ompt_target_enter_data: return "enter_data";
  case ompt_target_exit_data: return "exit_data";
  case ompt_target_update: return "update";
  case ompt_target_nowait: return "target_nowait";
  case ompt_target_enter_data_nowait: return "enter_data_nowait";
  case ompt_target_exit_data_nowait: return "exit_data_nowait";
  case ompt_target_update_nowait: return "update_nowait";
  default: return "other";
  }
}

static const char *ep(int e) { return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend"; }

static int quiet_devices(void) {
  const char *q = getenv("OMPT_TOOL_QUIET_DEVICES");
  return q && *q == '1';
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *d, ompt_function_lookup_t lookup,
                                 const char *doc) {
  pthread_mutex_lock(&lock);
  counts[12]++;
  if (!quiet_devices())
    printf("[ompt] device_initialize dev=%d type=%s device=%s lookup=%s doc=%s\n", dev, type ? type : "(null)", P(d),
           P(lookup), P(doc));
  pthread_mutex_unlock(&lock);
}

static void on_device_finalize(int dev) {
  pthread_mutex_lock(&lock);
  counts[13]++;
  if (!quiet_devices())
    printf("[ompt] device_finalize dev=%d\n", dev);
  fflush(stdout);
  pthread_mutex_unlock(&lock);
}

static void on_device_load(int dev, const char *file, int64_t off, void *vma, size_t bytes, void *host, void *daddr,
                           uint64_t module) {
  pthread_mutex_lock(&lock);
  counts[14]++;
  if (!quiet_devices())
    printf("[ompt] device_load dev=%d file=%s offset=%lld vma=%s bytes>0=%d host=%s device_addr=%s module=%llu\n", dev,
           file ? file : "(null)", (long long)off, P(vma), bytes > 0, P(host), P(daddr), (unsigned long long)module);
  pthread_mutex_unlock(&lock);
}

static void on_device_unload(int dev, uint64_t module) {
  pthread_mutex_lock(&lock);
  counts[15]++;
  if (!quiet_devices())
    printf("[ompt] device_unload dev=%d module=%llu\n", dev, (unsigned long long)module);
  pthread_mutex_unlock(&lock);
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t e, int dev, ompt_data_t *task, ompt_id_t target_id,
                      const void *ra) {
  pthread_mutex_lock(&lock);
  printf("[ompt] target %s %s dev=%d task=%s target_id=#%d ra=%s\n", kind_name(kind), ep(e), dev, P(task),
         renum(target_id), RA(ra));
  pthread_mutex_unlock(&lock);
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t e, int dev, ompt_data_t *task,
                          ompt_data_t *target_task, ompt_data_t *target, const void *ra) {
  pthread_mutex_lock(&lock);
  if (target && e == ompt_scope_begin)
    target->value = next_id++;
  printf("[ompt] target_emi %s %s dev=%d task=%s target_task=%s target=#%d ra=%s\n", kind_name(kind), ep(e), dev,
         P(task), P(target_task), target ? renum(target->value) : -1, RA(ra));
  pthread_mutex_unlock(&lock);
}

static void on_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t op, void *src, int src_dev,
                       void *dst, int dst_dev, size_t bytes, const void *ra) {
  pthread_mutex_lock(&lock);
  printf("[ompt] data_op %s target_id=#%d op=#%d src=%s/%d dst=%s/%d bytes=%zu ra=%s\n", op_name(op), renum(target_id),
         renum(host_op_id), P(src), src_dev, P(dst), dst_dev, bytes, RA(ra));
  pthread_mutex_unlock(&lock);
}

static void on_data_op_emi(ompt_scope_endpoint_t e, ompt_data_t *target_task, ompt_data_t *target, ompt_id_t *op_id,
                           ompt_target_data_op_t op, void *src, int src_dev, void *dst, int dst_dev, size_t bytes,
                           const void *ra) {
  pthread_mutex_lock(&lock);
  if (op_id && e == ompt_scope_begin)
    *op_id = next_id++;
  printf("[ompt] data_op_emi %s %s target_task=%s target=#%d op=#%d src=%s/%d dst=%s/%d bytes=%zu ra=%s\n", op_name(op),
         ep(e), P(target_task), target ? renum(target->value) : -1, op_id ? renum(*op_id) : -1, P(src), src_dev, P(dst),
         dst_dev, bytes, RA(ra));
  pthread_mutex_unlock(&lock);
}

static void on_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int teams) {
  pthread_mutex_lock(&lock);
  printf("[ompt] submit target_id=#%d op=#%d teams=%u\n", renum(target_id), renum(host_op_id), teams);
  pthread_mutex_unlock(&lock);
}

static void on_submit_emi(ompt_scope_endpoint_t e, ompt_data_t *target, ompt_id_t *op_id, unsigned int teams) {
  pthread_mutex_lock(&lock);
  if (op_id && e == ompt_scope_begin)
    *op_id = next_id++;
  printf("[ompt] submit_emi %s target=#%d op=#%d teams=%u\n", ep(e), target ? renum(target->value) : -1,
         op_id ? renum(*op_id) : -1, teams);
  pthread_mutex_unlock(&lock);
}

static void on_target_map(ompt_id_t target_id, unsigned int n, void **h, void **d, size_t *b, unsigned int *f,
                          const void *ra) {
  pthread_mutex_lock(&lock);
  printf("[ompt] target_map target_id=#%d n=%u\n", renum(target_id), n);
  pthread_mutex_unlock(&lock);
}

static void reg(int which, ompt_callback_t cb, const char *name) {
  int r = set_cb(which, cb);
  if (r != ompt_set_always)
    printf("[ompt] set_callback %s -> %d\n", name, r);
}

static int tool_init(ompt_function_lookup_t lookup, int initial_device, ompt_data_t *data) {
  set_cb = (ompt_set_callback_t)lookup("ompt_set_callback");
  const char *mode = getenv("OMPT_TOOL_MODE");
  int emi = !mode || strcmp(mode, "noemi") != 0;
  int noemi = mode && (strcmp(mode, "noemi") == 0 || strcmp(mode, "both") == 0);
  reg(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize, "device_initialize");
  reg(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize, "device_finalize");
  reg(ompt_callback_device_load, (ompt_callback_t)on_device_load, "device_load");
  reg(ompt_callback_device_unload, (ompt_callback_t)on_device_unload, "device_unload");
  if (noemi) {
    reg(ompt_callback_target, (ompt_callback_t)on_target, "target");
    reg(ompt_callback_target_data_op, (ompt_callback_t)on_data_op, "target_data_op");
    reg(ompt_callback_target_submit, (ompt_callback_t)on_submit, "target_submit");
    set_cb(ompt_callback_target_map, (ompt_callback_t)on_target_map);
  }
  if (emi) {
    reg(ompt_callback_target_emi, (ompt_callback_t)on_target_emi, "target_emi");
    reg(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op_emi, "target_data_op_emi");
    reg(ompt_callback_target_submit_emi, (ompt_callback_t)on_submit_emi, "target_submit_emi");
  }
  printf("[ompt] tool initialized\n");
  return 1;
}

static void tool_fini(ompt_data_t *data) {
  if (quiet_devices())
    printf("[ompt] devices: %d initialize, %d load, %d unload, %d finalize\n", counts[12], counts[14], counts[15],
           counts[13]);
  printf("[ompt] tool finalized\n");
  fflush(stdout);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  static ompt_start_tool_result_t r = {tool_init, tool_fini, {0}};
  return &r;
}
