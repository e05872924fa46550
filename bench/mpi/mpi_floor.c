// The floor for remote devices: raw MPI point-to-point between
// rank 0 and rank 1 of the same job layout. "empty": an 8-byte message and
// an 8-byte answer (one request and its reply); "copy64": 64 MiB one way
// (median of repetitions). Prints "floor OP us" lines.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int reps = getenv("REPS") ? atoi(getenv("REPS")) : 2000, copies = getenv("COPIES") ? atoi(getenv("COPIES")) : 10;
  size_t big = 64u << 20;
  char *b = malloc(big);
  memset(b, 1, big);
  double *t = malloc(sizeof(double) * reps);
  long x = 0;
  for (int i = 0; i < reps; i++) {
    double s = MPI_Wtime();
    if (r == 0) {
      MPI_Send(&x, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(&x, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (r == 1) {
      MPI_Recv(&x, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&x, 8, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    t[i] = (MPI_Wtime() - s) * 1e6;
  }
  qsort(t, reps, sizeof *t, cmp);
  if (r == 0) printf("floor empty %.2f\n", t[reps / 2]);
  for (int i = 0; i < copies; i++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double s = MPI_Wtime();
    if (r == 0) {
      MPI_Send(b, (int)big, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
      MPI_Recv(&x, 8, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (r == 1) {
      MPI_Recv(b, (int)big, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&x, 8, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
    }
    t[i] = (MPI_Wtime() - s) * 1e6;
  }
  qsort(t, copies, sizeof *t, cmp);
  if (r == 0) printf("floor copy64 %.2f\n", t[copies / 2]);
  MPI_Finalize();
  return 0;
}
