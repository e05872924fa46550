// target enter/exit data in the forms the fast path of src/api/data.rs
// takes (one to/alloc item entering, one from/release item leaving, on data
// mapped already, reference count not reaching zero) and the ones it hands
// to the general path: an item not mapped (allocated and copied), the last
// release (copied back and removed), always, delete, two items, a struct
// whose pointer member is attached, a declare-target global (infinite
// count), nowait, INFO switched on and off between constructs, and host
// threads taking and dropping references of one shared mapping while the
// main thread keeps it alive (enter_exit_race.c: nobody keeps it). Each step prints what the device and host
// copies hold and whether the data is still mapped.
#include <omp.h>
#include <stdio.h>

#define N 8
void __tgt_set_info_flag(unsigned);

struct S {
  int *p;
  int v;
};

int g[N];
#pragma omp declare target(g)

static int dev_sum(int *x) {
  int s = 0;
#pragma omp target map(tofrom : s)
  for (int i = 0; i < N; i++)
    s += x[i];
  return s;
}

static void dev_set(int *x, int v) {
#pragma omp target
  for (int i = 0; i < N; i++)
    x[i] = v;
}

static int host_sum(int *x) {
  int s = 0;
  for (int i = 0; i < N; i++)
    s += x[i];
  return s;
}

int main(void) {
  int dev = omp_get_default_device();
  int a[N], b[N];
  for (int i = 0; i < N; i++)
    a[i] = b[i] = 1;

  // Not mapped: the general path allocates and copies.
#pragma omp target enter data map(to : a)
  printf("mapped after first enter: %d, device sum %d\n", omp_target_is_present(a, dev), dev_sum(a));
  for (int i = 0; i < N; i++)
    a[i] = 2;
  // Present: the fast path takes a reference and copies nothing.
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(alloc : a)
  printf("device sum after present enters: %d (host %d)\n", dev_sum(a), host_sum(a));
  dev_set(a, 3);
  // Not the last release: nothing copied back.
#pragma omp target exit data map(from : a)
#pragma omp target exit data map(release : a)
  printf("host sum after two non-last exits: %d, mapped %d\n", host_sum(a), omp_target_is_present(a, dev));
  // The last release copies back and removes (general path).
#pragma omp target exit data map(from : a)
  printf("host sum after last exit: %d, mapped %d\n", host_sum(a), omp_target_is_present(a, dev));

  // always: copies although present / not last (general path).
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a)
  for (int i = 0; i < N; i++)
    a[i] = 4;
#pragma omp target enter data map(always, to : a)
  printf("device sum after always enter: %d\n", dev_sum(a));
  dev_set(a, 5);
#pragma omp target exit data map(always, from : a)
  printf("host sum after always exit: %d, mapped %d\n", host_sum(a), omp_target_is_present(a, dev));
  // delete: removes whatever the count (general path).
#pragma omp target exit data map(delete : a)
  printf("mapped after delete: %d\n", omp_target_is_present(a, dev));

  // Two items: the general path.
#pragma omp target enter data map(to : a, b)
#pragma omp target enter data map(to : a, b)
  dev_set(a, 6);
  dev_set(b, 7);
#pragma omp target exit data map(from : a, b)
  printf("two items, not last: host %d %d\n", host_sum(a), host_sum(b));
#pragma omp target exit data map(from : a, b)
  printf("two items, last: host %d %d, mapped %d %d\n", host_sum(a), host_sum(b), omp_target_is_present(a, dev),
         omp_target_is_present(b, dev));

  // A struct whose pointer member is attached: the entry has an attached
  // pointer, so the general path handles it.
  struct S s = {b, 1};
#pragma omp target enter data map(to : s, s.p[0 : N])
#pragma omp target enter data map(to : s)
#pragma omp target
  s.v = s.p[0] + 10;
#pragma omp target exit data map(from : s)
  printf("struct, not last: s.v %d, s.p intact %d\n", s.v, s.p == b);
#pragma omp target exit data map(from : s, s.p[0 : N])
  printf("struct, last: s.v %d, s.p intact %d, mapped %d\n", s.v, s.p == b, omp_target_is_present(&s, dev));

  // A declare-target global: its count is infinite (general path).
  for (int i = 0; i < N; i++)
    g[i] = 8;
#pragma omp target enter data map(to : g)
#pragma omp target update to(g)
#pragma omp target exit data map(from : g)
  printf("global after enter/exit: mapped %d, device sum %d\n", omp_target_is_present(g, dev), dev_sum(g));

  // nowait forms.
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a) nowait
#pragma omp taskwait
  dev_set(a, 9);
#pragma omp target exit data map(from : a) nowait
#pragma omp taskwait
  printf("nowait, not last: host %d, mapped %d\n", host_sum(a), omp_target_is_present(a, dev));
#pragma omp target exit data map(from : a) nowait
#pragma omp taskwait
  printf("nowait, last: host %d, mapped %d\n", host_sum(a), omp_target_is_present(a, dev));

  // INFO on for two constructs, then off again: the lines appear only
  // for those (the general path prints them).
#pragma omp target enter data map(to : a)
  __tgt_set_info_flag(0x3);
#pragma omp target enter data map(to : a)
#pragma omp target exit data map(release : a)
  __tgt_set_info_flag(0);
#pragma omp target enter data map(to : a)
#pragma omp target exit data map(release : a)
#pragma omp target exit data map(from : a)
  fflush(stdout);
  printf("after INFO: mapped %d\n", omp_target_is_present(a, dev));

  // Threads take and drop references of one mapping the main thread keeps
  // alive; then the last release copies the device data back.
  int shared[N];
  for (int i = 0; i < N; i++)
    shared[i] = 1;
#pragma omp target enter data map(to : shared)
  int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
  for (int k = 0; k < 2000; k++) {
#pragma omp target enter data map(to : shared)
#pragma omp target exit data map(from : shared)
    bad += !omp_target_is_present(shared, dev);
  }
  dev_set(shared, 11);
  printf("threads: lost mapping %d times, host %d\n", bad, host_sum(shared));
#pragma omp target exit data map(from : shared)
  printf("threads, last: host %d, mapped %d\n", host_sum(shared), omp_target_is_present(shared, dev));

  return 0;
}
