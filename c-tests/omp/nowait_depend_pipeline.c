// target nowait tasks with depend chains (abi-reference 4.9, 6.6, 6.9): a
// pipeline over several buffers where each stage is a nowait target region
// (or nowait enter/update/exit data) depending on the previous stage of the
// same buffer, stages spread over devices 0-3 and run from 4 host threads;
// 'target teams distribute parallel for nowait' + taskwait inside a loop
// (each iteration depends on the previous one through the data); depend(in)
// readers running concurrently after one writer; and a mutexinoutset-free
// fan-in (depend(in: several) -> one out).
#include <omp.h>
#include <stdio.h>

#define B 6
#define N 512

int main(void) {
  static double buf[B][N];
  static int ondev[B][4];
  int nd = omp_get_num_devices();
  for (int b = 0; b < B; b++)
    for (int i = 0; i < N; i++)
      buf[b][i] = b;

#pragma omp parallel num_threads(4)
#pragma omp single
  {
    for (int b = 0; b < B; b++) {
      int d = b % nd;
      double *p = buf[b];
      int *od = ondev[b];
#pragma omp target enter data map(to : p[0:N]) device(d) depend(out : p[0]) nowait
#pragma omp target map(from : od[0:1]) device(d) depend(inout : p[0]) nowait
      {
        for (int i = 0; i < N; i++)
          p[i] = p[i] * 2 + 1;
        od[0] = omp_is_initial_device();
      }
#pragma omp target teams distribute parallel for device(d) depend(inout : p[0]) nowait
      for (int i = 0; i < N; i++)
        p[i] += i;
#pragma omp target update from(p[0:N / 2]) device(d) depend(inout : p[0]) nowait
#pragma omp task depend(inout : p[0])
      {
        for (int i = 0; i < N / 2; i++)
          p[i] = -p[i]; // host half negated, pushed back below
      }
#pragma omp target update to(p[0:N / 2]) device(d) depend(inout : p[0]) nowait
#pragma omp target map(from : od[1:1]) device(d) depend(inout : p[0]) nowait
      {
        for (int i = 0; i < N; i++)
          p[i] *= 3;
        od[1] = omp_is_initial_device();
      }
#pragma omp target exit data map(from : p[0:N]) device(d) depend(inout : p[0]) nowait
    }
#pragma omp taskwait
  }
  for (int b = 0; b < B; b++) {
    double s = 0;
    for (int i = 0; i < N; i++)
      s += buf[b][i];
    printf("buffer %d (device %d): sum=%.0f first=%.0f last=%.0f on_host=%d,%d\n", b, b % nd, s, buf[b][0],
           buf[b][N - 1], ondev[b][0], ondev[b][1]);
  }

  // teams distribute parallel for nowait + taskwait in a loop
  static int v[N];
  for (int i = 0; i < N; i++)
    v[i] = i;
#pragma omp target enter data map(to : v)
  for (int step = 0; step < 20; step++) {
#pragma omp target teams distribute parallel for nowait
    for (int i = 0; i < N; i++)
      v[i] = (v[i] * 3 + step) % 1000;
#pragma omp taskwait
  }
#pragma omp target exit data map(from : v)
  long vs = 0;
  for (int i = 0; i < N; i++)
    vs += v[i];
  printf("20 dependent steps: sum=%ld v[1]=%d v[511]=%d\n", vs, v[1], v[N - 1]);

  // one writer, several concurrent readers, then a fan-in
  int src[64], r1 = 0, r2 = 0, r3 = 0, total = 0;
  for (int i = 0; i < 64; i++)
    src[i] = 0;
#pragma omp parallel num_threads(4)
#pragma omp single
  {
#pragma omp target map(tofrom : src) depend(out : src) nowait
    {
      for (int i = 0; i < 64; i++)
        src[i] = i;
    }
#pragma omp target map(to : src) map(from : r1) depend(in : src) depend(out : r1) nowait
    {
      r1 = 0;
      for (int i = 0; i < 64; i++)
        r1 += src[i];
    }
#pragma omp target map(to : src) map(from : r2) depend(in : src) depend(out : r2) nowait device(1)
    {
      r2 = src[63] * 2;
    }
#pragma omp target map(to : src) map(from : r3) depend(in : src) depend(out : r3) nowait device(2)
    {
      r3 = src[10] + src[20];
    }
#pragma omp target map(to : r1, r2, r3) map(from : total) depend(in : r1, r2, r3) nowait
    { total = r1 + r2 + r3; }
#pragma omp taskwait
  }
  printf("readers: r1=%d r2=%d r3=%d fan-in total=%d\n", r1, r2, r3, total);
  return 0;
}
