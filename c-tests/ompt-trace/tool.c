// OMPT device-tracing tool. Attached with OMP_TOOL_LIBRARIES.
// On device_initialize it looks up the tracing entry points; where they
// exist it checks the fixed answers (native tracing never, invalid
// cursors), enables target/target_data_op/target_submit records and starts
// a trace with small buffers (TRACE_BUFFER_RECORDS records each, default 3,
// so buffers fill and are completed often). EMI callbacks count what the
// records must contain. The program calls trace_ctl() (dlsym) to flush and
// stop; every buffer-complete walks its records and checks them:
// type, start <= end, times non-decreasing, bytes, host_op_ids unique, and
// that each flush/stop delivered exactly the records of the operations the
// callbacks saw. Prints "trace: ..." lines; "FAIL" for a broken check.
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 16
static ompt_set_trace_ompt_t set_trace_ompt;
static ompt_set_trace_native_t set_trace_native;
static ompt_start_trace_t start_trace;
static ompt_flush_trace_t flush_trace;
static ompt_stop_trace_t stop_trace;
static ompt_advance_buffer_cursor_t advance;
static ompt_get_record_type_t get_type;
static ompt_get_record_ompt_t get_ompt;
static ompt_get_record_native_t get_native;
static ompt_get_device_time_t device_time;
static ompt_translate_time_t translate;

struct dev {
  ompt_device_t *d;
  int traced, stopped;
  // What the callbacks saw while tracing (ends of data ops and submits, target begin+end).
  long cb_target, cb_data_op, cb_submit;
  // What the records delivered hold.
  long rec_target, rec_data_op, rec_submit, buffers, bytes_h2d, bytes_d2h;
  ompt_device_time_t last_time;
  unsigned long last_op_id;
  long after_stop;
  unsigned long busy_ns; // sum of (end - start) of the operations
};
static struct dev devs[MAXDEV];
static int fails;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("trace: FAIL " __VA_ARGS__); printf("\n"); } } while (0)

static size_t buf_records(void) {
  const char *e = getenv("TRACE_BUFFER_RECORDS");
  return e ? (size_t)atoi(e) : 3;
}

static void request(int device, ompt_buffer_t **buffer, size_t *bytes) {
  *bytes = buf_records() * sizeof(ompt_record_ompt_t) + 8; // +8: a partial record's room is never used
  *buffer = malloc(*bytes);
}

static void complete(int device, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
  struct dev *v = &devs[device];
  CHECK(owned == 1, "device %d: buffer not owned", device);
  CHECK(bytes <= buf_records() * sizeof(ompt_record_ompt_t), "device %d: %zu bytes in a buffer of %zu records", device, bytes, buf_records());
  CHECK(bytes % sizeof(ompt_record_ompt_t) == 0, "device %d: %zu bytes is not whole records", device, bytes);
  v->buffers++;
  if (v->stopped) v->after_stop++;
  ompt_buffer_cursor_t c = begin;
  while (bytes > 0 && c < bytes) {
    CHECK(get_type(buffer, c) == ompt_record_ompt, "device %d: record type %d", device, get_type(buffer, c));
    ompt_record_ompt_t *r = get_ompt(buffer, c);
    CHECK(r != NULL, "device %d: no record at %lu", device, (unsigned long)c);
    if (!r) break;
    CHECK(r->time >= v->last_time, "device %d: time went back (%lu < %lu)", device, (unsigned long)r->time, (unsigned long)v->last_time);
    v->last_time = r->time;
    switch (r->type) {
    case ompt_callback_target:
      v->rec_target++;
      CHECK(r->record.target.device_num == device, "device %d: target record for device %d", device, r->record.target.device_num);
      CHECK(r->record.target.endpoint == ompt_scope_begin || r->record.target.endpoint == ompt_scope_end, "bad endpoint");
      CHECK(r->target_id != 0 && r->record.target.target_id == r->target_id, "device %d: target ids", device);
      break;
    case ompt_callback_target_data_op: {
      ompt_record_target_data_op_t *o = &r->record.target_data_op;
      v->rec_data_op++;
      CHECK(o->end_time >= r->time, "device %d: data op ends before it starts", device);
      CHECK(o->host_op_id > v->last_op_id, "device %d: host_op_id not increasing", device);
      v->last_op_id = o->host_op_id;
      if (o->optype == ompt_target_data_transfer_to_device) {
        v->bytes_h2d += o->bytes;
        CHECK(o->dest_device_num == device, "h2d dest");
      }
      if (o->optype == ompt_target_data_transfer_from_device) {
        v->bytes_d2h += o->bytes;
        CHECK(o->src_device_num == device, "d2h src");
      }
      CHECK(o->optype >= ompt_target_data_alloc && o->optype <= ompt_target_data_disassociate, "optype %d", o->optype);
      v->busy_ns += o->end_time - r->time;
      v->last_time = o->end_time;
      break;
    }
    case ompt_callback_target_submit:
      v->rec_submit++;
      CHECK(r->record.target_kernel.end_time >= r->time, "device %d: kernel ends before it starts", device);
      CHECK(r->record.target_kernel.requested_num_teams == 3, "device %d: requested teams %u", device, r->record.target_kernel.requested_num_teams);
      v->busy_ns += r->record.target_kernel.end_time - r->time;
      v->last_time = r->record.target_kernel.end_time;
      break;
    default:
      CHECK(0, "device %d: record of type %d", device, r->type);
    }
    ompt_buffer_cursor_t next = 0;
    int more = advance(v->d, buffer, bytes, c, &next);
    CHECK(next == c + sizeof(ompt_record_ompt_t), "cursor step");
    CHECK(more == (next < bytes), "advance says %d at %lu of %zu", more, (unsigned long)next, bytes);
    c = next;
  }
  free(buffer);
}

