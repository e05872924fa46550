// device(N) clauses: independent mapping tables and copies per device.
#include <omp.h>
#include <stdio.h>

int main(void) {
  int nd = omp_get_num_devices();
  printf("num_devices=%d\n", nd);
  int a[4] = {0, 0, 0, 0};
  for (int d = 0; d < nd; d++) {
    int on_host = -1;
#pragma omp target device(d) map(tofrom : a[d:1]) map(from : on_host)
    {
      a[d] = 10 * (d + 1);
      on_host = omp_is_initial_device();
    }
    printf("device %d: a[%d]=%d on_host=%d\n", d, d, a[d], on_host);
  }

  int x = 1;
#pragma omp target enter data map(to : x) device(1)
  x = 2;
#pragma omp target enter data map(to : x) device(3)
  printf("present: dev0=%d dev1=%d dev2=%d dev3=%d\n", omp_target_is_present(&x, 0), omp_target_is_present(&x, 1),
         omp_target_is_present(&x, 2), omp_target_is_present(&x, 3));
  int v1 = 0, v3 = 0;
#pragma omp target device(1) map(from : v1) map(tofrom : x)
  { v1 = x; x = 100; }
#pragma omp target device(3) map(from : v3) map(tofrom : x)
  { v3 = x; x = 300; }
  printf("device copies: dev1 x=%d dev3 x=%d\n", v1, v3);
#pragma omp target exit data map(from : x) device(3)
  printf("after exit from device 3: x=%d\n", x);
#pragma omp target exit data map(from : x) device(1)
  printf("after exit from device 1: x=%d\n", x);

  // omp_target_alloc on each device + device-to-device memcpy chain
  int host = omp_get_initial_device();
  int *buf[4];
  for (int d = 0; d < nd && d < 4; d++)
    buf[d] = omp_target_alloc(sizeof(int) * 4, d);
  int init[4] = {1, 2, 3, 4};
  omp_target_memcpy(buf[0], init, sizeof init, 0, 0, 0, host);
  for (int d = 1; d < nd && d < 4; d++) {
    omp_target_memcpy(buf[d], buf[d - 1], sizeof init, 0, 0, d, d - 1);
    int *bd = buf[d];
#pragma omp target device(d) is_device_ptr(bd)
    {
      for (int i = 0; i < 4; i++)
        bd[i] *= 2;
    }
  }
  int out[4] = {0};
  omp_target_memcpy(out, buf[nd - 1], sizeof out, 0, 0, host, nd - 1);
  printf("chained: %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  for (int d = 0; d < nd && d < 4; d++)
    omp_target_free(buf[d], d);

  // the initial device number runs the region on the host
  int on_host = -1;
#pragma omp target device(host) map(from : on_host)
  { on_host = omp_is_initial_device(); }
  printf("device(initial): on_host=%d\n", on_host);
  return 0;
}
