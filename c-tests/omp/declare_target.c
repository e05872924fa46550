// declare target (to) globals: read/written from regions, target update.
#include <omp.h>
#include <stdio.h>

int gcount = 10;
double gvec[8] = {1, 2, 3, 4, 5, 6, 7, 8};
#pragma omp declare target to(gcount, gvec)

int genter[4] = {100, 200, 300, 400};
#pragma omp declare target to(genter)

#pragma omp declare target
static int gstatic = 3;
int bump(int x) { return x + gstatic; }
#pragma omp end declare target

int main(void) {
  int dev = omp_get_default_device();
  int r = 0;
  // globals are present as soon as the image is loaded
#pragma omp target map(from : r)
  { r = gcount + (int)gvec[7] + genter[3] + bump(0); }
  printf("initial device values: r=%d\n", r);
  printf("present: gcount=%d gvec=%d genter=%d\n", omp_target_is_present(&gcount, dev),
         omp_target_is_present(gvec, dev), omp_target_is_present(genter, dev));

  // device writes are invisible on the host until update from
#pragma omp target
  {
    gcount = 77;
    for (int i = 0; i < 8; i++)
      gvec[i] *= 10;
    genter[0] = -1;
    gstatic = 30;
  }
  printf("host before update: gcount=%d gvec[1]=%.1f genter[0]=%d\n", gcount, gvec[1], genter[0]);
#pragma omp target update from(gcount, gvec, genter)
  printf("host after update from: gcount=%d gvec[1]=%.1f genter[0]=%d\n", gcount, gvec[1], genter[0]);

  // host writes pushed with update to
  gcount = 1000;
  genter[1] = 2;
#pragma omp target update to(gcount, genter[1:1])
#pragma omp target map(from : r)
  { r = gcount + genter[1] + bump(0); }
  printf("after update to: r=%d\n", r);

  // mapping a declare-target global is a no-op (infinite refcount)
  gcount = 5;
#pragma omp target map(tofrom : gcount)
  { gcount += 1; }
  printf("map(tofrom) of global: host gcount=%d\n", gcount);
#pragma omp target update from(gcount)
  printf("after update: gcount=%d\n", gcount);
#pragma omp target exit data map(delete : gcount)
  printf("still present after delete: %d\n", omp_target_is_present(&gcount, dev));

  // each device has its own copy of the globals
#pragma omp target device(1)
  { gcount = 111; }
#pragma omp target device(2) map(from : r)
  { r = gcount; }
  printf("device 2 gcount=%d (device 1 wrote 111)\n", r);
#pragma omp target update from(gcount) device(1)
  printf("device 1 gcount=%d\n", gcount);
  return 0;
}