static void device_initialize(int device, const char *type, ompt_device_t *d, ompt_function_lookup_t lookup, const char *doc) {
  if (device < 0 || device >= MAXDEV) return;
  devs[device].d = d;
#define L(v, n) v = (__typeof__(v))lookup(n)
  L(set_trace_ompt, "ompt_set_trace_ompt");
  L(start_trace, "ompt_start_trace");
  if (!set_trace_ompt || !start_trace) {
    printf("trace: device %d (%s): no device tracing entry points\n", device, type);
    return;
  }
  L(set_trace_native, "ompt_set_trace_native");
  L(flush_trace, "ompt_flush_trace");
  L(stop_trace, "ompt_stop_trace");
  L(advance, "ompt_advance_buffer_cursor");
  L(get_type, "ompt_get_record_type");
  L(get_ompt, "ompt_get_record_ompt");
  L(get_native, "ompt_get_record_native");
  L(device_time, "ompt_get_device_time");
  L(translate, "ompt_translate_time");
  CHECK(set_trace_native && flush_trace && stop_trace && advance && get_type && get_ompt && get_native && device_time && translate,
        "device %d: an entry point is missing", device);
  CHECK(lookup("ompt_no_such_entry") == NULL, "unknown name found");
  CHECK(set_trace_native(d, 1, ompt_native_data_motion_explicit) == ompt_set_never, "native tracing is not never");
  CHECK(get_native(NULL, 0, NULL) == NULL, "a native record");
  CHECK(get_type(NULL, 0) == ompt_record_invalid, "record type of NULL");
  CHECK(get_ompt(NULL, 0) == NULL, "record of NULL");
  CHECK(set_trace_ompt(d, 1, ompt_callback_thread_begin) == ompt_set_never, "thread_begin traceable");
  CHECK(set_trace_ompt(NULL, 1, ompt_callback_target) == ompt_set_error, "NULL device accepted");
  CHECK(flush_trace(d) == 0, "flush before start succeeds");
  CHECK(start_trace(d, NULL, complete) == 0, "start without request succeeds");
  CHECK(set_trace_ompt(d, 1, ompt_callback_target_emi) == ompt_set_always, "target");
  CHECK(set_trace_ompt(d, 1, ompt_callback_target_data_op) == ompt_set_always, "data op");
  CHECK(set_trace_ompt(d, 1, ompt_callback_target_submit_emi) == ompt_set_always, "submit");
  CHECK(start_trace(d, request, complete) == 1, "start_trace failed");
  // The device clock advances and translates to omp_get_wtime's scale.
  ompt_device_time_t t0 = device_time(d);
  double w = omp_get_wtime();
  ompt_device_time_t t1 = device_time(d);
  double h0 = translate(d, t0), h1 = translate(d, t1);
  CHECK(t0 > 0 && t1 >= t0, "device time %lu then %lu", (unsigned long)t0, (unsigned long)t1);
  CHECK(h1 >= h0 && h0 - w < 0.05 && w - h0 < 0.05, "translate: %f %f vs wtime %f", h0, h1, w);
  devs[device].traced = 1;
  printf("trace: device %d (%s): tracing started\n", device, type);
}

