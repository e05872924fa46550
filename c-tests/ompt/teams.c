// Requested teams reach target_submit: num_teams(4) and a firstprivate scalar.
#include <stdio.h>
int main(void) {
  int a[8] = {0}, k = 5;
#pragma omp target teams distribute num_teams(4) map(tofrom : a[0:8]) firstprivate(k)
  for (int i = 0; i < 8; i++) a[i] = i + k;
  printf("a[7]=%d\n", a[7]);
  return 0;
}
