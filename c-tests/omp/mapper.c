// declare mapper: user-defined mappers for structs with pointer members.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int len;
  double *vals;
} Vec;

#pragma omp declare mapper(Vec v) map(v, v.vals[0:v.len])
#pragma omp declare mapper(only_len : Vec v) map(v.len)

int main(void) {
  Vec v;
  v.len = 6;
  v.vals = malloc(v.len * sizeof(double));
  for (int i = 0; i < v.len; i++)
    v.vals[i] = i;
  double *orig = v.vals;
  int on_host = -1;
#pragma omp target map(tofrom : v, on_host)
  {
    for (int i = 0; i < v.len; i++)
      v.vals[i] *= 1.5;
    on_host = omp_is_initial_device();
  }
  printf("default mapper: vals[5]=%.2f pointer intact=%d on_host=%d\n", v.vals[5], v.vals == orig, on_host);

  // array of structs through the mapper
  Vec arr[3];
  for (int k = 0; k < 3; k++) {
    arr[k].len = 4;
    arr[k].vals = malloc(4 * sizeof(double));
    for (int i = 0; i < 4; i++)
      arr[k].vals[i] = k;
  }
#pragma omp target map(tofrom : arr[0:3])
  {
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < arr[k].len; i++)
        arr[k].vals[i] += 10;
  }
  printf("array of structs: %.0f %.0f %.0f\n", arr[0].vals[3], arr[1].vals[0], arr[2].vals[2]);

  // enter/update/exit with the mapper
#pragma omp target enter data map(to : v)
  v.vals[0] = -5; // host only
#pragma omp target update to(v)
  double first = 0;
#pragma omp target map(from : first)
  { first = v.vals[0]; }
  printf("after update to: device vals[0]=%.1f\n", first);
#pragma omp target exit data map(from : v)

  // named mapper that maps only len
  int len_seen = 0;
  v.len = 99;
#pragma omp target map(mapper(only_len), to : v) map(from : len_seen)
  { len_seen = v.len; }
  printf("named mapper: len=%d\n", len_seen);
  for (int k = 0; k < 3; k++)
    free(arr[k].vals);
  free(v.vals);
  return 0;
}
