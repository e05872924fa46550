// Thread stress: THREADS (8) host threads each run ITERS
// (argv[1], default 100000) mixed constructs on device (thread % devices):
// a target region on private data, enter/exit data of one shared object
// from all threads, a target region using it (present), target update of
// it, and omp_target_alloc/memcpy/free. Every result is checked exactly;
// at the end the shared object is mapped nowhere (every reference count is
// back to zero). LLVM 22.1 aborts on a mutex assertion here.
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 8
#define N 64
static int shared_obj[N];
static long iters;
static int errors[THREADS];

static void *worker(void *arg) {
  int t = (int)(long)arg, dev = t % omp_get_num_devices();
  int priv[N], out[N], host[N];
  for (long it = 0; it < iters; it++) {
    int seed = (int)(it % 1000) + t;
    switch (it % 4) {
    case 0: { // private data
      for (int i = 0; i < N; i++) priv[i] = i + seed;
#pragma omp target map(tofrom : priv) device(dev)
      for (int i = 0; i < N; i++) priv[i] = priv[i] * 3;
      for (int i = 0; i < N; i++) errors[t] += priv[i] != (i + seed) * 3;
      break;
    }
    case 1: { // the shared object, entered and left by all threads
#pragma omp target enter data map(to : shared_obj) device(dev)
#pragma omp target map(present, alloc : shared_obj) map(from : out) device(dev)
      for (int i = 0; i < N; i++) out[i] = shared_obj[i] + 1;
#pragma omp target exit data map(release : shared_obj) device(dev)
      for (int i = 0; i < N; i++) errors[t] += out[i] != i * 7 + 1;
      break;
    }
    case 2: { // target update of the shared object (same values)
#pragma omp target data map(to : shared_obj) device(dev)
      {
#pragma omp target update to(shared_obj) device(dev)
#pragma omp target map(from : out) device(dev)
        for (int i = 0; i < N; i++) out[i] = shared_obj[i] * 2;
      }
      for (int i = 0; i < N; i++) errors[t] += out[i] != i * 14;
      break;
    }
    default: { // device memory routines
      int *d = omp_target_alloc(sizeof host, dev);
      for (int i = 0; i < N; i++) host[i] = i ^ seed;
      omp_target_memcpy(d, host, sizeof host, 0, 0, dev, omp_get_initial_device());
      for (int i = 0; i < N; i++) out[i] = -1;
      omp_target_memcpy(out, d, sizeof out, 0, 0, omp_get_initial_device(), dev);
      omp_target_free(d, dev);
      for (int i = 0; i < N; i++) errors[t] += out[i] != (i ^ seed);
    }
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  iters = argc > 1 ? atol(argv[1]) : 100000;
  for (int i = 0; i < N; i++) shared_obj[i] = i * 7;
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)t);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  int bad = 0, mapped = 0;
  for (int t = 0; t < THREADS; t++) bad += errors[t];
  for (int d = 0; d < omp_get_num_devices(); d++) mapped += omp_target_is_present(shared_obj, d);
  printf("thread_stress: %d threads x %ld constructs: %d wrong values, shared object still mapped on %d devices\n", THREADS,
         iters, bad, mapped);
  return bad || mapped ? 1 : 0;
}
