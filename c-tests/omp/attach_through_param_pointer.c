// A region mapping a pointee through a pointer parameter to a struct:
// map(r->vals[0:n]) map(alloc: r->vals). clang 22 attaches the struct's
// pointer member (r->vals) to its pointee and the parameter r (a local,
// unmapped pointer) to the member it points at. The second attachment goes
// through a pointer that is not a struct member and is not mapped: it is
// skipped (as in 22.1), so the region runs; src/runtime/data.rs's check
// for an unreachable nested member pointer must not reject it. Variations:
// the pointee mapped before by enter data (present), and mapped by the
// region alone. (Through a second level, map(q->r->vals[0:n]) map(alloc:
// q->r->vals), the pointer q->r is a member nobody maps: 22.1 loses the
// region's update and ours fails the construct with that check's message.)
#include <stdio.h>

#define N 64
typedef struct {
  double *vals;
  int n;
} Row;

static void bump(Row *r, int at) {
#pragma omp target map(r->vals[0 : N]) map(alloc : r->vals)
  { r->vals[at] += 1.0; }
}

int main(void) {
  double data[N];
  for (int i = 0; i < N; i++)
    data[i] = i;
  Row row = {data, N};

#pragma omp target enter data map(to : data[0 : N])
  bump(&row, 7);
  bump(&row, 7);
#pragma omp target exit data map(from : data[0 : N])
  printf("present: data[7] = %.1f\n", data[7]);

  // Not mapped before: the region maps and copies back itself.
  bump(&row, 3);
  printf("region only: data[3] = %.1f\n", data[3]);
  return 0;
}
