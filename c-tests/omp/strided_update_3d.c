// NON_CONTIG target update of 3-D sub-volumes (abi-reference 6.10):
// from(c[1:2][0:2][1:3]), to(c[0:3:2][1:1][0:4:2]) and from(c[0:2][1:2][0:5])
// (the last one merges the two inner dimensions into contiguous rows).
// The device holds -(value) for every element; the program prints the whole
// host array after each update, so the spec-required result (OpenMP 5.2
// target update: exactly the elements of the array section are transferred)
// is easy to read: negative numbers appear at exactly the section's elements.
#include <omp.h>
#include <stdio.h>

#define X 3
#define Y 3
#define Z 5
static int c[X][Y][Z];

static void show(const char *what) {
  printf("%s\n", what);
  for (int i = 0; i < X; i++) {
    for (int j = 0; j < Y; j++) {
      printf("  ");
      for (int k = 0; k < Z; k++)
        printf("%6d", c[i][j][k]);
      printf("\n");
    }
    printf("\n");
  }
}

static void reset_host(void) {
  for (int i = 0; i < X; i++)
    for (int j = 0; j < Y; j++)
      for (int k = 0; k < Z; k++)
        c[i][j][k] = 100 * i + 10 * j + k;
}

int main(void) {
  reset_host();
#pragma omp target enter data map(to : c)
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    for (int i = 0; i < X; i++)
      for (int j = 0; j < Y; j++)
        for (int k = 0; k < Z; k++)
          c[i][j][k] = -c[i][j][k] - 1000;
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d\n", on_host);
#pragma omp target update from(c[1:2][0:2][1:3])
  show("from(c[1:2][0:2][1:3]): expect negatives at i=1..2, j=0..1, k=1..3");

  reset_host();
#pragma omp target update from(c[0:2][1:2][0:5])
  show("from(c[0:2][1:2][0:5]): expect negatives at i=0..1, j=1..2, all k");

  // strided update to: host values pushed to c[0:2:2][1][0:3:2] only
  reset_host();
#pragma omp target update to(c[0:2:2][1:1][0:3:2])
#pragma omp target update from(c)
  show("to(c[0:2:2][1:1][0:3:2]) then from(c): expect positives at i=0,2, j=1, k=0,2,4");
#pragma omp target exit data map(delete : c)
  return 0;
}
