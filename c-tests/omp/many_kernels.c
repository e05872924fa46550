// Many target regions (14) in one translation unit, each a distinct kernel.
#include <omp.h>
#include <stdio.h>

#define N 64

static int a[N], b[N];

int main(void) {
  int dev[14];
  for (int i = 0; i < 14; i++)
    dev[i] = -1;
  for (int i = 0; i < N; i++)
    a[i] = i, b[i] = 0;

#pragma omp target map(tofrom : a, dev[0:1])
  { for (int i = 0; i < N; i++) a[i] += 1; dev[0] = omp_is_initial_device(); }
#pragma omp target map(tofrom : a, dev[1:1])
  { for (int i = 0; i < N; i++) a[i] *= 2; dev[1] = omp_is_initial_device(); }
#pragma omp target map(to : a) map(from : b) map(tofrom : dev[2:1])
  { for (int i = 0; i < N; i++) b[i] = a[i] - 1; dev[2] = omp_is_initial_device(); }
#pragma omp target teams distribute map(tofrom : b) map(tofrom : dev[3:1])
  for (int i = 0; i < N; i++) { b[i] += 3; if (i == 0) dev[3] = omp_is_initial_device(); }
#pragma omp target parallel for map(tofrom : b) map(tofrom : dev[4:1])
  for (int i = 0; i < N; i++) { b[i] -= 3; if (i == 0) dev[4] = omp_is_initial_device(); }
#pragma omp target teams distribute parallel for simd map(tofrom : a) map(tofrom : dev[5:1])
  for (int i = 0; i < N; i++) { a[i] = a[i] / 2; if (i == 0) dev[5] = omp_is_initial_device(); }
  int s = 0;
#pragma omp target map(tofrom : s, dev[6:1]) map(to : a)
  { for (int i = 0; i < N; i++) s += a[i]; dev[6] = omp_is_initial_device(); }
  int t = 0;
#pragma omp target teams map(tofrom : t, dev[7:1]) num_teams(1)
  { t = 7; dev[7] = omp_is_initial_device(); }
  int u = 5;
#pragma omp target map(tofrom : u, dev[8:1])
  { u = u * u; dev[8] = omp_is_initial_device(); }
  double d = 1.5;
#pragma omp target map(tofrom : d, dev[9:1])
  { d = d * 4.0; dev[9] = omp_is_initial_device(); }
  long l = 0;
#pragma omp target teams distribute parallel for reduction(+ : l) map(tofrom : dev[10:1])
  for (int i = 0; i < 100; i++) { l += i; if (i == 0) dev[10] = omp_is_initial_device(); }
  char msg[8] = "abcdefg";
#pragma omp target map(tofrom : msg, dev[11:1])
  { for (int i = 0; i < 7; i++) msg[i] = (char)(msg[i] - 32); dev[11] = omp_is_initial_device(); }
  int w = 0;
#pragma omp target simd map(tofrom : dev[12:1]) reduction(+ : w)
  for (int i = 0; i < 10; i++) { w += 2; if (i == 0) dev[12] = omp_is_initial_device(); }
  unsigned x = 0xdeadbeefu;
#pragma omp target map(tofrom : x, dev[13:1])
  { x ^= 0xffffffffu; dev[13] = omp_is_initial_device(); }

  printf("a[0]=%d a[63]=%d b[0]=%d b[63]=%d s=%d t=%d u=%d d=%.1f l=%ld msg=%s w=%d x=%08x\n", a[0], a[N - 1],
         b[0], b[N - 1], s, t, u, d, l, msg, w, x);
  int any_host = 0;
  for (int i = 0; i < 14; i++)
    any_host |= dev[i] != 0;
  printf("regions=14 any_on_host=%d\n", any_host);
  return any_host;
}
