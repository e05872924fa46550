// MEMBER_OF with nested structs (abi-reference 6.7): members of members
// (o.id, o.mid.in.v[2:3], o.last), a pointer member of a nested struct
// (o.mid.data[0:n]) mapped individually; unmapped members keep their host
// values; a whole nested sub-struct o.mid.in mapped on its own. (Lists where
// several members share the same top-level member, e.g. o.mid.w + o.mid.in.x,
// get a too-small combined entry from clang 22: see member_outside_combined.c.)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct In {
  int x;
  int v[6];
};
struct Mid {
  double w;
  struct In in;
  int arr[4];
  int *data;
};
struct Outer {
  int id;
  struct Mid mid;
  int last;
};

int main(void) {
  int dev = omp_get_default_device();
  int n = 5;
  struct Outer o;
  o.id = 1;
  o.last = 9;
  o.mid.w = 0.5;
  o.mid.in.x = 3;
  for (int i = 0; i < 6; i++)
    o.mid.in.v[i] = i;
  for (int i = 0; i < 4; i++)
    o.mid.arr[i] = 10 * i;
  o.mid.data = malloc(n * sizeof(int));
  for (int i = 0; i < n; i++)
    o.mid.data[i] = 100 + i;
  int *orig = o.mid.data;

  int on_host = -1;
#pragma omp target map(tofrom : o.id, o.mid.in.v[2:3], o.last) map(from : on_host)
  {
    o.id += 1;
    o.last = -9;
    for (int i = 2; i < 5; i++)
      o.mid.in.v[i] *= 11;
    on_host = omp_is_initial_device();
  }
  printf("nested members: id=%d w=%.1f x=%d arr={%d,%d,%d,%d} v={%d,%d,%d,%d,%d,%d} last=%d on_host=%d\n", o.id,
         o.mid.w, o.mid.in.x, o.mid.arr[0], o.mid.arr[1], o.mid.arr[2], o.mid.arr[3], o.mid.in.v[0], o.mid.in.v[1],
         o.mid.in.v[2], o.mid.in.v[3], o.mid.in.v[4], o.mid.in.v[5], o.last, on_host);

  // nested pointer member with its pointee
  printf("present after region: id=%d v[3]=%d x=%d\n", omp_target_is_present(&o.id, dev),
         omp_target_is_present(&o.mid.in.v[3], dev), omp_target_is_present(&o.mid.in.x, dev));
#pragma omp target map(tofrom : o.id, o.mid.data, o.mid.data[0:n])
  {
    o.id *= 4;
    for (int i = 0; i < n; i++)
      o.mid.data[i] -= 100;
  }
  printf("nested pointer: id=%d w=%.1f data={%d,%d,%d,%d,%d} pointer intact=%d\n", o.id, o.mid.w, o.mid.data[0], o.mid.data[1],
         o.mid.data[2], o.mid.data[3], o.mid.data[4], o.mid.data == orig);

  // a whole nested struct as one list item
#pragma omp target enter data map(to : o.mid.in)
  printf("o.mid.in mapped: present x=%d v[5]=%d w=%d arr=%d id=%d\n", omp_target_is_present(&o.mid.in.x, dev),
         omp_target_is_present(&o.mid.in.v[5], dev), omp_target_is_present(&o.mid.w, dev),
         omp_target_is_present(&o.mid.arr[0], dev), omp_target_is_present(&o.id, dev));
  o.mid.in.x = 500; // host only
  int got = 0;
#pragma omp target map(from : got) map(tofrom : o.mid.in)
  {
    got = o.mid.in.x;
    o.mid.in.v[0] = 77;
  }
  printf("device o.mid.in.x=%d host x=%d v[0]=%d (still mapped)\n", got, o.mid.in.x, o.mid.in.v[0]);
#pragma omp target exit data map(from : o.mid.in)
  printf("after exit from: x=%d v[0]=%d present=%d\n", o.mid.in.x, o.mid.in.v[0],
         omp_target_is_present(&o.mid.in, dev));
  free(orig);
  return 0;
}
