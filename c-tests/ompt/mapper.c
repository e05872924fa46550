// A declare mapper: one struct whose mapper maps a pointed-to array.
#include <stdio.h>
typedef struct { int n; int *p; } vec;
#pragma omp declare mapper(vec v) map(v, v.p[0:v.n])
int main(void) {
  int data[10];
  for (int i = 0; i < 10; i++) data[i] = i;
  vec v = {10, data};
#pragma omp target map(tofrom : v)
  for (int i = 0; i < v.n; i++) v.p[i] *= 3;
  printf("data[9]=%d\n", data[9]);
  return 0;
}
