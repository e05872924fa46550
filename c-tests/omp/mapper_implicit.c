// The default mapper used implicitly (abi-reference 6.12): a struct with a
// declare mapper(default) that is used in a target region without a map
// clause is mapped tofrom through its mapper (so its pointee is mapped and
// attached); a pointer to such a struct mapped as p[0:1]; the mapper applies
// to a struct member that is a struct with a mapper too; defaultmap(to:
// aggregate) changes the map type given to the mapper (no copy back).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  float *v;
} Vec;
#pragma omp declare mapper(Vec x) map(x, x.v[0:x.n])

int main(void) {
  int dev = omp_get_default_device();
  Vec a;
  a.n = 5;
  a.v = malloc(5 * sizeof(float));
  for (int i = 0; i < 5; i++)
    a.v[i] = i;
  float *orig = a.v;
  int on_host = -1;
#pragma omp target map(from : on_host) // a: implicit tofrom through the default mapper
  {
    for (int i = 0; i < a.n; i++)
      a.v[i] += 0.5f;
    a.n = 4;
    on_host = omp_is_initial_device();
  }
  printf("implicit mapper: n=%d v={%.1f,%.1f,%.1f,%.1f,%.1f} pointer intact=%d on_host=%d\n", a.n, a.v[0], a.v[1],
         a.v[2], a.v[3], a.v[4], a.v == orig, on_host);
  printf("present after: %d\n", omp_target_is_present(orig, dev));

  // pointer to the struct
  Vec *pa = &a;
  a.n = 5;
#pragma omp target map(tofrom : pa[0:1])
  {
    pa->v[4] = 44;
  }
  printf("through pointer: v[4]=%.1f\n", a.v[4]);

  // defaultmap(to: aggregate): implicit map type 'to' passed to the mapper
#pragma omp target defaultmap(to : aggregate)
  {
    a.v[0] = -1;
    a.n = 0;
  }
  printf("defaultmap(to: aggregate): n=%d v[0]=%.1f\n", a.n, a.v[0]);

  // a struct already mapped with enter data: the implicit mapper finds it
#pragma omp target enter data map(to : a)
  a.v[1] = 100; // host only
  float seen = 0;
#pragma omp target map(from : seen)
  { seen = a.v[1]; }
  printf("already mapped: device v[1]=%.1f\n", seen);
#pragma omp target exit data map(delete : a)
  printf("present after delete: %d %d\n", omp_target_is_present(&a, dev), omp_target_is_present(orig, dev));
  free(orig);
  return 0;
}
