// MEMBER_OF entries that are not inside their combined entry (abi-reference
// 6.5, 6.7, 6.9). clang 22 computes the combined entry of
// map(tofrom: o.mid.w, o.mid.in.x) -- two members below the same top-level
// member o.mid -- as covering o.mid.w only (8 bytes). The runtime then treats
// the MEMBER_OF entry for o.mid.in.x like any other lookup: not found, so a new
// entry is created (DynRefCount 1) although member entries never update
// reference counts; at region end member entries never delete, so the entry
// for o.mid.in.x stays mapped after the region (with the device value written
// when it was created), until an explicit exit data removes it. The kernel
// touches only o.mid.w (o.mid.in.x lies outside the combined allocation).
#include <omp.h>
#include <stdio.h>

struct In {
  int x;
  int v[6];
};
struct Mid {
  double w;
  struct In in;
};
struct Outer {
  int id;
  struct Mid mid;
};

int main(void) {
  int dev = omp_get_default_device();
  struct Outer o;
  o.id = 1;
  o.mid.w = 2.0;
  o.mid.in.x = 3;
  int on_host = -1;
#pragma omp target map(tofrom : o.mid.w, o.mid.in.x) map(from : on_host)
  {
    o.mid.w += 0.5;
    on_host = omp_is_initial_device();
  }
  printf("after region: w=%.1f x=%d on_host=%d present w=%d x=%d\n", o.mid.w, o.mid.in.x, on_host,
         omp_target_is_present(&o.mid.w, dev), omp_target_is_present(&o.mid.in.x, dev));
  o.mid.in.x = 30; // host only
  int got = 0;
  // the leftover entry is found (present): no copy to the device
#pragma omp target map(tofrom : o.mid.in.x) map(from : got)
  { got = o.mid.in.x; }
  printf("device o.mid.in.x=%d (host %d)\n", got, o.mid.in.x);
  o.mid.in.x = 31;
#pragma omp target update to(o.mid.in.x)
#pragma omp target map(tofrom : o.mid.in.x) map(from : got)
  { got = o.mid.in.x * 2; }
  printf("after update to: device 2*x=%d present=%d\n", got, omp_target_is_present(&o.mid.in.x, dev));
#pragma omp target exit data map(release : o.mid.in.x)
  printf("after release: present=%d\n", omp_target_is_present(&o.mid.in.x, dev));
  return 0;
}
