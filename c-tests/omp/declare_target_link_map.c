// declare target link arrays (abi-reference 6.2 last row, 6.8): a link
// variable gets device storage only when mapped; sections of link arrays
// (lbig[8:8]), enter/exit data with reference counts, a link struct,
// update to/from on the mapped section, separate
// mappings on two devices, and the link reference re-pointed for each new
// mapping (unmapped, re-mapped with new data).
#include <omp.h>
#include <stdio.h>

int lbig[32];
struct LS {
  int k;
  int *ptr;
} lstruct;
#pragma omp declare target link(lbig, lstruct)

int main(void) {
  int dev = omp_get_default_device();
  for (int i = 0; i < 32; i++)
    lbig[i] = i;
  printf("unmapped: present=%d\n", omp_target_is_present(lbig, dev));
  int on_host = -1, r = 0;
#pragma omp target map(tofrom : lbig[8:8]) map(from : on_host)
  {
    for (int i = 8; i < 16; i++)
      lbig[i] *= -1;
    on_host = omp_is_initial_device();
  }
  printf("section: lbig[7]=%d lbig[8]=%d lbig[15]=%d lbig[16]=%d on_host=%d present=%d\n", lbig[7], lbig[8],
         lbig[15], lbig[16], on_host, omp_target_is_present(lbig + 8, dev));

#pragma omp target enter data map(to : lbig)
#pragma omp target enter data map(to : lbig)
  lbig[0] = 500; // host only
#pragma omp target map(from : r)
  {
    r = lbig[0] + lbig[31];
    lbig[1] = 111;
  }
  printf("device sees lbig[0]+lbig[31]=%d\n", r);
#pragma omp target exit data map(from : lbig)
  printf("1st exit (refcount 2): lbig[1]=%d present=%d\n", lbig[1], omp_target_is_present(lbig, dev));
  lbig[2] = 222;
#pragma omp target update to(lbig[2:1])
#pragma omp target map(from : r)
  { r = lbig[2]; }
  printf("update to: device lbig[2]=%d\n", r);
#pragma omp target exit data map(from : lbig)
  printf("2nd exit: lbig[0]=%d lbig[1]=%d present=%d\n", lbig[0], lbig[1], omp_target_is_present(lbig, dev));

  // re-mapped: new device storage initialised from the host again
  lbig[5] = 55;
#pragma omp target map(to : lbig[0:8]) map(from : r)
  { r = lbig[5]; }
  printf("re-mapped: device lbig[5]=%d\n", r);

  // link struct (mapped whole; its pointer member is copied bitwise and not
  // dereferenced: clang 22 emits a bogus extra entry for link-struct pointees)
  int data[4] = {1, 2, 3, 4};
  lstruct.k = 10;
  lstruct.ptr = data;
#pragma omp target map(tofrom : lstruct) map(from : r)
  {
    r = lstruct.ptr != 0;
    lstruct.k += 5;
  }
  printf("link struct: k=%d pointer copied=%d pointer intact=%d present=%d\n", lstruct.k, r, lstruct.ptr == data,
         omp_target_is_present(&lstruct, dev));

  // two devices, two separate mappings
#pragma omp target enter data map(to : lbig[0:4]) device(1)
#pragma omp target enter data map(to : lbig[0:4]) device(3)
#pragma omp target device(1)
  { lbig[0] = 1001; }
#pragma omp target device(3)
  { lbig[0] = 3003; }
#pragma omp target exit data map(from : lbig[0:4]) device(1)
  printf("from device 1: %d\n", lbig[0]);
#pragma omp target exit data map(from : lbig[0:4]) device(3)
  printf("from device 3: %d\n", lbig[0]);
  return 0;
}
