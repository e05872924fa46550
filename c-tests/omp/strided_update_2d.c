// Non-contiguous target update of a 2-D sub-array, m[1:2][1:3].
// Note: LLVM 22.1 transfers only the first element of each row here (its
// dimension merging computes the chunk size from the element descriptor,
// abi-reference section 6.10); the .expected file records that behaviour.
#include <omp.h>
#include <stdio.h>

static void show(int m[4][6]) {
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 6; j++)
      printf("%4d", m[i][j]);
    printf("\n");
  }
}

int main(void) {
  int m[4][6];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++)
      m[i][j] = i * 10 + j;
#pragma omp target enter data map(to : m)
#pragma omp target
  {
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 6; j++)
        m[i][j] = -m[i][j];
  }
#pragma omp target update from(m[1:2][1:3])
  show(m);
  // whole rows: contiguous after merging
#pragma omp target update from(m[3:1][0:6])
  show(m);
#pragma omp target exit data map(delete : m)
  return 0;
}
