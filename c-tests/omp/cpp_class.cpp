// C++: classes, templates, std::vector data, member functions with target regions.
#include <cstdio>
#include <numeric>
#include <omp.h>
#include <vector>

template <typename T> struct Vec {
  std::vector<T> data;
  explicit Vec(size_t n) : data(n) {}
  void iota(T start) { std::iota(data.begin(), data.end(), start); }
  // a target region inside a member function of a template
  T device_sum(int *on_host) const {
    const T *p = data.data();
    size_t n = data.size();
    T s = 0;
    int h = -1;
#pragma omp target teams distribute parallel for reduction(+ : s) map(to : p[0:n]) map(tofrom : h)
    for (size_t i = 0; i < n; i++) {
      s += p[i];
      if (i == 0)
        h = omp_is_initial_device();
    }
    *on_host = h;
    return s;
  }
  void scale(T f) {
    T *p = data.data();
    size_t n = data.size();
#pragma omp target teams distribute parallel for map(tofrom : p[0:n])
    for (size_t i = 0; i < n; i++)
      p[i] *= f;
  }
};

class Matrix {
public:
  Matrix(int r, int c) : rows_(r), cols_(c), v_(r * c, 0.0) {}
  void fill_on_device() {
    double *v = v_.data();
    int r = rows_, c = cols_;
#pragma omp target teams distribute parallel for collapse(2) map(from : v[0:r * c])
    for (int i = 0; i < r; i++)
      for (int j = 0; j < c; j++)
        v[i * c + j] = i * 100 + j;
  }
  double at(int i, int j) const { return v_[i * cols_ + j]; }

private:
  int rows_, cols_;
  std::vector<double> v_;
};

int main() {
  Vec<int> vi(1000);
  vi.iota(1);
  int h1 = -1, h2 = -1;
  std::printf("int sum=%d on_host=%d\n", vi.device_sum(&h1), h1);
  vi.scale(2);
  std::printf("scaled int sum=%d\n", vi.device_sum(&h1));
  Vec<double> vd(10);
  vd.iota(0.5);
  std::printf("double sum=%.1f on_host=%d\n", vd.device_sum(&h2), h2);
  Matrix m(4, 5);
  m.fill_on_device();
  std::printf("m(0,0)=%.0f m(3,4)=%.0f m(2,1)=%.0f\n", m.at(0, 0), m.at(3, 4), m.at(2, 1));
  return 0;
}
