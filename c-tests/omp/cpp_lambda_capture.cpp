// C++ lambdas with by-reference captures in kernels (abi-reference 5.1:
// lambda captures are patched to device addresses): a lambda defined on the
// host capturing mapped variables by reference ([&]) and called inside the
// region -- its captured references must point to the device copies (also
// while the data is present: host copy unchanged); a lambda capturing a mapped
// pointer variable by reference; a lambda used in target teams distribute
// parallel for; a generic lambda; and a lambda created in the region that
// captures the device 'this'.
#include <cstdio>
#include <omp.h>

struct Acc {
  int base;
  int vals[4];
  void run() {
#pragma omp target map(tofrom : this[0:1])
    {
      auto add = [this](int i) { vals[i] += base; }; // the device 'this'
      for (int i = 0; i < 4; i++)
        add(i);
    }
  }
};

int main() {
  int a[8];
  for (int i = 0; i < 8; i++)
    a[i] = i;
  int count = 0, on_host = -1;
  auto step = [&](int i) {
    a[i] = a[i] * 10;
    count += 1;
  };
#pragma omp target map(tofrom : a, count) map(from : on_host)
  {
    for (int i = 0; i < 8; i++)
      step(i);
    on_host = omp_is_initial_device();
  }
  std::printf("[&] lambda: a[7]=%d count=%d on_host=%d\n", a[7], count, on_host);

  // device copy changed through the lambda while the host copy stays put
#pragma omp target enter data map(to : a, count)
  auto bump = [&]() {
    for (int i = 0; i < 8; i++)
      a[i] += 1;
    count = -5;
  };
#pragma omp target map(tofrom : a, count)
  { bump(); }
  std::printf("present data: host a[0]=%d count=%d\n", a[0], count);
#pragma omp target exit data map(from : a, count)
  std::printf("after exit: a[0]=%d count=%d\n", a[0], count);

  // pointer captured by reference
  int buf[6] = {1, 1, 1, 1, 1, 1};
  int *p = buf;
  auto fill = [&p](int i, int v) { p[i] = v; };
#pragma omp target map(to : p) map(tofrom : p[0:6])
  {
    for (int i = 0; i < 6; i++)
      fill(i, i * i);
  }
  std::printf("pointer by reference: %d %d %d\n", buf[1], buf[3], buf[5]);

  // lambda in a combined construct
  int v[100];
  for (int i = 0; i < 100; i++)
    v[i] = i;
  int k = 3;
  auto f = [&k](int x) { return x * k; };
#pragma omp target teams distribute parallel for map(tofrom : v) map(to : k)
  for (int i = 0; i < 100; i++)
    v[i] = f(v[i]);
  std::printf("teams lambda: v[99]=%d v[50]=%d\n", v[99], v[50]);

  // generic lambda
  double d[3] = {0.5, 1.5, 2.5};
  long l[3] = {1, 2, 3};
  auto twice = [](auto &x) { x = x + x; };
#pragma omp target map(tofrom : d, l)
  {
    for (int i = 0; i < 3; i++) {
      twice(d[i]);
      twice(l[i]);
    }
  }
  std::printf("generic: %.1f %.1f %ld %ld\n", d[0], d[2], l[0], l[2]);

  Acc acc{5, {1, 2, 3, 4}};
  acc.run();
  std::printf("this-capture: %d %d\n", acc.vals[0], acc.vals[3]);
  return 0;
}
