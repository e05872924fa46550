// `target update` racing with the last release of the mapping it updates.
// One thread (the owner) maps each of
// its arrays with `enter data`, releases it again with `exit data` (the
// count goes to zero and the device block is freed), then maps and unmaps a
// canary array of the same size, which may get the freed block; the other
// threads `target update` the owner's arrays to and from the device all the
// while.
//
// An update may find the mapping present or not (a released mapping is not
// present; updating it does nothing), but whatever it copies is the array's
// own data: every array and canary keeps a fixed pattern, on the host and
// on the device, so any other byte is an error:
// * an update `from` that copied out of a block freed and reused by a
//   canary's mapping puts the canary's bytes into the owner's array;
// * an update `to` that copied into such a block puts the owner's bytes
//   into the canary's device copy, which its `exit data map(from:)` brings
//   back to the host.
// Half the arrays fit the plugin's memory manager (reused blocks of the same
// size), half are above its threshold (malloc/free: under valgrind an update
// into a freed block is an invalid read or write).
//
// Usage: update_release_race [ITERATIONS [UPDATERS]] (default 20000, 3).
// Prints the counts checked and exits 1 when a byte is wrong. Run by
// c-tests/reliability/run.sh (check "update") and, shorter, under valgrind
// by c-tests/reliability/valgrind.sh. Not a differential test: LLVM 22.1
// fails it too (wrong elements in most runs, now and then a heap corruption
// abort, and under memcheck its update unlocks a mutex inside a freed map
// entry).
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

enum { ARRAYS = 4, MAX_UPDATERS = 16 };

// Element counts: two arrays inside the memory manager's 8 KiB threshold,
// two above it.
static const int count[ARRAYS] = {512, 1024, 8192, 16384};

static int *arr[ARRAYS];   // the owner's arrays, updated by the others
static int *canary[ARRAYS]; // mapped by the owner only
static atomic_int done;
static atomic_long canary_wrong;
static long iterations = 20000;

static int pattern(int array, int i) { return (array + 1) * 1000003 + i; }

static long wrong_in(const int *p, int array, int n) {
  long w = 0;
  for (int i = 0; i < n; i++)
    w += p[i] != pattern(array, i);
  return w;
}

static void *owner(void *unused) {
  (void)unused;
  for (long it = 0; it < iterations; it++) {
    int k = (int)(it % ARRAYS), n = count[k];
    int *a = arr[k], *c = canary[k];
#pragma omp target enter data map(to : a[0:n])
    // Both kinds of last release, with and without a copy back, on every array.
    if ((it / ARRAYS) & 1) {
#pragma omp target exit data map(from : a[0:n])
    } else {
#pragma omp target exit data map(release : a[0:n])
    }
#pragma omp target enter data map(to : c[0:n])
#pragma omp target exit data map(from : c[0:n])
    long w = wrong_in(c, ARRAYS + k, n);
    if (w) {
      atomic_fetch_add(&canary_wrong, w);
      // Restore it, so that one error is counted once.
      for (int i = 0; i < n; i++)
        c[i] = pattern(ARRAYS + k, i);
    }
  }
  atomic_store(&done, 1);
  return NULL;
}

static void *updater(void *arg) {
  long id = (long)arg, round = 0;
  while (!atomic_load(&done)) {
    int k = (int)((round + id) % ARRAYS), n = count[k];
    int *a = arr[k];
    // Both directions on every array.
    if (((round + id) / ARRAYS + id) & 1) {
#pragma omp target update from(a[0:n])
    } else {
#pragma omp target update to(a[0:n])
    }
    round++;
  }
  return NULL;
}

int main(int argc, char **argv) {
  long updaters = 3;
  if (argc > 1)
    iterations = atol(argv[1]);
  if (argc > 2)
    updaters = atol(argv[2]);
  if (iterations < 1 || updaters < 1 || updaters > MAX_UPDATERS) {
    fprintf(stderr, "usage: %s [ITERATIONS [UPDATERS (1-%d)]]\n", argv[0], MAX_UPDATERS);
    return 2;
  }
  for (int k = 0; k < ARRAYS; k++) {
    arr[k] = malloc(count[k] * sizeof(int));
    canary[k] = malloc(count[k] * sizeof(int));
    for (int i = 0; i < count[k]; i++) {
      arr[k][i] = pattern(k, i);
      canary[k][i] = pattern(ARRAYS + k, i);
    }
  }
  // The device is initialised before the threads start.
  int on_device = 0;
#pragma omp target map(from : on_device)
  on_device = !omp_is_initial_device();

  pthread_t t[MAX_UPDATERS + 1];
  pthread_create(&t[0], NULL, owner, NULL);
  for (long u = 0; u < updaters; u++)
    pthread_create(&t[u + 1], NULL, updater, (void *)u);
  for (long u = 0; u <= updaters; u++)
    pthread_join(t[u], NULL);

  long arr_wrong = 0;
  for (int k = 0; k < ARRAYS; k++)
    arr_wrong += wrong_in(arr[k], k, count[k]);
  // Nothing is left mapped: a final update finds nothing to copy.
  int present = 0;
  for (int k = 0; k < ARRAYS; k++)
    present += omp_target_is_present(arr[k], omp_get_default_device()) +
               omp_target_is_present(canary[k], omp_get_default_device());
  printf("on device: %d\n", on_device);
  printf("wrong elements in the updated arrays: %ld\n", arr_wrong);
  printf("wrong elements in the canaries: %ld\n", atomic_load(&canary_wrong));
  printf("mappings left: %d\n", present);
  for (int k = 0; k < ARRAYS; k++) {
    free(arr[k]);
    free(canary[k]);
  }
  return arr_wrong || atomic_load(&canary_wrong) || present ? 1 : 0;
}
