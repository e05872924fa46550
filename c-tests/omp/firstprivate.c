// firstprivate scalars, structs and arrays; implicit firstprivate of scalars.
#include <omp.h>
#include <stdio.h>
#include <string.h>

struct S {
  int a;
  double b;
  char name[12];
  long arr[4];
};

struct Big {
  int v[600]; // > 1024 bytes: not packed by LLVM's private-argument manager
};

int main(void) {
  int i = 3;
  double d = 2.5;
  char c = 'x';
  short sh = -4;
  struct S s = {1, 0.25, "struct", {10, 20, 30, 40}};
  static struct Big big;
  for (int k = 0; k < 600; k++)
    big.v[k] = k;
  int out[8];
  int on_host = -1;
#pragma omp target firstprivate(i, d, c, sh, s, big) map(from : out, on_host)
  {
    out[0] = i * 10;
    out[1] = (int)(d * 4);
    out[2] = c;
    out[3] = sh;
    out[4] = s.a + (int)(s.b * 4) + (int)s.arr[3];
    out[5] = (int)strlen(s.name);
    long t = 0;
    for (int k = 0; k < 600; k++)
      t += big.v[k];
    out[6] = (int)t;
    // modify the private copies: must not be visible on the host
    i = -1;
    d = -1;
    s.a = -1;
    s.arr[0] = -1;
    big.v[0] = -1;
    out[7] = i + s.a;
    on_host = omp_is_initial_device();
  }
  printf("out: %d %d %d %d %d %d %d %d on_host=%d\n", out[0], out[1], out[2], out[3], out[4], out[5], out[6],
         out[7], on_host);
  printf("host after: i=%d d=%.2f s.a=%d s.arr[0]=%ld big.v[0]=%d\n", i, d, s.a, s.arr[0], big.v[0]);

  // implicit firstprivate scalar (no clause)
  int n = 11, r = 0;
#pragma omp target map(from : r)
  { r = n * 2; n = 0; }
  printf("implicit: r=%d n=%d\n", r, n);

  // many small firstprivates of mixed alignment
  char c1 = 1;
  double d1 = 2;
  char c2 = 3;
  long l1 = 4;
  float f1 = 5;
  struct { char x; short y; } tiny = {6, 7};
  double sum = 0;
#pragma omp target firstprivate(c1, d1, c2, l1, f1, tiny) map(from : sum)
  { sum = c1 + d1 + c2 + l1 + f1 + tiny.x + tiny.y; }
  printf("mixed: sum=%.1f\n", sum);
  return 0;
}
