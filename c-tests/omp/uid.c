// omp_get_uid_from_device / omp_get_device_from_uid / omp_get_device_num.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int nd = omp_get_num_devices();
  for (int d = 0; d <= nd; d++) {
    const char *uid = omp_get_uid_from_device(d);
    printf("device %d uid=%s back=%d\n", d, uid ? uid : "(null)", uid ? omp_get_device_from_uid(uid) : -99);
  }
  printf("unknown uid -> %d, NULL -> %d\n", omp_get_device_from_uid("no-such-device"), omp_get_device_from_uid(NULL));
  printf("host omp_get_device_num=%d\n", omp_get_device_num());
  return 0;
}
