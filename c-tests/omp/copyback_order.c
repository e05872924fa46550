// Several list items on the same storage in one construct (abi-reference 6.6,
// 6.9): entries are processed in order at region entry (the first creates the
// mapping, later contained ones only add references) and in reverse order at
// exit, where only the item that drops the last reference copies back (with
// its own size and FROM bit), unless 'always'. So map(to: a[0:8]) map(from:
// p[2:2]) copies nothing back (the 'from' item is not last), while map(from:
// a[0:8]) map(to: p[2:2]) copies all of a; map(from: a[0:4], a[1:2])
// (contained second item). A struct mapped together with one of its members:
// clang splits the struct's entry around the member (the member keeps only its
// own map type), so map(tofrom: s) map(to: s.y) does not copy s.y back.
#include <omp.h>
#include <stdio.h>

struct S {
  int x, y, z;
};

static void show(const char *what, int *a) {
  printf("%-34s", what);
  for (int i = 0; i < 8; i++)
    printf(" %d", a[i]);
  printf("\n");
}

static void reset(int *a) {
  for (int i = 0; i < 8; i++)
    a[i] = i;
}

int main(void) {
  int dev = omp_get_default_device();
  int a[8];
  int *p = a;
  int on_host = -1;

  reset(a);
#pragma omp target map(to : a[0:8]) map(from : p[2:2]) map(from : on_host)
  {
    for (int i = 0; i < 8; i++)
      a[i] = 10 + i;
    on_host = omp_is_initial_device();
  }
  show("to a[0:8], from p[2:2]:", a);
  printf("on_host=%d\n", on_host);

  reset(a);
#pragma omp target map(from : a[0:8]) map(to : p[2:2])
  {
    for (int i = 0; i < 8; i++)
      a[i] = 20 + i; // 'from': the device copy is not initialised
  }
  show("from a[0:8], to p[2:2]:", a);

  reset(a);
#pragma omp target map(to : a[0:8]) map(always, from : p[2:2])
  {
    for (int i = 0; i < 8; i++)
      a[i] = 30 + i;
  }
  show("to a[0:8], always from p[2:2]:", a);

  reset(a);
#pragma omp target map(tofrom : a[0:8]) map(always, from : p[6:2])
  {
    for (int i = 0; i < 8; i++)
      a[i] = 40 + i;
  }
  show("tofrom a[0:8], always from p[6:2]:", a);

  reset(a);
#pragma omp target map(from : a[0:4], a[1:2])
  {
    for (int i = 0; i < 4; i++)
      a[i] = 50 + i;
  }
  show("from a[0:4], a[1:2]:", a);

  // struct and one of its members
  struct S s = {1, 2, 3};
#pragma omp target map(to : s) map(from : s.y)
  {
    s.x = 10;
    s.y = 20;
    s.z = 30;
  }
  printf("to s, from s.y: %d %d %d\n", s.x, s.y, s.z);
  s.x = 1, s.y = 2, s.z = 3;
#pragma omp target map(tofrom : s) map(to : s.y)
  {
    s.x = 10;
    s.y = 20;
    s.z = 30;
  }
  printf("tofrom s, to s.y: %d %d %d present=%d\n", s.x, s.y, s.z, omp_target_is_present(&s, dev));
  return 0;
}
