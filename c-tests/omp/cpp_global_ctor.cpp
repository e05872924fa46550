// Target regions in a C++ global constructor (after registration, which runs
// at constructor priority 101) and in a global destructor (before
// __tgt_unregister_lib, which is registered with atexit earlier).
#include <cstdio>
#include <omp.h>

struct Global {
  int value = 0;
  int on_host = -1;
  Global() {
    int v = 0, h = -1;
#pragma omp target map(from : v, h)
    {
      v = 21 * 2;
      h = omp_is_initial_device();
    }
    value = v;
    on_host = h;
  }
  ~Global() {
    int v = value, h = -1;
#pragma omp target map(tofrom : v, h)
    {
      v += 1;
      h = omp_is_initial_device();
    }
    std::printf("destructor region: v=%d on_host=%d\n", v, h);
    std::fflush(stdout);
  }
};

static Global g;

int main() {
  std::printf("constructor region: value=%d on_host=%d\n", g.value, g.on_host);
  return 0;
}
