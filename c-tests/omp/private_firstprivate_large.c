// PRIVATE / firstprivate (abi-reference 6.11): firstprivate arrays above the
// private-argument manager's 1024-byte packing limit (allocated separately) and
// below it (packed), several of each in one region, a firstprivate struct with
// an array member, private arrays (device copies are not initialised from the
// host and never copied back: the program writes them fully before reading),
// and is_device_ptr with omp_target_alloc'd memory next to firstprivates.
#include <omp.h>
#include <stdio.h>

struct Rec {
  int id;
  double w[200]; // 1600 bytes + 8: larger than 1024
};

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  static int big1[300], big2[1000]; // 1200 and 4000 bytes
  int small1[16], small2[255];      // 64 and 1020 bytes
  static struct Rec rec;
  for (int i = 0; i < 300; i++)
    big1[i] = i;
  for (int i = 0; i < 1000; i++)
    big2[i] = 2 * i;
  for (int i = 0; i < 16; i++)
    small1[i] = 1;
  for (int i = 0; i < 255; i++)
    small2[i] = 3;
  rec.id = 7;
  for (int i = 0; i < 200; i++)
    rec.w[i] = 0.5;
  long sums[5] = {0};
  int on_host = -1;
#pragma omp target firstprivate(big1, small1, big2, small2, rec) map(tofrom : sums) map(from : on_host)
  {
    for (int i = 0; i < 300; i++)
      sums[0] += big1[i], big1[i] = -1;
    for (int i = 0; i < 16; i++)
      sums[1] += small1[i], small1[i] = -1;
    for (int i = 0; i < 1000; i++)
      sums[2] += big2[i], big2[i] = -1;
    for (int i = 0; i < 255; i++)
      sums[3] += small2[i], small2[i] = -1;
    double t = 0;
    for (int i = 0; i < 200; i++)
      t += rec.w[i];
    sums[4] = (long)t + rec.id;
    rec.id = -1;
    on_host = omp_is_initial_device();
  }
  printf("firstprivate sums: %ld %ld %ld %ld %ld on_host=%d\n", sums[0], sums[1], sums[2], sums[3], sums[4], on_host);
  printf("host unchanged: %d %d %d %d %d\n", big1[299], small1[0], big2[999], small2[254], rec.id);

  // private arrays: written on the device before use, host copy unchanged
  static int priv_big[2000];
  int priv_small[8];
  for (int i = 0; i < 2000; i++)
    priv_big[i] = 5;
  for (int i = 0; i < 8; i++)
    priv_small[i] = 6;
  long psum = 0;
#pragma omp target private(priv_big, priv_small) map(tofrom : psum)
  {
    for (int i = 0; i < 2000; i++)
      priv_big[i] = i % 7;
    for (int i = 0; i < 8; i++)
      priv_small[i] = i;
    for (int i = 0; i < 2000; i++)
      psum += priv_big[i];
    for (int i = 0; i < 8; i++)
      psum += priv_small[i];
  }
  printf("private: psum=%ld host priv_big[1999]=%d priv_small[7]=%d\n", psum, priv_big[1999], priv_small[7]);

  // firstprivate of a mapped array: the private copy is initialised from the
  // host (not from the device copy), and the device copy is unchanged
  int arr[4] = {1, 2, 3, 4};
#pragma omp target enter data map(to : arr)
  arr[0] = 100; // host only
  int seen = 0;
#pragma omp target firstprivate(arr) map(from : seen)
  {
    seen = arr[0];
    arr[1] = -5;
  }
  int devcopy[4];
  omp_target_memcpy(devcopy, omp_get_mapped_ptr(arr, dev), sizeof devcopy, 0, 0, host, dev);
  printf("firstprivate of mapped array: private arr[0]=%d device copy={%d,%d} host arr[1]=%d\n", seen, devcopy[0],
         devcopy[1], arr[1]);
#pragma omp target exit data map(delete : arr)

  // is_device_ptr next to a large firstprivate
  int *d = omp_target_alloc(300 * sizeof(int), dev);
#pragma omp target is_device_ptr(d) firstprivate(big1)
  {
    for (int i = 0; i < 300; i++)
      d[i] = big1[i] * 3;
  }
  int back[300];
  omp_target_memcpy(back, d, sizeof back, 0, 0, host, dev);
  printf("is_device_ptr: back[0]=%d back[299]=%d\n", back[0], back[299]);
  omp_target_free(d, dev);
  return 0;
}
