// omp_target_alloc / memcpy / free / is_present / get_mapped_ptr /
// associate_ptr / disassociate_ptr / is_accessible / memset.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#define N 64

int main(void) {
  int dev = 0, host = omp_get_initial_device();
  printf("num_devices=%d initial_device=%d\n", omp_get_num_devices(), host);

  int h[N], back[N];
  for (int i = 0; i < N; i++)
    h[i] = i * 3;
  int *d = omp_target_alloc(N * sizeof(int), dev);
  printf("alloc non-null=%d alloc(0) is null=%d\n", d != NULL, omp_target_alloc(0, dev) == NULL);
  printf("memcpy h->d rc=%d\n", omp_target_memcpy(d, h, N * sizeof(int), 0, 0, dev, host));
  // kernel works on the device buffer
#pragma omp target is_device_ptr(d) device(dev)
  {
    for (int i = 0; i < N; i++)
      d[i] += 1;
  }
  memset(back, 0, sizeof back);
  printf("memcpy d->h rc=%d back[0]=%d back[63]=%d\n", omp_target_memcpy(back, d, N * sizeof(int), 0, 0, host, dev),
         back[0], back[N - 1]);
  // offsets
  memset(back, 0, sizeof back);
  omp_target_memcpy(back, d, 4 * sizeof(int), 8 * sizeof(int), 16 * sizeof(int), host, dev);
  printf("offset copy: back[8]=%d back[11]=%d back[7]=%d\n", back[8], back[11], back[7]);
  // device to device (across devices)
  int *d2 = omp_target_alloc(N * sizeof(int), 2);
  printf("memcpy d0->d2 rc=%d\n", omp_target_memcpy(d2, d, N * sizeof(int), 0, 0, 2, dev));
  memset(back, 0, sizeof back);
  omp_target_memcpy(back, d2, N * sizeof(int), 0, 0, host, 2);
  printf("via device 2: back[10]=%d\n", back[10]);
  printf("memcpy len 0 rc=%d\n", omp_target_memcpy(back, d2, 0, 0, 0, host, 2));
  // memset
  omp_target_memset(d2, 0, N * sizeof(int), 2);
  omp_target_memcpy(back, d2, N * sizeof(int), 0, 0, host, 2);
  printf("memset: back[5]=%d\n", back[5]);
  omp_target_free(d2, 2);
  // host-to-host through the initial device
  int hh[4] = {0};
  omp_target_memcpy(hh, h, sizeof hh, 0, 0, host, host);
  printf("host->host: hh[3]=%d\n", hh[3]);

  // is_present / get_mapped_ptr
  int x = 5;
  printf("is_present(unmapped)=%d mapped_ptr(unmapped) null=%d\n", omp_target_is_present(&x, dev),
         omp_get_mapped_ptr(&x, dev) == NULL);
  printf("is_present on initial device=%d mapped_ptr on initial device is identity=%d\n",
         omp_target_is_present(&x, host), omp_get_mapped_ptr(&x, host) == (void *)&x);
#pragma omp target enter data map(to : x) device(dev)
  int *xd = omp_get_mapped_ptr(&x, dev);
  printf("mapped: is_present=%d mapped_ptr non-null=%d differs=%d\n", omp_target_is_present(&x, dev), xd != NULL,
         (void *)xd != (void *)&x);
  printf("other device: is_present(dev 1)=%d\n", omp_target_is_present(&x, 1));
#pragma omp target exit data map(delete : x) device(dev)

  // associate host array with device memory
  int assoc[N];
  for (int i = 0; i < N; i++)
    assoc[i] = 0;
  printf("associate rc=%d\n", omp_target_associate_ptr(assoc, d, N * sizeof(int), 0, dev));
  printf("associated: is_present=%d mapped_ptr==d %d\n", omp_target_is_present(assoc, dev),
         omp_get_mapped_ptr(assoc, dev) == (void *)d);
  printf("associate again same rc=%d\n", omp_target_associate_ptr(assoc, d, N * sizeof(int), 0, dev));
  // a region mapping assoc uses d: no allocation, refcount is infinite
#pragma omp target map(tofrom : assoc) device(dev)
  {
    for (int i = 0; i < N; i++)
      assoc[i] *= 2;
  }
  printf("host assoc[1]=%d (not copied: infinite refcount)\n", assoc[1]);
#pragma omp target update from(assoc) device(dev)
  printf("after update from: assoc[1]=%d assoc[63]=%d\n", assoc[1], assoc[N - 1]);
  printf("disassociate rc=%d is_present=%d\n", omp_target_disassociate_ptr(assoc, dev),
         omp_target_is_present(assoc, dev));
  // associate with offset
  printf("associate offset rc=%d\n", omp_target_associate_ptr(assoc, d, 4 * sizeof(int), 8 * sizeof(int), dev));
  int got = 0;
#pragma omp target map(from : got) map(tofrom : assoc[0:4]) device(dev)
  { got = assoc[0]; }
  printf("associated with offset: device assoc[0]=%d\n", got);
  omp_target_disassociate_ptr(assoc, dev);

  printf("is_accessible=%d on host=%d\n", omp_target_is_accessible(h, sizeof h, dev),
         omp_target_is_accessible(h, sizeof h, host));
  omp_target_free(d, dev);
  omp_target_free(NULL, dev);
  // alloc/free on the initial device
  int *hp = omp_target_alloc(16, host);
  hp[0] = 1;
  omp_target_free(hp, host);
  printf("done\n");
  return 0;
}
