// C++ lambdas inside target regions, captures by reference and by value.
#include <cstdio>
#include <omp.h>

int main() {
  int a[10];
  for (int i = 0; i < 10; i++)
    a[i] = i;
  int factor = 3;
  int on_host = -1;
#pragma omp target map(tofrom : a, on_host)
  {
    auto mul = [factor](int x) { return x * factor; };
    auto apply = [&](int i) { a[i] = mul(a[i]); };
    for (int i = 0; i < 10; i++)
      apply(i);
    on_host = omp_is_initial_device();
  }
  std::printf("a[9]=%d on_host=%d\n", a[9], on_host);

  // a lambda created on the host, used in the region (captured pointer is mapped)
  int *p = a;
  int sum = 0;
  auto body = [=, &sum](int i) { sum += p[i]; };
#pragma omp target map(to : p[0:10]) map(tofrom : sum)
  {
    for (int i = 0; i < 10; i++)
      body(i);
  }
  std::printf("sum=%d\n", sum);
  return 0;
}
