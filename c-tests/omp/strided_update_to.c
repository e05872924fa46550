// NON_CONTIG target update with strides (abi-reference 6.10), all sections
// starting at offset 0 in their strided dimension (non-zero offsets:
// strided_update_offset.c): 1-D to(a[0:5:2]) and from(a[0:4:3]), 2-D with a
// stride in the outer dimension (m[0:3:2][0:6], whole rows) and in the inner
// dimension (m[1:2][0:3:2]), and from(d[0:3:4]) of doubles. The device and
// host copies are printed whole, so the spec-required result -- exactly the
// section's elements move -- is visible element by element: device rows 0, 2
// and 4 of m must be 0..5, 20..25, 40..45 and rows 1-2 must have columns 0, 2
// and 4 set. LLVM 22.1 moves only the first element of each row of both 2-D
// sections (see strided_update_2d.c); the 1-D sections are right.
#include <omp.h>
#include <stdio.h>

static void show_a(const char *what, int *a) {
  printf("%-28s", what);
  for (int i = 0; i < 16; i++)
    printf(" %d", a[i]);
  printf("\n");
}

static void show_m(const char *what, int m[5][6]) {
  printf("%s\n", what);
  for (int i = 0; i < 5; i++) {
    for (int j = 0; j < 6; j++)
      printf("%4d", m[i][j]);
    printf("\n");
  }
}

int main(void) {
  int a[16];
  for (int i = 0; i < 16; i++)
    a[i] = 0;
#pragma omp target enter data map(to : a)
  for (int i = 0; i < 16; i++)
    a[i] = i + 1;
#pragma omp target update to(a[0:5:2]) // elements 0,2,4,6,8
  int dcopy[16];
  int on_host = -1;
#pragma omp target map(from : dcopy, on_host)
  {
    for (int i = 0; i < 16; i++)
      dcopy[i] = a[i];
    for (int i = 0; i < 16; i++)
      a[i] = -(i + 1);
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d\n", on_host);
  show_a("device after to(a[0:5:2]):", dcopy);
#pragma omp target update from(a[0:4:3]) // elements 0,3,6,9
  show_a("host after from(a[0:4:3]):", a);
#pragma omp target exit data map(delete : a)

  int m[5][6];
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 6; j++)
      m[i][j] = 0;
#pragma omp target enter data map(to : m)
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 6; j++)
      m[i][j] = 10 * i + j;
#pragma omp target update to(m[0:3:2][0:6]) // rows 0, 2, 4
#pragma omp target update to(m[1:2][0:3:2]) // rows 1-2, columns 0, 2, 4
  int md[5][6];
#pragma omp target map(from : md)
  {
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 6; j++)
        md[i][j] = m[i][j];
  }
  show_m("device after to(m[0:3:2][0:6]) and to(m[1:2][0:3:2]):", md);
#pragma omp target exit data map(delete : m)

  double d[16];
  for (int i = 0; i < 16; i++)
    d[i] = 0.5 * i;
#pragma omp target enter data map(to : d)
#pragma omp target
  {
    for (int i = 0; i < 16; i++)
      d[i] = -d[i];
  }
#pragma omp target update from(d[0:3:4]) // 0, 4, 8
  printf("doubles after from(d[0:3:4]):");
  for (int i = 0; i < 16; i++)
    printf(" %.1f", d[i]);
  printf("\n");
#pragma omp target exit data map(delete : d)
  return 0;
}
