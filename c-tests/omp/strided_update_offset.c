// NON_CONTIG target update of strided sections that start at a non-zero
// offset in the strided dimension (abi-reference 6.10). clang 22 describes
// a[1:4:3] as {Offset 1, Count 4, Stride 12 bytes} + {0, 1, 4}; LLVM 22.1
// computes byte offsets as (Offset + idx) * Stride, which puts the section at
// elements 3, 6, 9, 12 instead of 1, 4, 7, 10 (OpenMP 5.2 §13.9: the
// section's elements are base + 1 + 3*idx); the expected output records it.
// omptarget-rs counts the innermost dimension's offset in
// elements (the element size is the trailing descriptor's stride) and moves
// exactly the section (.divergence, .ours). The host arrays are larger than
// the sections so LLVM's over-reach stays inside them; the printed arrays
// make the spec-correct elements obvious (device values are negative).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[16];
  for (int i = 0; i < 16; i++)
    a[i] = i;
#pragma omp target enter data map(to : a)
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    for (int i = 0; i < 16; i++)
      a[i] = -a[i] - 100;
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d\n", on_host);
#pragma omp target update from(a[1:4:3])
  printf("from(a[1:4:3]) (spec: 1,4,7,10 negative):");
  for (int i = 0; i < 16; i++)
    printf(" %d", a[i]);
  printf("\n");
  for (int i = 0; i < 16; i++)
    a[i] = i;
#pragma omp target update from(a[2:2:5])
  printf("from(a[2:2:5]) (spec: 2,7 negative):");
  for (int i = 0; i < 16; i++)
    printf(" %d", a[i]);
  printf("\n");
#pragma omp target exit data map(delete : a)

  return 0;
}
