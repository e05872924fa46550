// C++ templates with target regions and user-defined mappers
// (abi-reference 6.12): a class template with a declare mapper for each
// instantiation (pointer member + length), function templates whose target
// regions are instantiated for int, double and a struct, std::vector::data()
// mapped as a section (the vector object itself is never mapped), and an
// array of mapped template objects.
#include <cstdio>
#include <omp.h>
#include <vector>

template <typename T> struct Buf {
  int len;
  T *ptr;
};
#pragma omp declare mapper(Buf<int> b) map(b.len, b.ptr[0:b.len])
#pragma omp declare mapper(Buf<double> b) map(b.len, b.ptr[0:b.len])

template <typename T> T device_total(Buf<T> &b, int *on_host) {
  T s = 0;
  int h = -1;
#pragma omp target map(tofrom : b) map(tofrom : s, h)
  {
    for (int i = 0; i < b.len; i++) {
      s += b.ptr[i];
      b.ptr[i] = b.ptr[i] * 2;
    }
    h = omp_is_initial_device();
  }
  *on_host = h;
  return s;
}

struct P2 {
  int a, b;
};

template <typename T, typename F> void transform(T *v, int n, F f) {
#pragma omp target teams distribute parallel for map(tofrom : v[0:n])
  for (int i = 0; i < n; i++)
    v[i] = f(v[i], i);
}

template <int N> int fixed_size_sum(const int (&arr)[N]) {
  int s = 0;
#pragma omp target map(to : arr) map(tofrom : s)
  {
    for (int i = 0; i < N; i++)
      s += arr[i];
  }
  return s;
}

int main() {
  std::vector<int> vi(6);
  for (int i = 0; i < 6; i++)
    vi[i] = i + 1;
  Buf<int> bi{6, vi.data()};
  int h = -1;
  int ti = device_total(bi, &h);
  std::printf("Buf<int>: total=%d on_host=%d vi={%d,%d,%d,%d,%d,%d} ptr intact=%d\n", ti, h, vi[0], vi[1], vi[2],
              vi[3], vi[4], vi[5], bi.ptr == vi.data());
  std::vector<double> vd{0.5, 1.5, 2.5};
  Buf<double> bd{3, vd.data()};
  double td = device_total(bd, &h);
  std::printf("Buf<double>: total=%.1f vd={%.1f,%.1f,%.1f}\n", td, vd[0], vd[1], vd[2]);

  transform(vi.data(), 6, [](int x, int i) { return x + i * 100; });
  std::printf("transform<int>: %d %d %d\n", vi[0], vi[1], vi[5]);
  std::vector<P2> vp(4);
  for (int i = 0; i < 4; i++)
    vp[i] = P2{i, -i};
  transform(vp.data(), 4, [](P2 p, int i) { return P2{p.a * 10, p.b - i}; });
  std::printf("transform<P2>: (%d,%d) (%d,%d)\n", vp[1].a, vp[1].b, vp[3].a, vp[3].b);

  int arr[5] = {1, 2, 3, 4, 5};
  std::printf("fixed_size_sum<5>=%d\n", fixed_size_sum(arr));

  // array of template objects through the mapper
  std::vector<int> store(9);
  for (int i = 0; i < 9; i++)
    store[i] = i;
  Buf<int> many[3] = {{3, store.data()}, {3, store.data() + 3}, {3, store.data() + 6}};
#pragma omp target map(tofrom : many[0:3])
  {
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < many[k].len; i++)
        many[k].ptr[i] += 100 * (k + 1);
  }
  std::printf("array of Buf<int>:");
  for (int i = 0; i < 9; i++)
    std::printf(" %d", store[i]);
  std::printf("\n");
  return 0;
}
