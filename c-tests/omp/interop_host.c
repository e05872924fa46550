// interop_host.c - #pragma omp interop on the host plugin: LLVM 22.1
// creates no interop object for it, so every init leaves omp_interop_none, use
// and destroy do nothing, and nothing is printed. A targetsync init waits for
// its depend clause first. Queries that 22.1 answers without dereferencing the
// object (names) and the OpenMP 6.0 entry points on omp_interop_none are
// compared too. The omp_get_interop_int/ptr/str calls of a program bind to
// libomp's forwarders, which find the runtime with dlsym(RTLD_NEXT): under
// LD_PRELOAD that misses a preloaded runtime, so their return codes are
// checked on the stand-ins instead (c-tests/interop/run.sh).
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

extern void *__tgt_interop_get(void *loc, int type, long long device, int nprefs, void *prefs, void *ctx, void *deps);
extern int __tgt_interop_use60(void *loc, void *interop, void *ctx, void *deps);
extern int __tgt_interop_release(void *loc, void *interop, void *ctx, void *deps);
extern int ompx_interop_add_completion_callback(omp_interop_t, void (*)(omp_interop_t, void *), void *);

static void cb(omp_interop_t o, void *d) { (void)o; printf("callback %s\n", (const char *)d); }

int main(void) {
  int a = 0;
  omp_interop_t sync = omp_interop_none, tgt = omp_interop_none, dev1 = omp_interop_none;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task depend(out : a)
    {
      usleep(100000);
      a = 1;
    }
#pragma omp interop init(targetsync : sync) depend(in : a)
    printf("after init(targetsync) depend(in: a): a = %d\n", a);
  }
#pragma omp interop init(target : tgt)
#pragma omp interop init(targetsync : dev1) device(1) nowait
  printf("targetsync: %s, target: %s, device(1): %s\n", sync == omp_interop_none ? "none" : "object",
         tgt == omp_interop_none ? "none" : "object", dev1 == omp_interop_none ? "none" : "object");
#pragma omp interop use(sync) nowait
#pragma omp interop use(tgt)
#pragma omp interop destroy(sync)
#pragma omp interop destroy(tgt)
#pragma omp interop destroy(dev1)
  printf("name(none, fr_id): %s\n", omp_get_interop_name(sync, omp_ipr_fr_id) ? "set" : "NULL");
  printf("type_desc(none, vendor): %s\n", omp_get_interop_type_desc(sync, omp_ipr_vendor) ? "set" : "NULL");
  printf("completion callback on none: %d\n", ompx_interop_add_completion_callback(sync, cb, "x"));
  int ctx[3] = {0, 0, 0};
  void *o = __tgt_interop_get(NULL, 2, 0, 0, NULL, ctx, NULL);
  printf("__tgt_interop_get(targetsync, device 0): %s\n", o ? "object" : "none");
  printf("__tgt_interop_use60(none): %d\n", __tgt_interop_use60(NULL, o, ctx, NULL));
  printf("__tgt_interop_release(none): %d\n", __tgt_interop_release(NULL, o, ctx, NULL));
  return 0;
}
