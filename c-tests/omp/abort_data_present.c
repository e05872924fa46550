// target data map(present, tofrom: a[1:3]) with only a[0:2] mapped
// (abi-reference 6.4, 6.5): the section is not contained in the existing
// mapping (it extends after it), so besides the 'present' message LLVM prints
// the explicit-extension message; fatal error (exit 134). No .stderr-same:
// ours deliberately adds a line naming the existing mapping.
#include <stdio.h>

int main(void) {
  int a[8] = {0};
#pragma omp target enter data map(to : a[0:2])
  printf("before\n");
  fflush(stdout);
#pragma omp target data map(present, tofrom : a[1:3])
  { printf("not reached\n"); }
  return 0;
}