// The device of this thread's construct in progress (target_submit names none).
static __thread int construct_device = -1;

static int traced(int device) { return device >= 0 && device < MAXDEV && devs[device].traced && !devs[device].stopped; }

static void target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int device, ompt_data_t *task, ompt_data_t *ttask,
                       ompt_data_t *tdata, const void *codeptr) {
  if (ep == ompt_scope_begin) construct_device = device;
  if (traced(device)) devs[device].cb_target++;
}

static void data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *ttask, ompt_data_t *tdata, ompt_id_t *host_op_id,
                        ompt_target_data_op_t op, void *src, int src_dev, void *dst, int dst_dev, size_t bytes, const void *codeptr) {
  // The record goes to the device side of the operation.
  int dev = (op == ompt_target_data_alloc || op == ompt_target_data_transfer_to_device) ? dst_dev : src_dev;
  if (ep == ompt_scope_end && traced(dev)) devs[dev].cb_data_op++;
}

static void submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *tdata, ompt_id_t *host_op_id, unsigned int teams) {
  if (ep == ompt_scope_end && traced(construct_device)) devs[construct_device].cb_submit++;
}

static void report(const char *when) {
  for (int i = 0; i < MAXDEV; i++) {
    struct dev *v = &devs[i];
    if (!v->traced) continue;
    printf("trace: %s: device %d: records target=%ld data_op=%ld submit=%ld (callbacks %ld %ld %ld) h2d=%ld d2h=%ld bytes\n", when, i,
           v->rec_target, v->rec_data_op, v->rec_submit, v->cb_target, v->cb_data_op, v->cb_submit, v->bytes_h2d, v->bytes_d2h);
    CHECK(v->rec_target == v->cb_target && v->rec_data_op == v->cb_data_op && v->rec_submit == v->cb_submit,
          "%s: device %d: records delivered differ from the callbacks", when, i);
  }
}

// The program's controls: 1 = flush every traced device, 2 = stop, 3 = final report.
void trace_ctl(int what) {
  for (int i = 0; i < MAXDEV; i++) {
    struct dev *v = &devs[i];
    if (!v->traced) continue;
    if (what == 1) CHECK(flush_trace(v->d) == 1, "flush failed");
    if (what == 2) {
      CHECK(stop_trace(v->d) == 1, "stop failed");
      v->stopped = 1;
      v->after_stop = 0;
      CHECK(flush_trace(v->d) == 0, "flush after stop succeeds");
      CHECK(stop_trace(v->d) == 0, "second stop succeeds");
    }
    if (what == 3) CHECK(v->after_stop == 0, "device %d: %ld buffers after stop", i, v->after_stop);
  }
  report(what == 1 ? "after flush" : what == 2 ? "after stop" : "at the end");
  for (int i = 0; what == 3 && i < MAXDEV; i++)
    if (devs[i].traced && devs[i].rec_data_op) CHECK(devs[i].busy_ns > 0, "device %d: operations take no device time", i);
  if (what == 3) printf("trace: %s\n", fails ? "FAILED" : "all checks passed");
}

static int initialize(ompt_function_lookup_t lookup, int initial_device, ompt_data_t *tool_data) {
  ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
  set(ompt_callback_device_initialize, (ompt_callback_t)device_initialize);
  set(ompt_callback_target_emi, (ompt_callback_t)target_emi);
  set(ompt_callback_target_data_op_emi, (ompt_callback_t)data_op_emi);
  set(ompt_callback_target_submit_emi, (ompt_callback_t)submit_emi);
  return 1;
}
static void finalize(ompt_data_t *tool_data) {}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return &result;
}
