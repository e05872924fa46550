// Struct members: map(s.x), map(s.p[0:n]), partial structs, nested members.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct Inner {
  int u, v;
};
struct S {
  int x;
  double y;
  int *p;
  int n;
  struct Inner in;
  int tail[4];
};

int main(void) {
  int n = 10;
  struct S s;
  s.x = 1;
  s.y = 2.0;
  s.n = n;
  s.p = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    s.p[i] = i;
  s.in.u = 5;
  s.in.v = 6;
  for (int i = 0; i < 4; i++)
    s.tail[i] = 100 + i;

  int on_host = -1;
#pragma omp target map(tofrom : s.x, s.p[0:n]) map(from : on_host)
  {
    s.x += 41;
    for (int i = 0; i < n; i++)
      s.p[i] *= 3;
    on_host = omp_is_initial_device();
  }
  printf("s.x=%d s.p[9]=%d on_host=%d (pointer intact: %d)\n", s.x, s.p[9], on_host, s.p != NULL);

  // only some members; others keep host values
#pragma omp target map(tofrom : s.in.v, s.tail[1:2])
  {
    s.in.v = 60;
    s.tail[1] = -1;
    s.tail[2] = -2;
  }
  printf("s.in.u=%d s.in.v=%d tail=%d,%d,%d,%d\n", s.in.u, s.in.v, s.tail[0], s.tail[1], s.tail[2], s.tail[3]);

  // whole struct plus pointee
#pragma omp target map(tofrom : s) map(tofrom : s.p[0:n])
  {
    s.y *= 10;
    s.p[0] = 1234;
    s.n = 99;
  }
  printf("whole: s.y=%.1f s.p[0]=%d s.n=%d\n", s.y, s.p[0], s.n);

  // pointer to struct with member sections
  struct S *ps = &s;
#pragma omp target map(tofrom : ps->x, ps->p, ps->p[2:3])
  {
    ps->x = 7;
    ps->p[2] = -20;
    ps->p[4] = -40;
  }
  printf("ps: x=%d p[2]=%d p[3]=%d p[4]=%d\n", s.x, s.p[2], s.p[3], s.p[4]);

  // enter data of members, then a region that uses them
#pragma omp target enter data map(to : s.x, s.y)
  s.x = 0;
  int got = -1;
#pragma omp target map(from : got) map(tofrom : s.x)
  { got = s.x; }
  printf("member mapping persists: device s.x=%d\n", got);
#pragma omp target exit data map(release : s.x, s.y)
  printf("present after release: %d\n", omp_target_is_present(&s.x, omp_get_default_device()));
  free(s.p);
  return 0;
}
