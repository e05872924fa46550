// A user-defined mapper whose component cannot be mapped (it extends an
// existing mapping) makes the enter-data construct fail. 22.1's report for
// the mapper step reads "Call to targetDataBegin via targetDataMapper for
// custom mapper failed" with no full stop (its End/Update texts have one);
// the regex pins the whole line.
#include <stdio.h>

typedef struct {
  int n;
  int *buf;
} Vec;

#pragma omp declare mapper(Vec v) map(v.n, v.buf[0 : 8])

int main(void) {
  int storage[8] = {0};
  Vec v = {8, storage};
  // Map only the first half first: the mapper's buf[0:8] then extends it.
#pragma omp target enter data map(to : storage[0 : 4])
  printf("before the mapper\n");
  fflush(stdout);
#pragma omp target enter data map(to : v)
  printf("not reached\n");
  return 0;
}
