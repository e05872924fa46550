// The user-defined mapper API driven by the program with its own handle,
// as LLVM's own test declare_mapper_api.cpp does: the
// program makes a MapperComponentsTy (a std::vector of {base, begin, size,
// type, name}), pushes components through the API and counts them, from
// several threads (one handle each), and a declare mapper still works.
// (Reading the vector back is checked in tests/api_misuse.rs: 22.1 keeps
// its own layout in the handle, so its contents differ there.)
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <vector>

struct MapComponentInfoTy {
  void *Base;
  void *Begin;
  int64_t Size;
  int64_t Type;
  void *Name;
};

struct MapperComponentsTy {
  std::vector<MapComponentInfoTy> Components;
};

extern "C" {
int64_t __tgt_mapper_num_components(void *rt_mapper_handle);
void __tgt_push_mapper_component(void *rt_mapper_handle, void *base, void *begin, int64_t size, int64_t type, void *name);
}

struct S {
  int n;
  double *p;
};
#pragma omp declare mapper(S s) map(s, s.p[0 : s.n])

int main() {
  int data[100];
  {
    MapperComponentsTy mc;
    printf("empty: %" PRId64 "\n", __tgt_mapper_num_components(&mc));
    for (int i = 0; i < 10; i++)
      __tgt_push_mapper_component(&mc, data, data + i, 4 * (i + 1), 0x23 + i, nullptr);
    printf("after 10 pushes: %" PRId64 "\n", __tgt_mapper_num_components(&mc));
  }
  long counts[4] = {0};
#pragma omp parallel for num_threads(4)
  for (int t = 0; t < 4; t++) {
    MapperComponentsTy mc;
    for (int i = 0; i < 1000 * (t + 1); i++)
      __tgt_push_mapper_component(&mc, data, data + (i % 100), 4, 3, nullptr);
    counts[t] = __tgt_mapper_num_components(&mc);
  }
  printf("threads: %ld %ld %ld %ld\n", counts[0], counts[1], counts[2], counts[3]);
  double v[8];
  for (int i = 0; i < 8; i++)
    v[i] = i;
  S s = {8, v};
#pragma omp target map(tofrom : s)
  for (int i = 0; i < s.n; i++)
    s.p[i] *= 2;
  printf("mapper region: v[7] = %.0f\n", v[7]);
  return 0;
}
