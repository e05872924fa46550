// if(target: ...) clause: false runs on the host without touching the device tables.
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argv;
  int use_dev = argc > 0; // true at run time
  int on_host_t = -1, on_host_f = -1;
  int a[4] = {1, 2, 3, 4};
#pragma omp target if (target : use_dev) map(tofrom : on_host_t, a)
  {
    on_host_t = omp_is_initial_device();
    a[0] = 10;
  }
#pragma omp target if (target : !use_dev) map(tofrom : on_host_f, a)
  {
    on_host_f = omp_is_initial_device();
    a[1] = 20;
  }
  printf("if(true): on_host=%d, if(false): on_host=%d, a=%d,%d\n", on_host_t, on_host_f, a[0], a[1]);
#pragma omp target data map(to : a) if (!use_dev)
  { printf("target data if(false): present=%d\n", omp_target_is_present(a, omp_get_default_device())); }
#pragma omp target enter data map(to : a) if (use_dev)
  printf("enter data if(true): present=%d\n", omp_target_is_present(a, omp_get_default_device()));
#pragma omp target exit data map(delete : a) if (use_dev)
  return 0;
}
