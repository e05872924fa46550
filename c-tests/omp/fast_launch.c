// Regions whose arguments are all passed by value (none, firstprivate
// scalars, is_device_ptr pointers): the kernel-launch fast path of
// src/api/kernel.rs, and the general path it hands over to: more by-value
// arguments than the fast path takes, a mapped argument next to them, nowait,
// an explicit device, the initial device (host fallback), host threads, and
// INFO turned on and off with __tgt_set_info_flag between regions (the
// launch lines on stderr are compared with LLVM's: fast_launch.stderr-same).
#include <omp.h>
#include <stdio.h>

void __tgt_set_info_flag(unsigned);

static int on_dev(void) { return !omp_is_initial_device(); }

int main(void) {
  int nd = omp_get_num_devices();
  long a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, k = 9;
  long r = 0;
  int dev = -1;

  // No arguments at all.
#pragma omp target
  { }
  // One to seven by-value arguments (with dyn_ptr: up to 8 parameters).
  long s1 = 0, s7 = 0;
#pragma omp target firstprivate(a) map(from : s1)
  { s1 = a * 10; }
  printf("s1=%ld\n", s1);
#pragma omp target firstprivate(a, b, c, d, e, f) map(from : s7)
  { s7 = a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f; }
  printf("s7=%ld\n", s7);
  // Pure by-value regions whose result goes to device memory.
  long *buf = (long *)omp_target_alloc(16 * sizeof(long), omp_get_default_device());
  for (int i = 0; i < 3; i++) {
#pragma omp target is_device_ptr(buf) firstprivate(i, a, b, c, d, e)
    { buf[i] = i * 100 + a + b + c + d + e; }
  }
  // Eight and nine by-value arguments: too many for the fast path.
#pragma omp target is_device_ptr(buf) firstprivate(a, b, c, d, e, f, g)
  { buf[3] = a + b + c + d + e + f + g; }
#pragma omp target is_device_ptr(buf) firstprivate(a, b, c, d, e, f, g, h)
  { buf[4] = a + b + c + d + e + f + g + h + k * 0; }
  long back[5];
  omp_target_memcpy(back, buf, sizeof back, 0, 0, omp_get_initial_device(), omp_get_default_device());
  printf("buf: %ld %ld %ld %ld %ld\n", back[0], back[1], back[2], back[3], back[4]);
  // nowait by-value regions.
  for (int i = 0; i < 4; i++) {
#pragma omp target is_device_ptr(buf) firstprivate(i) nowait
    { buf[5 + i] = i * i; }
  }
#pragma omp taskwait
  omp_target_memcpy(back, buf + 5, 4 * sizeof(long), 0, 0, omp_get_initial_device(), omp_get_default_device());
  printf("nowait: %ld %ld %ld %ld\n", back[0], back[1], back[2], back[3]);
  omp_target_free(buf, omp_get_default_device());
  // Every device, then the initial device (the region runs on the host).
  for (int id = 0; id <= nd; id++) {
    int where = -1;
#pragma omp target device(id) firstprivate(id) map(from : where)
    { where = on_dev(); }
    printf("device %d: on device %d\n", id, where);
  }
  // Host threads launching empty and by-value regions.
  long total = 0;
#pragma omp parallel for num_threads(4) reduction(+ : total)
  for (int t = 0; t < 400; t++) {
    long v = 0;
#pragma omp target firstprivate(t) map(from : v)
    { v = t; }
#pragma omp target
    { }
    total += v;
  }
  printf("threads: total=%ld\n", total);
  // INFO on for two regions, then off again: the launch lines appear only
  // for those two.
  __tgt_set_info_flag(0x1);
#pragma omp target firstprivate(a)
  { r = a; }
#pragma omp target
  { }
  __tgt_set_info_flag(0);
#pragma omp target firstprivate(a)
  { }
#pragma omp target
  { }
  (void)dev;
  printf("done\n");
  return 0;
}
