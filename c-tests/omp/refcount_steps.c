// DELETE vs release with several references (abi-reference 6.3, 6.9): the
// dynamic reference count observed with omp_target_is_present after each
// step (and with LLVM's data motion: from copies back only when the count
// reaches zero). Structured (target data) and dynamic (enter data) references
// mixed: a delete inside a target data region removes the entry, and the
// region's end then finds nothing (silently ignored, no copy back).
#include <omp.h>
#include <stdio.h>

static int dev;

static void show(const char *step, int *a) {
  printf("%-36s present=%d a[0]=%d\n", step, omp_target_is_present(a, dev), a[0]);
}

static void set_device(int *a, int v) {
#pragma omp target map(alloc : a[0:1])
  { a[0] = v; }
}

int main(void) {
  dev = omp_get_default_device();
  int a[4] = {1, 0, 0, 0};
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a)
  set_device(a, 11);
  show("3 refs:", a);
#pragma omp target exit data map(from : a)
  show("release 1 (from, not last):", a);
#pragma omp target exit data map(release : a)
  show("release 2:", a);
#pragma omp target exit data map(from : a)
  show("release 3 (from, last):", a);

  // delete with 3 refs: removed at once, from+delete not combinable, so
  // update first
  a[0] = 2;
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(alloc : a)
#pragma omp target enter data map(alloc : a)
  set_device(a, 22);
#pragma omp target exit data map(delete : a)
  show("delete with 3 refs:", a);

  // structured + dynamic
  a[0] = 3;
#pragma omp target data map(tofrom : a)
  {
#pragma omp target enter data map(to : a)
    set_device(a, 33);
#pragma omp target exit data map(release : a)
    show("in data region after enter+release:", a);
#pragma omp target exit data map(delete : a)
    show("in data region after delete:", a);
    a[0] = 4;
  }
  show("data region end (entry gone):", a);

  // target data inside a dynamic mapping: region end does not copy back
  a[0] = 5;
#pragma omp target enter data map(to : a)
#pragma omp target data map(tofrom : a)
  { set_device(a, 55); }
  show("data region end with dynamic ref:", a);
#pragma omp target exit data map(from : a)
  show("dynamic release:", a);

  // release below zero is a no-op; delete of a never-mapped variable too
  int b = 1;
#pragma omp target exit data map(release : b)
#pragma omp target exit data map(delete : b)
  printf("unmapped release/delete: present=%d\n", omp_target_is_present(&b, dev));
  // present check of each element of a partially mapped array
#pragma omp target enter data map(to : a[1:2])
  printf("a[1:2] mapped: %d %d %d %d\n", omp_target_is_present(&a[0], dev), omp_target_is_present(&a[1], dev),
         omp_target_is_present(&a[2], dev), omp_target_is_present(&a[3], dev));
#pragma omp target exit data map(delete : a[1:2])
  return 0;
}
