// NON_CONTIG target update of 2-D sections whose innermost
// dimension is strided and starts at a non-zero lower bound. OpenMP 5.2
// §13.9 (target update) requires exactly the section's elements:
// from(m[0:2][1:3:2]) is columns 1, 3, 5 of rows 0-1, to(m[1:2][2:2:3]) is
// columns 2, 5 of rows 1-2. clang 22 describes the inner dimension as
// {Offset = lower bound in elements, Count, Stride = stride * element size};
// LLVM 22.1 computes (Offset + i) * Stride (columns 2, 4, 6 resp. 6, 9);
// omptarget-rs counts the lower bound in elements, the element size taken
// from the trailing element descriptor {0, 1, size} (.divergence, .ours).
#include <omp.h>
#include <stdio.h>

static void show(const char *what, int m[3][10]) {
  printf("%s\n", what);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 10; j++)
      printf("%5d", m[i][j]);
    printf("\n");
  }
}

int main(void) {
  int m[3][10];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 10; j++)
      m[i][j] = 10 * i + j;
#pragma omp target enter data map(to : m)
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 10; j++)
        m[i][j] = -m[i][j] - 100;
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d\n", on_host);
#pragma omp target update from(m[0:2][1:3:2])
  show("from(m[0:2][1:3:2]) (spec: rows 0-1, columns 1, 3, 5 negative):", m);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 10; j++)
      m[i][j] = 1000 + 10 * i + j;
#pragma omp target update to(m[1:2][2:2:3])
#pragma omp target exit data map(from : m)
  show("to(m[1:2][2:2:3]), then from(m) (spec: positives only at rows 1-2, columns 2, 5):", m);
  return 0;
}
