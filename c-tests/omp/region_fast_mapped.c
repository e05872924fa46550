// Target regions in the forms the mapped launch fast path of
// src/api/kernel.rs (`launch_fast_mapped`) takes, and the ones it serves
// with the general steps or hands to the general path: plain to/from/
// tofrom/alloc parameters already mapped (a reference taken and given back,
// nothing copied), mixed with firstprivate scalars and with items not mapped
// yet (the general begin and end steps for those alone: allocation, copy in,
// copy back, removal), 15 arguments (16 kernel parameters, the most the
// fast path passes) and 16 (the general path), always, present, a partial
// overlap inside a mapping, a declare-target global (infinite count), a
// struct whose pointer member is attached, nowait, INFO switched on and off
// between regions, and the last reference given back by a region (copy
// back and removal); region_fast_mapped_race.c has threads bringing a
// count to zero while other threads' regions hold it. Each step prints what
// the device and host copies hold and whether the data is still mapped.
#include <omp.h>
#include <stdio.h>

#define N 8
void __tgt_set_info_flag(unsigned);

int g[N];
#pragma omp declare target(g)

struct S {
  int *p;
  int v;
};

static int a[N], b[N], c[N];

static void show(const char *what, int *x) {
  int d = omp_get_default_device();
  printf("%-34s host", what);
  for (int i = 0; i < 4; i++)
    printf(" %d", x[i]);
  printf("  mapped %d\n", omp_target_is_present(x, d));
}

static int dev_peek(int *x) {
  int v = -1;
#pragma omp target map(from : v)
  v = x[0];
  return v;
}

static void all15(long s, int *p0, int *p1, int *p2, int *p3, int *p4, int *p5, int *p6) {
  long t1 = s + 1, t2 = s + 2, t3 = s + 3, t4 = s + 4, t5 = s + 5, t6 = s + 6, t7 = s + 7;
#pragma omp target map(tofrom : p0[0:N], p1[0:N], p2[0:N], p3[0:N], p4[0:N], p5[0:N], p6[0:N]) \
    firstprivate(s, t1, t2, t3, t4, t5, t6, t7)
  {
    p0[0] += (int)s;
    p1[0] += (int)t1;
    p2[0] += (int)t2;
    p3[0] += (int)t3;
    p4[0] += (int)t4;
    p5[0] += (int)t5;
    p6[0] += (int)(t6 + t7);
  }
}

static void all16(long s, int *p0, int *p1, int *p2, int *p3, int *p4, int *p5, int *p6, int *p7) {
  long t1 = s + 1, t2 = s + 2, t3 = s + 3, t4 = s + 4, t5 = s + 5, t6 = s + 6, t7 = s + 7;
#pragma omp target map(tofrom : p0[0:N], p1[0:N], p2[0:N], p3[0:N], p4[0:N], p5[0:N], p6[0:N], \
                           p7[0:N]) firstprivate(s, t1, t2, t3, t4, t5, t6, t7)
  {
    p0[0] += (int)s;
    p1[0] += (int)t1;
    p2[0] += (int)t2;
    p3[0] += (int)t3;
    p4[0] += (int)t4;
    p5[0] += (int)t5;
    p6[0] += (int)t6;
    p7[0] += (int)t7;
  }
}

int main(void) {
  for (int i = 0; i < N; i++)
    a[i] = b[i] = c[i] = i;

  // Present tofrom/to/from/alloc items: references only, nothing copied.
#pragma omp target enter data map(to : a, b, c)
  for (int i = 0; i < N; i++)
    a[i] = b[i] = c[i] = 100 + i; // host changes the device must not see
#pragma omp target map(tofrom : a) map(to : b) map(from : c)
  {
    a[0] = a[1] + 1000;
    b[0] = b[1] + 2000;
    c[0] = c[1] + 3000;
  }
  show("present: no copies", a);
  show("present: no copies (b)", b);
  show("present: no copies (c)", c);
#pragma omp target map(alloc : a[0:N])
  a[2] = 7;
  printf("device a[0] %d a[2] %d b[0] %d c[0] %d\n", dev_peek(a), dev_peek(a + 2), dev_peek(b),
         dev_peek(c));

  // A firstprivate scalar, a present array and an item not mapped yet: the
  // new one is copied in, back, and removed; the present one is not copied.
  int x = 5;
  long k = 40;
#pragma omp target map(tofrom : x, a) firstprivate(k)
  {
    x += (int)k + a[0];
    a[3] = x;
  }
  printf("new item: x %d, x mapped %d\n", x, omp_target_is_present(&x, omp_get_default_device()));
  show("present with a new item", a);

  // always and present modifiers: the general path.
#pragma omp target map(always, tofrom : b)
  b[4] = b[0] + 1;
  show("always tofrom", b);
#pragma omp target map(present, tofrom : c)
  c[4] = c[0] + 2;
  show("present modifier", c);

  // A section inside a mapping, and a declare-target global.
#pragma omp target map(tofrom : a[2:3])
  a[3] += 1;
  show("section inside", a);
  for (int i = 0; i < N; i++)
    g[i] = i;
#pragma omp target update to(g)
#pragma omp target map(tofrom : g)
  g[0] += 50;
#pragma omp target update from(g)
  show("declare target global", g);

  // A struct whose pointer member is attached: the general path.
  struct S s = {b, 3};
#pragma omp target enter data map(to : s, s.p[0:N])
#pragma omp target map(tofrom : s)
  s.p[5] = s.v * 11;
#pragma omp target exit data map(release : s, s.p[0:N])
  printf("attached member: device b[5] %d\n", dev_peek(b + 5));

  // 15 and 16 arguments.
#pragma omp target enter data map(to : x)
  all15(1, a, b, c, a, b, c, a);
  all16(1, a, b, c, a, b, c, a, b);
  printf("15/16 args: device a[0] %d b[0] %d c[0] %d\n", dev_peek(a), dev_peek(b), dev_peek(c));
#pragma omp target exit data map(delete : x)

  // nowait regions on present data, and INFO on and off between regions.
  for (int r = 0; r < 4; r++) {
#pragma omp target map(tofrom : a) nowait
    a[6] += 1;
  }
#pragma omp taskwait
  __tgt_set_info_flag(0x1);
#pragma omp target map(tofrom : a)
  a[6] += 10;
  __tgt_set_info_flag(0);
#pragma omp target map(tofrom : a)
  a[6] += 100;
  printf("nowait and INFO: device a[6] %d\n", dev_peek(a + 6));

  // The last reference given back by a region: the copy back and removal
  // happen at the region's end.
#pragma omp target exit data map(release : a)
  // a's count is 0 now only if nothing else holds it: it does not exist.
  show("a released (not mapped)", a);
#pragma omp target exit data map(from : b, c)
  show("b copied back", b);
  show("c copied back", c);

  return 0;
}
