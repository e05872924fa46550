// Non-contiguous target update: strided 1-D sections (a[0:10:2], a[1:5:3]).
#include <omp.h>
#include <stdio.h>

int main(void) {
  int a[20];
  for (int i = 0; i < 20; i++)
    a[i] = i;
  int m[4][6];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++)
      m[i][j] = i * 10 + j;
#pragma omp target enter data map(to : a, m)
#pragma omp target
  {
    for (int i = 0; i < 20; i++)
      a[i] = -a[i];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 6; j++)
        m[i][j] = -m[i][j];
  }
  // every other element
#pragma omp target update from(a[0:10:2])
  for (int i = 0; i < 20; i++)
    printf("%d ", a[i]);
  printf("\n");
  // strided update to
  for (int i = 0; i < 20; i++)
    a[i] = 1000 + i;
#pragma omp target update to(a[1:5:3])
#pragma omp target exit data map(from : a) map(delete : m)
  for (int i = 0; i < 20; i++)
    printf("%d ", a[i]);
  printf("\n");
  return 0;
}
