/* Device memory reuse on the host plugin. LLVM 22.1's
 * memory manager keeps freed blocks of at most
 * LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD bytes (default 8 KiB, 0 = off) and
 * hands a block of exactly the requested size back, the one freed FIRST
 * (its size classes are multisets ordered by size). Blocks it does not
 * manage go back to malloc, whose per-size cache (glibc's tcache) is last
 * freed first. So with the default threshold both 16- and 64-byte blocks are
 * "first freed first"; with THRESHOLD=32 (mem_reuse_t32) the 64-byte ones
 * come from malloc, "last freed first"; with 0 (mem_reuse_off) both do.
 * The variants print only the two omp_target_alloc lines: with blocks that
 * malloc manages, anything else depends on the runtime's own mallocs.
 * Addresses are only compared, never printed. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

static const char *order(size_t size, int d) {
  /* Blocks malloc manages: first take what its per-size cache holds, so
   * that the two frees below go into it (a cache that is full, with blocks
   * the runtime freed while starting, would send them elsewhere). */
  void *spare[8];
  for (int i = 0; i < 8; i++) spare[i] = omp_target_alloc(size, d);
  void *a = omp_target_alloc(size, d), *b = omp_target_alloc(size, d);
  omp_target_free(a, d);
  omp_target_free(b, d);
  void *c = omp_target_alloc(size, d), *e = omp_target_alloc(size, d);
  const char *r = (c == a && e == b) ? "first freed first" : (c == b && e == a) ? "last freed first" : "other";
  omp_target_free(c, d);
  omp_target_free(e, d);
  for (int i = 0; i < 8; i++) omp_target_free(spare[i], d);
  return r;
}

/* The same through mappings: enter a, enter b, exit a, exit b, enter c. */
#ifndef ONLY_ALLOC_ORDER
static const char *map_order(int d) {
  static char a[48], b[48], c[48];
  #pragma omp target enter data map(to: a) device(d)
  #pragma omp target enter data map(to: b) device(d)
  void *da = omp_get_mapped_ptr(a, d), *db = omp_get_mapped_ptr(b, d);
  #pragma omp target exit data map(release: a) device(d)
  #pragma omp target exit data map(release: b) device(d)
  #pragma omp target enter data map(to: c) device(d)
  void *dc = omp_get_mapped_ptr(c, d);
  #pragma omp target exit data map(release: c) device(d)
  return dc == da ? "first freed first" : dc == db ? "last freed first" : "other";
}
#endif

int main(void) {
  int d = omp_get_default_device();
  printf("16-byte blocks: %s\n", order(16, d));
  printf("64-byte blocks: %s\n", order(64, d));
#ifndef ONLY_ALLOC_ORDER
  printf("48-byte mappings: %s\n", map_order(d));
  void *f = omp_target_alloc(100, d);
  omp_target_free(f, d);
  void *g = omp_target_alloc(120, d);
  printf("100-byte block reused for 120 bytes: %d\n", g == f);
  void *h = omp_target_alloc(100, d);
  printf("100-byte block reused for 100 bytes: %d\n", h == f);
  omp_target_free(g, d);
  omp_target_free(h, d);
  /* reading memory never written gets what the reused block held */
  int *p = omp_target_alloc(sizeof(int) * 5, d);
  #pragma omp target is_device_ptr(p) device(d)
  for (int i = 0; i < 5; i++) p[i] = 40 + i;
  omp_target_free(p, d);
  int *q = omp_target_alloc(sizeof(int) * 5, d), out = -1;
  #pragma omp target is_device_ptr(q) map(from: out) device(d)
  out = q[2];
  printf("reused: %d, value never written there: %d\n", q == p, out);
  omp_target_free(q, d);
#endif
  return 0;
}
