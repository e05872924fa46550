// LIBOMPTARGET_INFO "Mapping exists" lines around pointer attachment
// (.stderr-same against 22.1, addresses masked): for a pointer member
// (map(to: v, v.p[0:3])) and a local pointer (map(q[0:4])), 22.1 prints one
// line for the pointee lookup and one for the pointer lookup of the
// attachment, and nothing else. omptarget-rs's own check for a pointee the
// region cannot reach (nested_ptr_member_unmappable) looked both up again
// with those lines printed.
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int n;
  double *p;
} Vec;

int main(void) {
  Vec v;
  v.n = 3;
  v.p = malloc(3 * sizeof(double));
  for (int i = 0; i < 3; i++)
    v.p[i] = i + 0.5;
  double total = 0;
#pragma omp target map(to : v, v.p[0 : 3]) map(tofrom : total)
  for (int i = 0; i < v.n; i++)
    total += v.p[i];
  printf("member pointee total %.1f\n", total);

  int *q = malloc(4 * sizeof(int));
  for (int i = 0; i < 4; i++)
    q[i] = 10 * i;
#pragma omp target map(tofrom : q[0 : 4])
  for (int i = 0; i < 4; i++)
    q[i] += 1;
  printf("local pointee %d %d %d %d\n", q[0], q[1], q[2], q[3]);
  free(q);
  free(v.p);
  return 0;
}
