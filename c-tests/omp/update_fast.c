// target update in the forms the update fast path of src/api/data.rs takes
// (1-4 contiguous to/from items inside mappings without attached pointers)
// and the ones it hands to the general path: five items, an item not mapped
// (nothing happens), a struct whose pointer member is attached (the pointer
// is restored/rewritten), the present modifier, nowait, another
// device, the initial device, and host threads updating their own mappings.
#include <omp.h>
#include <stdio.h>

#define N 16
struct S {
  int *p;
  int v;
};

static void zero_on_device(int *x, int n, int dev) {
#pragma omp target map(to : n) device(dev)
  for (int i = 0; i < n; i++)
    x[i] = 0;
}

int main(void) {
  int a[N], b[N], c[N], d[N], e[N], f[N];
  for (int i = 0; i < N; i++)
    a[i] = b[i] = c[i] = d[i] = e[i] = f[i] = i + 1;
#pragma omp target enter data map(to : a, b, c, d, e)
  // Device copies become 100 + i.
#pragma omp target
  for (int i = 0; i < N; i++) {
    a[i] = b[i] = c[i] = d[i] = e[i] = 100 + i;
  }
  // One item from, part of an array.
#pragma omp target update from(a[2:3])
  printf("one from: %d %d %d %d\n", a[1], a[2], a[4], a[5]);
  // Four items at once, mixed directions.
  b[0] = -1;
#pragma omp target update from(c[0:4], d[8:8]) to(b[0:1]) from(e)
  printf("four: c %d %d  d %d %d  e %d\n", c[0], c[4], d[7], d[8], e[15]);
#pragma omp target map(from : f[0:1])
  f[0] = b[0];
  printf("to reached the device: %d\n", f[0]);
  // Five items: the general path.
#pragma omp target update from(a, b[1:1], c, d, e)
  printf("five: %d %d %d %d %d\n", a[0], b[1], c[15], d[0], e[0]);
  // Not mapped: nothing happens (f keeps its host value).
  f[3] = 42;
#pragma omp target update to(f[3:1])
#pragma omp target update from(f[3:1])
  printf("not mapped: %d\n", f[3]);
  // present modifier on a mapped item.
#pragma omp target update from(present : a[0:2])
  printf("present: %d\n", a[1]);
  // An attached pointer member: the struct's update keeps the device pointer.
  int arr[4] = {1, 2, 3, 4};
  struct S s = {arr, 7};
#pragma omp target enter data map(to : s, s.p[0:4])
#pragma omp target
  {
    s.v = 70;
    s.p[1] = 20;
  }
#pragma omp target update from(s)
  printf("struct: v=%d p==arr %d\n", s.v, s.p == arr);
#pragma omp target update from(arr[1:1])
  printf("pointee: %d\n", arr[1]);
  s.v = 9;
#pragma omp target update to(s)
  int seen = 0;
#pragma omp target map(from : seen)
  seen = s.v * 100 + s.p[1];
  printf("after to(s): %d\n", seen);
#pragma omp target exit data map(delete : s, s.p[0:4])
  // nowait updates ordered by depend.
  zero_on_device(a, N, omp_get_default_device());
#pragma omp target update from(a) nowait
#pragma omp taskwait
  printf("nowait: %d\n", a[5]);
  // Another device and the initial device.
  int g[N];
  for (int i = 0; i < N; i++)
    g[i] = i;
  int last = omp_get_num_devices() - 1;
#pragma omp target enter data map(to : g) device(last)
  zero_on_device(g, N, last);
#pragma omp target update from(g[3:2]) device(last)
  printf("device %d: %d %d %d\n", last, g[2], g[3], g[4]);
#pragma omp target update from(g) device(omp_get_initial_device())
  printf("initial device: %d\n", g[2]);
#pragma omp target exit data map(delete : g) device(last)
  // Threads updating their own mappings.
  int sum = 0;
#pragma omp parallel for num_threads(4) reduction(+ : sum)
  for (int t = 0; t < 4; t++) {
    int h[8];
    for (int i = 0; i < 8; i++)
      h[i] = t;
#pragma omp target enter data map(to : h)
    for (int k = 0; k < 50; k++) {
#pragma omp target map(to : k)
      h[k % 8] += 1;
#pragma omp target update from(h[k % 8 : 1])
    }
#pragma omp target exit data map(delete : h)
    for (int i = 0; i < 8; i++)
      sum += h[i];
  }
  printf("threads: %d\n", sum);
#pragma omp target exit data map(delete : a, b, c, d, e)
  return 0;
}
