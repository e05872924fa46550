// omp_get_device_num() inside target regions on the host plugin's devices
// (OpenMP 5.2 §18.7.5: "the device number of the device on
// which the calling thread is executing"). Each device's copy of the image
// answers its own number: called directly, through a function pointer
// (a GOT entry instead of a PLT slot), from a declare-target function, from
// the threads of a parallel region inside the region, and from nowait
// regions. omp_is_initial_device() is 0 in the regions, 1 on the host.
// LLVM 22.1 answers the initial device's number (omp_get_num_devices()) on
// every device: see device_num_host.divergence; .ours is what the standard
// gives. device_num_host_now.c builds the same program with the image's GOT
// read-only after relocation (-z now -z relro).
#include <omp.h>
#include <stdio.h>

#pragma omp declare target
static int via_function(void) { return omp_get_device_num() * 10; }
#pragma omp end declare target

int main(void) {
  int n = omp_get_num_devices();
  printf("host: devices %d initial %d device_num %d initial_device %d\n", n, omp_get_initial_device(),
         omp_get_device_num(), omp_is_initial_device());
  for (int d = 0; d < n; d++) {
    int direct = -99, ptr = -99, func = -99, init = -99, par_bad = -99;
    #pragma omp target device(d) map(from: direct, ptr, func, init, par_bad)
    {
      int (*volatile fp)(void) = omp_get_device_num;
      direct = omp_get_device_num();
      ptr = fp();
      func = via_function();
      init = omp_is_initial_device();
      int bad = 0;
      #pragma omp parallel num_threads(3) reduction(+: bad)
      bad += omp_get_device_num() != direct;
      par_bad = bad;
    }
    printf("device %d: direct %d pointer %d function %d initial %d parallel mismatches %d\n", d, direct, ptr, func,
           init, par_bad);
  }
  // Several devices at once, nowait.
  int got[16];
  for (int d = 0; d < n && d < 16; d++) {
    got[d] = -99;
    #pragma omp target device(d) map(from: got[d:1]) nowait
    got[d] = omp_get_device_num();
  }
  #pragma omp taskwait
  for (int d = 0; d < n && d < 16; d++)
    printf("nowait on %d: %d\n", d, got[d]);
  // Threads of the host, each offloading to a device of its own.
  int bad = 0;
  #pragma omp parallel for num_threads(4) reduction(+: bad)
  for (int i = 0; i < 4 * n; i++) {
    int d = i % n, r = -99;
    #pragma omp target device(d) map(from: r)
    r = omp_get_device_num();
    bad += r != d;
  }
  printf("threaded regions answering another device: %d\n", bad);
  return 0;
}
