// Exit while target nowait regions are in flight on a remote device: the
// runtime's exit handler lets them finish, then shuts the servers down and
// finalises MPI; no call reaches MPI after MPI_Finalize (Open MPI aborts the
// process then). Usage: exit_inflight DEVICE [exit]: with a second
// argument the program calls exit(0) instead of returning from main.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 20)
static double a[16][N];

int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 4;
  for (int k = 0; k < 16; k++) {
#pragma omp target nowait map(tofrom : a[k][0:N]) device(dev)
    for (int i = 0; i < N; i++) a[k][i] += i;
  }
  printf("exiting with work in flight\n");
  fflush(stdout);
  if (argc > 2) exit(0);
  return 0;
}
