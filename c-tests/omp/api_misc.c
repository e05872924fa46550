// omp_* device API details (abi-reference 9.1, 9.2): associate_ptr error
// cases (different device pointer for an associated host pointer -> -1, on
// the initial device -> -1, NULL arguments -> -1), disassociate_ptr of a
// normal mapping and of an unknown pointer (-1), omp_get_mapped_ptr for a
// device number above N (NULL) and for the initial device (identity),
// omp_target_is_accessible (0 on the host plugin's devices, 1 for the
// initial device), omp_target_is_present on the initial device and for NULL,
// omp_target_memset return value and partial fills, llvm_omp_target_alloc_*
// on several devices, and uid <-> device number round trips. Error
// messages go to stderr (checked in .stderr-contains).
#include <omp.h>
#include <stdio.h>
#include <string.h>

void *llvm_omp_target_alloc_device(size_t, int);
void *llvm_omp_target_alloc_host(size_t, int);
void *llvm_omp_target_alloc_shared(size_t, int);
void llvm_omp_target_free_device(void *, int);
void llvm_omp_target_free_host(void *, int);
void llvm_omp_target_free_shared(void *, int);

int main(void) {
  int nd = omp_get_num_devices(), host = omp_get_initial_device();
  int dev = 1;
  int a[16] = {0}, b[4] = {0};
  int *d1 = omp_target_alloc(sizeof a, dev), *d2 = omp_target_alloc(sizeof a, dev);
  printf("associate rc=%d\n", omp_target_associate_ptr(a, d1, sizeof a, 0, dev));
  fflush(stdout);
  printf("re-associate other device ptr rc=%d\n", omp_target_associate_ptr(a, d2, sizeof a, 0, dev));
  fflush(stdout);
  printf("re-associate same ptr other offset rc=%d\n", omp_target_associate_ptr(a, d1, sizeof a, 4, dev));
  fflush(stdout);
  printf("associate same again rc=%d\n", omp_target_associate_ptr(a, d1, sizeof a, 0, dev));
  fflush(stdout);
  printf("associate on initial device rc=%d\n", omp_target_associate_ptr(b, d2, sizeof b, 0, host));
  fflush(stdout);
  printf("associate NULL host rc=%d\n", omp_target_associate_ptr(NULL, d2, sizeof b, 0, dev));
  fflush(stdout);
  printf("associate NULL device ptr rc=%d\n", omp_target_associate_ptr(b, NULL, sizeof b, 0, dev));
  fflush(stdout);
  printf("mapped ptr of associated = d1: %d\n", omp_get_mapped_ptr(a, dev) == (void *)d1);
  printf("disassociate rc=%d\n", omp_target_disassociate_ptr(a, dev));
  fflush(stdout);
  printf("disassociate again rc=%d\n", omp_target_disassociate_ptr(a, dev));
  fflush(stdout);
#pragma omp target enter data map(to : b) device(dev)
  printf("disassociate a normal mapping rc=%d present=%d\n", omp_target_disassociate_ptr(b, dev),
         omp_target_is_present(b, dev));
  fflush(stdout);
#pragma omp target exit data map(delete : b) device(dev)

  printf("mapped ptr dev=N+1 is NULL: %d, dev=100 is NULL: %d\n", omp_get_mapped_ptr(a, nd + 1) == NULL,
         omp_get_mapped_ptr(a, 100) == NULL);
  printf("mapped ptr initial device is identity: %d\n", omp_get_mapped_ptr(a, host) == (void *)a);
  printf("is_accessible: dev0=%d dev3=%d initial=%d\n", omp_target_is_accessible(a, sizeof a, 0),
         omp_target_is_accessible(a, sizeof a, 3), omp_target_is_accessible(a, sizeof a, host));
  printf("is_present: initial=%d NULL=%d\n", omp_target_is_present(a, host), omp_target_is_present(NULL, dev));

  // memset: return value, partial fill, zero length
  void *r = omp_target_memset(d1, 0x11, sizeof a, dev);
  void *r2 = omp_target_memset((char *)d1 + 8, 0x22, 4, dev);
  void *r3 = omp_target_memset(d1, 0x33, 0, dev);
  unsigned char bytes[16];
  omp_target_memcpy(bytes, d1, sizeof bytes, 0, 0, host, dev);
  printf("memset returns ptr: %d %d %d bytes:", r == (void *)d1, r2 == (void *)((char *)d1 + 8), r3 == (void *)d1);
  for (int i = 0; i < 16; i++)
    printf(" %02x", bytes[i]);
  printf("\n");
  int hm[4] = {1, 2, 3, 4};
  printf("memset on initial device returns ptr: %d", omp_target_memset(hm, 0, 8, host) == (void *)hm);
  printf(" hm={%d,%d,%d,%d}\n", hm[0], hm[1], hm[2], hm[3]);

  // llvm_omp_target_alloc_* on devices 0 and 3, used by a kernel
  for (int d = 0; d < nd; d += 3) {
    int *pd = llvm_omp_target_alloc_device(8 * sizeof(int), d);
    int *ph = llvm_omp_target_alloc_host(8 * sizeof(int), d);
    int *ps = llvm_omp_target_alloc_shared(8 * sizeof(int), d);
    for (int i = 0; i < 8; i++)
      ph[i] = i, ps[i] = 10 * i;
    int on_host = -1;
#pragma omp target device(d) is_device_ptr(pd, ph, ps) map(from : on_host)
    {
      for (int i = 0; i < 8; i++)
        pd[i] = ph[i] + ps[i];
      on_host = omp_is_initial_device();
    }
    int out[8];
    omp_target_memcpy(out, pd, sizeof out, 0, 0, host, d);
    printf("device %d: llvm allocs non-null=%d out[7]=%d on_host=%d\n", d, pd && ph && ps, out[7], on_host);
    llvm_omp_target_free_device(pd, d);
    llvm_omp_target_free_host(ph, d);
    llvm_omp_target_free_shared(ps, d);
  }

  // uid round trips
  int ok = 1;
  for (int d = 0; d <= nd; d++) {
    const char *uid = omp_get_uid_from_device(d);
    if (!uid || omp_get_device_from_uid(uid) != d)
      ok = 0;
  }
  printf("uid round trip for 0..%d: %d, initial uid=%s, HOST -> %d\n", nd, ok, omp_get_uid_from_device(host),
         omp_get_device_from_uid("HOST"));
  printf("device_from_uid(\"x86_64-3\")=%d (\"x86_64-9\")=%d (\"\")=%d\n", omp_get_device_from_uid("x86_64-3"),
         omp_get_device_from_uid("x86_64-9"), omp_get_device_from_uid(""));
  omp_target_free(d1, dev);
  omp_target_free(d2, dev);
  return 0;
}
