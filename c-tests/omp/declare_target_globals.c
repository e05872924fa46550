// declare target globals (abi-reference 2.6, 6.3, 6.9): global 2-D arrays and
// a global struct with a pointer member. Globals have infinite reference
// counts: map(from:) copies back only with 'always', exit data never removes
// them; sections of globals are updated with target update; a pointer member
// of a global struct is attached to a mapped pointee (the shadow pointer keeps
// the host value across update from); each device has its own copy
// (update with device(2)).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define R 4
#define C 5
int grid[R][C];
struct Buf {
  int n;
  int *data;
} gbuf;
double gscale = 1.0;
#pragma omp declare target to(grid, gbuf, gscale)

static void show_grid(const char *what) {
  printf("%s\n", what);
  for (int i = 0; i < R; i++) {
    for (int j = 0; j < C; j++)
      printf("%4d", grid[i][j]);
    printf("\n");
  }
}

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++)
      grid[i][j] = i * 10 + j;
#pragma omp target update to(grid)
  int on_host = -1;
#pragma omp target map(from : on_host)
  {
    for (int i = 0; i < R; i++)
      for (int j = 0; j < C; j++)
        grid[i][j] = -grid[i][j];
    on_host = omp_is_initial_device();
  }
  printf("on_host=%d\n", on_host);
  show_grid("host grid before update:");
#pragma omp target update from(grid[1:2])
  show_grid("after update from(grid[1:2]):");
#pragma omp target update from(grid[3][1:3])
  show_grid("after update from(grid[3][1:3]):");

  // map(from:) of a global: no copy back (infinite count), unless always
  gscale = 2.0;
#pragma omp target map(from : gscale)
  { gscale = 5.0; }
  printf("map(from: gscale): %.1f\n", gscale);
#pragma omp target map(always, from : gscale)
  { gscale = 6.0; }
  printf("map(always, from: gscale): %.1f\n", gscale);
#pragma omp target exit data map(delete : grid, gscale)
  printf("present after delete: %d %d\n", omp_target_is_present(grid, dev), omp_target_is_present(&gscale, dev));

  // pointer member of a global struct attached to a mapped pointee
  gbuf.n = 6;
  gbuf.data = malloc(6 * sizeof(int));
  for (int i = 0; i < 6; i++)
    gbuf.data[i] = i;
  int *orig = gbuf.data;
#pragma omp target update to(gbuf)
#pragma omp target enter data map(to : gbuf.data[0:6])
  int sum = 0;
#pragma omp target map(tofrom : sum)
  {
    for (int i = 0; i < gbuf.n; i++) {
      sum += gbuf.data[i];
      gbuf.data[i] *= 100;
    }
    gbuf.n = 3;
  }
#pragma omp target update from(gbuf)
  printf("global struct: sum=%d n=%d host pointer intact=%d host data[5]=%d\n", sum, gbuf.n, gbuf.data == orig,
         gbuf.data[5]);
#pragma omp target exit data map(from : gbuf.data[0:6])
  printf("after exit from: data[5]=%d\n", gbuf.data[5]);

  // per-device copies
  grid[0][0] = 1234;
#pragma omp target update to(grid[0:1]) device(2)
  int d0 = 0, d2 = 0;
#pragma omp target map(from : d0) device(0)
  { d0 = grid[0][0]; }
#pragma omp target map(from : d2) device(2)
  { d2 = grid[0][0]; }
  printf("grid[0][0]: device 0=%d device 2=%d\n", d0, d2);
  int raw = 0;
  omp_target_memcpy(&raw, omp_get_mapped_ptr(&grid[0][0], 2), sizeof raw, 0, 0, host, 2);
  printf("device 2 copy via omp_get_mapped_ptr: %d\n", raw);
  free(orig);
  return 0;
}
