// MEMBER_OF and arrays of structs (abi-reference 6.7): sections of arrays of
// structs (as[2:3]) mapped whole, a member of one element (as[4].x), members
// of elements through a struct-array member (t.items[1].val, t.items[1:2]),
// an implicit map of the whole array served by the mapped as[0:4], and
// exit data map(from: as[1:2]) of a sub-section (copies back only as[1..2]);
// unmapped elements keep their host values.
#include <omp.h>
#include <stdio.h>

struct P {
  int x;
  double y;
  int pad[3];
};
struct T {
  int count;
  struct P items[4];
};

int main(void) {
  int dev = omp_get_default_device();
  struct P as[8];
  for (int i = 0; i < 8; i++) {
    as[i].x = i;
    as[i].y = i * 0.5;
    for (int k = 0; k < 3; k++)
      as[i].pad[k] = -i;
  }
  int on_host = -1;
#pragma omp target map(tofrom : as[2:3]) map(from : on_host)
  {
    for (int i = 2; i < 5; i++) {
      as[i].x *= 100;
      as[i].y += 1;
    }
    on_host = omp_is_initial_device();
  }
  printf("as[2:3]:");
  for (int i = 0; i < 8; i++)
    printf(" (%d,%.1f)", as[i].x, as[i].y);
  printf(" on_host=%d\n", on_host);

  // one member of one element
#pragma omp target map(tofrom : as[6].x)
  { as[6].x = 66; }
  printf("as[6].x=%d as[6].y=%.1f as[5].x=%d\n", as[6].x, as[6].y, as[5].x);

  // enter data of a section, region updates elements via the mapped section
#pragma omp target enter data map(to : as[0:4])
  printf("present: as[3]=%d as[4]=%d\n", omp_target_is_present(&as[3], dev), omp_target_is_present(&as[4], dev));
  as[1].x = -1000; // host only
  int seen = 0;
#pragma omp target map(from : seen)
  {
    seen = as[1].x; // implicit map of all of as: extends as[0:4], implicit -> served by it
  }
  printf("device as[1].x=%d\n", seen);
#pragma omp target exit data map(from : as[1:2])
  printf("exit from as[1:2]: as[1].x=%d present=%d\n", as[1].x, omp_target_is_present(&as[0], dev));
#pragma omp target exit data map(delete : as[0:4])

  // struct with an array-of-structs member
  struct T t;
  t.count = 4;
  for (int i = 0; i < 4; i++)
    t.items[i].x = i + 1, t.items[i].y = 0;
#pragma omp target map(tofrom : t.count, t.items[1:2])
  {
    for (int i = 1; i < 3; i++)
      t.items[i].y = t.items[i].x * t.count;
    t.count = 0;
  }
  printf("t: count=%d items y={%.0f,%.0f,%.0f,%.0f}\n", t.count, t.items[0].y, t.items[1].y, t.items[2].y,
         t.items[3].y);
#pragma omp target map(tofrom : t.items[3].x)
  { t.items[3].x = 44; }
  printf("t.items[3].x=%d t.items[2].x=%d\n", t.items[3].x, t.items[2].x);
  return 0;
}
