/* The physical floor of the latency operations of lat.c: a plain C
 * program doing only the work no offloading runtime can avoid on the host
 * target: the call into the runtime, an interval look-up in a small sorted
 * table of mappings, the reference-count update, the allocation and the
 * copies, and the call of the kernel. No argument checks, no locks, no
 * device-number resolution, no hooks.
 *
 *   floor cg <n1> <n2>   as lat's callgrind mode: one loop of <n1> and one
 *                        of <n2> operations per metric, each followed by
 *                        CALLGRIND_DUMP_STATS_AT("lat_<m>/<n>")
 *
 * The metric names are lat's, so run.sh can put the two side by side.
 */
#include "bench.h"

#define NARR 1024
#define MAXE 64

struct entry {
  uintptr_t begin, end;
  char *tgt;
  long refs;
};

/* The table: sorted by begin, no overlaps. */
static struct entry table[MAXE];
static int nent;

static double v, eb[8], unmapped;
static double a0[NARR], a1[NARR], a2[NARR], a3[NARR], a4[NARR], a5[NARR],
    a6[NARR], a7[NARR];
static double *arrays[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
static long long tofrom_count;

/* The entry containing [p, p+size), or NULL: a binary search. */
__attribute__((noinline)) static struct entry *lookup(const void *p, size_t size) {
  uintptr_t b = (uintptr_t)p, e = b + size;
  int lo = 0, hi = nent;
  while (lo < hi) { /* first entry with begin > b */
    int mid = (lo + hi) / 2;
    if (table[mid].begin <= b) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  struct entry *x = &table[lo - 1];
  return (x->begin <= b && e <= x->end) ? x : NULL;
}

__attribute__((noinline)) static struct entry *insert(const void *p, size_t size, char *tgt) {
  uintptr_t b = (uintptr_t)p;
  int i = nent;
  while (i > 0 && table[i - 1].begin > b) {
    table[i] = table[i - 1];
    i--;
  }
  table[i] = (struct entry){b, b + size, tgt, 1};
  nent++;
  return &table[i];
}

__attribute__((noinline)) static void removex(struct entry *x) {
  int i = (int)(x - table);
  for (; i + 1 < nent; i++) table[i] = table[i + 1];
  nent--;
}

/* The kernels: called through a pointer, as a runtime calls them. */
static void k_empty(void) {}
static void k_inc(long long *x) { (*x)++; }
static void k_present8(double **p) { p[0][0] += 1.0; }
static void (*volatile kernel_empty)(void) = k_empty;
static void (*volatile kernel_inc)(long long *) = k_inc;
static void (*volatile kernel_p8)(double **) = k_present8;

__attribute__((noinline)) static void rt_region_nomap(void) { kernel_empty(); }

__attribute__((noinline)) static void rt_region_tofrom(long long *x) {
  char *d = malloc(sizeof *x);
  struct entry *e = insert(x, sizeof *x, d);
  memcpy(d, x, sizeof *x);
  kernel_inc((long long *)d);
  e = lookup(x, sizeof *x);
  memcpy(x, e->tgt, sizeof *x);
  removex(e);
  free(d);
}

__attribute__((noinline)) static void rt_region_present8(void) {
  double *dev[8];
  for (int i = 0; i < 8; i++) {
    struct entry *e = lookup(arrays[i], sizeof a0);
    e->refs++;
    dev[i] = (double *)e->tgt;
  }
  kernel_p8(dev);
  for (int i = 0; i < 8; i++) lookup(arrays[i], sizeof a0)->refs--;
}

__attribute__((noinline)) static void rt_enter(void *p, size_t n) { lookup(p, n)->refs++; }
__attribute__((noinline)) static void rt_exit(void *p, size_t n) { lookup(p, n)->refs--; }

__attribute__((noinline)) static void rt_update(void *p, size_t n) {
  struct entry *e = lookup(p, n);
  if (e) memcpy(e->tgt + ((uintptr_t)p - e->begin), p, n);
}

__attribute__((noinline)) static void *rt_alloc(size_t n) { return malloc(n); }
__attribute__((noinline)) static void rt_free(void *p) { free(p); }
__attribute__((noinline)) static void rt_memcpy(void *d, const void *s, size_t n) { memcpy(d, s, n); }
__attribute__((noinline)) static int rt_is_present(const void *p) { return lookup(p, 1) != NULL; }

static void m_region_nomap(long n) {
  for (long i = 0; i < n; i++) rt_region_nomap();
}
static void m_region_tofrom(long n) {
  for (long i = 0; i < n; i++) rt_region_tofrom(&tofrom_count);
}
static void m_region_present8(long n) {
  for (long i = 0; i < n; i++) rt_region_present8();
}
static void m_enter_exit(long n) {
  for (long i = 0; i < n; i++) {
    rt_enter(eb, sizeof eb);
    rt_exit(eb, sizeof eb);
  }
}
static void m_update8(long n) {
  for (long i = 0; i < n; i++) rt_update(&v, sizeof v);
}
static void m_alloc_free(long n) {
  for (long i = 0; i < n; i++) {
    void *p = rt_alloc(64);
    if (!p) BENCH_FAIL("malloc failed");
    rt_free(p);
  }
}
static char dbuf[8];
static void m_memcpy8(long n) {
  for (long i = 0; i < n; i++) rt_memcpy(dbuf, &v, 8);
}
static long long present_sum;
static void m_is_present(long n) {
  for (long i = 0; i < n; i++) present_sum += rt_is_present(&v);
}
static void m_is_present_miss(long n) {
  for (long i = 0; i < n; i++) present_sum += rt_is_present(&unmapped);
}

struct metric {
  const char *name;
  void (*fn)(long);
};

static const struct metric metrics[] = {
    {"lat_region_nomap", m_region_nomap},
    {"lat_region_tofrom", m_region_tofrom},
    {"lat_region_present8", m_region_present8},
    {"lat_enter_exit", m_enter_exit},
    {"lat_update8", m_update8},
    {"lat_alloc_free", m_alloc_free},
    {"lat_memcpy8", m_memcpy8},
    {"lat_is_present", m_is_present},
    {"lat_is_present_miss", m_is_present_miss},
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "cg") != 0) BENCH_FAIL("usage: floor cg <n1> <n2>");
  long n1 = bench_arg_long(argc, argv, 2, 100);
  long n2 = bench_arg_long(argc, argv, 3, 1100);
  if (n1 < 1 || n2 <= n1) BENCH_FAIL("bad arguments");
  /* The mappings lat.c has while it measures: v, eb and the 8 arrays. */
  insert(&v, sizeof v, malloc(sizeof v));
  insert(eb, sizeof eb, malloc(sizeof eb));
  for (int i = 0; i < 8; i++) insert(arrays[i], sizeof a0, malloc(sizeof a0));
  char label[128];
  for (size_t m = 0; m < NMETRICS; m++) {
    metrics[m].fn(10);
    CALLGRIND_ZERO_STATS;
    metrics[m].fn(n1);
    snprintf(label, sizeof label, "%s/%ld", metrics[m].name, n1);
    CALLGRIND_DUMP_STATS_AT(label);
    metrics[m].fn(n2);
    snprintf(label, sizeof label, "%s/%ld", metrics[m].name, n2);
    CALLGRIND_DUMP_STATS_AT(label);
  }
  long long total = 10 + n1 + n2;
  if (tofrom_count != total) BENCH_FAIL("tofrom: %lld, expected %lld", tofrom_count, total);
  if (present_sum != total) BENCH_FAIL("is_present: %lld, expected %lld", present_sum, total);
  return 0;
}
