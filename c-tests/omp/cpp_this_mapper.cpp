// A C++ member function that maps this[:1] for a class with a declare
// mapper (the mapper maps the object and its pointer member's array
// section), after an earlier `target map(tofrom: obj)` region that changed
// the pointee on the device. Variations: the member
// defined before the mapper is declared (this[:1] without the mapper: the
// object stays mapped from the mapper region, and its device copy's pointer
// still names the pointee's device block, freed and not yet reused, as with
// 22.1's memory manager), defined after it (the mapper applies to this[:1]),
// nested in `target data`, and while the object is held mapped.
#include <cstdio>
#include <omp.h>

struct Vec {
  int n;
  double *data;
  double sum_inline() {
    double s = 0;
#pragma omp target map(tofrom : this[:1]) map(tofrom : s)
    for (int i = 0; i < n; i++)
      s += data[i];
    return s;
  }
  double sum_after();
  double sum_nested();
  void scale_after(double f);
};
#pragma omp declare mapper(Vec v) map(v, v.data[0 : v.n])

double Vec::sum_after() {
  double s = 0;
#pragma omp target map(tofrom : this[:1]) map(tofrom : s)
  for (int i = 0; i < n; i++)
    s += data[i];
  return s;
}

double Vec::sum_nested() {
  double s = 0;
#pragma omp target data map(tofrom : this[:1])
  {
#pragma omp target map(tofrom : this[:1]) map(tofrom : s)
    for (int i = 0; i < n; i++)
      s += data[i];
  }
  return s;
}

void Vec::scale_after(double f) {
#pragma omp target map(tofrom : this[:1])
  for (int i = 0; i < n; i++)
    data[i] *= f;
}

int main() {
  Vec obj;
  obj.n = 100;
  obj.data = new double[100];
  for (int i = 0; i < 100; i++)
    obj.data[i] = 1.0;
#pragma omp target map(tofrom : obj)
  for (int i = 0; i < obj.n; i++)
    obj.data[i] = 2.0;
  printf("host data[0] after the mapper region: %.1f\n", obj.data[0]);
  printf("sum_inline %.1f\n", obj.sum_inline());
  printf("sum_after %.1f\n", obj.sum_after());
  printf("sum_nested %.1f\n", obj.sum_nested());
  obj.scale_after(3.0);
  printf("after scale_after: host data[1] %.1f, sum_after %.1f\n", obj.data[1], obj.sum_after());
#pragma omp target enter data map(to : obj)
#pragma omp target map(tofrom : obj)
  for (int i = 0; i < obj.n; i++)
    obj.data[i] = 4.0;
  printf("sum_after while held %.1f\n", obj.sum_after());
#pragma omp target exit data map(from : obj)
  printf("host data[5] %.1f\n", obj.data[5]);
  Vec other;
  other.n = 50;
  other.data = new double[50];
  for (int i = 0; i < 50; i++)
    other.data[i] = i;
  printf("fresh object: sum_after %.1f sum_nested %.1f\n", other.sum_after(), other.sum_nested());
  delete[] obj.data;
  delete[] other.data;
  return 0;
}
