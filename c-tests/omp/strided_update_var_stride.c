// Recorded only: a target update with a *variable* stride.
// OpenMP 5.2 §13.9 requires from(a[1:4:s]) with s == 3 to move elements
// 1, 4, 7, 10, and from(m[1:2:s][0:4]) rows 1 and 3. clang 22 drops a
// variable stride: it emits an ordinary contiguous entry (a[1:4] = 16 bytes,
// m[1:2] = rows 1-2, no NON_CONTIG bit, no descriptors), so no runtime can
// see the stride; LLVM 22.1 and omptarget-rs both move the contiguous range
// (the expected output records it; the printout shows the spec elements).
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argv;
  int s = argc + 2; // 3, unknown to the compiler
  int t = argc + 1; // 2
  int a[16];
  int m[6][4];
  for (int i = 0; i < 16; i++)
    a[i] = i;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 4; j++)
      m[i][j] = 10 * i + j;
#pragma omp target enter data map(to : a, m)
#pragma omp target
  {
    for (int i = 0; i < 16; i++)
      a[i] = -a[i] - 100;
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 4; j++)
        m[i][j] = -m[i][j] - 100;
  }
#pragma omp target update from(a[1:4:s])
  printf("from(a[1:4:s]), s=%d (spec: 1,4,7,10 negative):", s);
  for (int i = 0; i < 16; i++)
    printf(" %d", a[i]);
  printf("\n");
#pragma omp target update from(m[1:2:t][0:4])
  printf("from(m[1:2:t][0:4]), t=%d (spec: rows 1 and 3 negative):\n", t);
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 4; j++)
      printf("%5d", m[i][j]);
    printf("\n");
  }
#pragma omp target exit data map(delete : a, m)
  return 0;
}
