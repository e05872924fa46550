// NON_CONTIG target update of a 2-D section whose strided outer dimension
// starts at an offset: from(m[1:2:2][0:4]) must copy rows 1 and 3 (OpenMP 5.2
// target update). clang 22 emits {Offset 1, Count 2, Stride 32} {0, 4, 4}
// {0, 1, 4}; with the runtime's (Offset + idx) * Stride (abi-reference 6.10)
// rows 2 and 4 are copied instead (see strided_update_offset.c). On top of
// that LLVM 22.1 copies only the first element of each of those rows (the
// chunk-size bug of strided_update_2d.c), while omptarget-rs copies whole
// rows 2 and 4: the .divergence file records the difference; neither runtime
// gives the spec result (rows 1 and 3), which the printout makes obvious.
#include <omp.h>
#include <stdio.h>

int main(void) {
  // outer strided dimension with an offset: rows 1 and 3 (spec)
  int m[6][4];
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 4; j++)
      m[i][j] = 10 * i + j;
#pragma omp target enter data map(to : m)
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    for (int i = 0; i < 6; i++)
      for (int j = 0; j < 4; j++)
        m[i][j] = -m[i][j] - 100;
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d\n", on_host);
#pragma omp target update from(m[1:2:2][0:4])
  printf("from(m[1:2:2][0:4]) (spec: rows 1 and 3 negative):\n");
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 4; j++)
      printf("%5d", m[i][j]);
    printf("\n");
  }
#pragma omp target exit data map(delete : m)
  return 0;
}
