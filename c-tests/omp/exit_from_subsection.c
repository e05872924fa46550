// exit data map(from: a[i:n]) on a larger mapping (abi-reference 6.4, 6.9):
// the sub-section is found inside the a[0:16] entry; when it drops the last
// reference, only the sub-section's bytes are copied back (the rest of the
// host array keeps its host values), and the whole entry is removed. With
// more references: no copy (unless always; exit data with always still
// decrements). update from of a sub-section.
#include <omp.h>
#include <stdio.h>

static void show(const char *what, int *a) {
  printf("%-27s", what);
  for (int i = 0; i < 16; i++)
    printf(" %d", a[i]);
  printf("\n");
}

int main(void) {
  int dev = omp_get_default_device();
  int a[16];
  for (int i = 0; i < 16; i++)
    a[i] = i;
#pragma omp target enter data map(to : a[0:16])
#pragma omp target
  {
    for (int i = 0; i < 16; i++)
      a[i] = 100 + i;
  }
#pragma omp target enter data map(to : a[4:4]) // refcount 2
#pragma omp target enter data map(to : a[8:4]) // refcount 3
#pragma omp target exit data map(from : a[2:3])
  show("from a[2:3], 3 refs:", a);
#pragma omp target exit data map(always, from : a[10:2])
  show("always from a[10:2], 2:", a);
#pragma omp target update from(a[14:1])
  show("update from a[14:1]:", a);
#pragma omp target exit data map(from : a[5:2])
  show("from a[5:2], last:", a);
  printf("present after: %d %d\n", omp_target_is_present(&a[0], dev), omp_target_is_present(&a[15], dev));

  // pointer-based sub-section of a section mapped through another pointer
  int *p = a, *q = a + 8;
  for (int i = 0; i < 16; i++)
    a[i] = -i;
#pragma omp target enter data map(to : p[0:16])
#pragma omp target map(alloc : p[0:16])
  {
    for (int i = 0; i < 16; i++)
      p[i] = 1000 + i;
  }
#pragma omp target exit data map(from : q[1:2])
  show("from q[1:2] (= a[9:2]):", a);
  printf("present after: %d\n", omp_target_is_present(a, dev));
  return 0;
}
