// Array sections: a[10:20], partial updates, sections of 2-D arrays.
#include <omp.h>
#include <stdio.h>

#define N 50

int main(void) {
  int a[N];
  for (int i = 0; i < N; i++)
    a[i] = i;
#pragma omp target map(tofrom : a[10:20])
  {
    for (int i = 10; i < 30; i++)
      a[i] = -a[i];
  }
  printf("a[9]=%d a[10]=%d a[29]=%d a[30]=%d\n", a[9], a[10], a[29], a[30]);

  int dev = omp_get_default_device();
#pragma omp target enter data map(to : a[10:20])
  printf("present: a[9]=%d a[10]=%d a[29]=%d a[30]=%d\n", omp_target_is_present(&a[9], dev),
         omp_target_is_present(&a[10], dev), omp_target_is_present(&a[29], dev), omp_target_is_present(&a[30], dev));
  // a contained section reuses the mapping (no copy): host change not seen
  a[15] = 1000;
  int seen = 0;
#pragma omp target map(to : a[12:5]) map(from : seen)
  { seen = a[15]; }
  printf("contained section sees device value: %d\n", seen);
#pragma omp target update to(a[15:1])
#pragma omp target map(to : a[12:5]) map(from : seen)
  { seen = a[15]; }
  printf("after update to: %d\n", seen);
#pragma omp target exit data map(delete : a[10:20])

  // 2-D array sections
  int m[6][8];
  for (int r = 0; r < 6; r++)
    for (int c = 0; c < 8; c++)
      m[r][c] = r * 10 + c;
#pragma omp target map(tofrom : m[2:3][0:8])
  {
    for (int r = 2; r < 5; r++)
      for (int c = 0; c < 8; c++)
        m[r][c] += 100;
  }
  printf("m[1][7]=%d m[2][0]=%d m[4][7]=%d m[5][0]=%d\n", m[1][7], m[2][0], m[4][7], m[5][0]);

  // section through a pointer, with an offset
  int *p = a + 5;
#pragma omp target map(tofrom : p[0:3])
  {
    p[0] = 555;
    p[2] = 777;
  }
  printf("via pointer: a[5]=%d a[6]=%d a[7]=%d\n", a[5], a[6], a[7]);
  return 0;
}
