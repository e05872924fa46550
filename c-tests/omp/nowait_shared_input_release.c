// Several chains of `nowait` target tasks run side by side; every chain
// step maps its own accumulator tofrom (ordered by depend(inout)) and a
// read-only input row that other chains map at the same time. A step that
// releases the last reference to an input row must not let that row's
// device memory go while another chain's step that mapped the row
// meanwhile still has its kernel queued (asynchronous devices, and the
// deferred queues of OMPTARGET_RS_HOST_QUEUES).
#include <stdio.h>

enum { CHAINS = 5, STEPS = 7, LEN = 48, ROUNDS = 6 };

static long acc[CHAINS][LEN];
static long input[STEPS][LEN];

static long expect(int chain, int i) {
  long v = chain * 100 + i;
  for (int s = 0; s < STEPS; s++)
    v = v * 3 - input[s][i];
  return v;
}

int main(void) {
  for (int s = 0; s < STEPS; s++)
    for (int i = 0; i < LEN; i++)
      input[s][i] = (s + 1) * 7 + i % 5;
  int wrong = 0;
  for (int round = 0; round < ROUNDS; round++) {
    for (int c = 0; c < CHAINS; c++)
      for (int i = 0; i < LEN; i++)
        acc[c][i] = c * 100 + i;
#pragma omp parallel num_threads(3)
#pragma omp single
    for (int c = 0; c < CHAINS; c++) {
      long *a = acc[c];
      for (int s = 0; s < STEPS; s++) {
        long *in = input[s];
#pragma omp target map(to : in[0:LEN]) map(tofrom : a[0:LEN])               \
    depend(in : in[0]) depend(inout : a[0]) nowait
        for (int i = 0; i < LEN; i++)
          a[i] = a[i] * 3 - in[i];
      }
    }
    for (int c = 0; c < CHAINS; c++)
      for (int i = 0; i < LEN; i++)
        if (acc[c][i] != expect(c, i)) {
          if (wrong++ < 3)
            printf("round %d: acc[%d][%d] = %ld, expected %ld\n", round, c, i,
                   acc[c][i], expect(c, i));
        }
  }
  printf("chains: %d, steps: %d, rounds: %d, wrong elements: %d\n", CHAINS,
         STEPS, ROUNDS, wrong);
  printf("acc[4][47] = %ld\n", acc[4][47]);
  return wrong != 0;
}
