// Memory at scale: N distinct mappings entered and exited must give their
// memory back. `target enter data map(to: a[i:1])` for N elements of one
// array (or, with "blocks", N distinct malloc blocks), a target region on
// every 1000th mapping (present: it adds 1 on the device), then `target
// exit data map(from: a[i:1])` for all. Resident memory (/proc/self/statm)
// is read after one warm-up offload and after the exits, each after
// malloc_trim(0), so only what the runtime keeps counts.
// Usage: map_memory N [array|blocks] [MAX_MIB]
// stdout (identical on LLVM 22.1's runtime and ours, the differential part):
//   "map_memory: N mappings (array) entered and exited, checksum C"
// stderr: "map_memory: resident +K KiB after N mappings entered and exited";
// with MAX_MIB, exit 1 when the growth is MAX_MIB MiB or more.
#include <malloc.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long resident_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2) {
    fprintf(stderr, "map_memory: cannot read /proc/self/statm\n");
    exit(2);
  }
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int blocks = argc > 2 && !strcmp(argv[2], "blocks");
  double max_mib = argc > 3 ? atof(argv[3]) : 0;
  if (n <= 0) {
    fprintf(stderr, "usage: map_memory N [array|blocks] [MAX_MIB]\n");
    return 2;
  }
  // The host data: one array, or one 8-byte block per mapping.
  long *a = NULL;
  long **p = NULL;
  if (blocks) {
    p = malloc(n * sizeof *p);
    for (long i = 0; i < n; i++) {
      p[i] = malloc(sizeof(long));
      *p[i] = i;
    }
  } else {
    a = malloc(n * sizeof *a);
    for (long i = 0; i < n; i++) a[i] = i;
  }
#define ELEM(i) (blocks ? p[i] : &a[i])

  // Warm-up: the runtime, its devices and the image are loaded.
  int warm = 0;
#pragma omp target map(tofrom : warm)
  warm += 1;
  malloc_trim(0);
  long before = resident_kib();

  for (long i = 0; i < n; i++) {
    long *e = ELEM(i);
#pragma omp target enter data map(to : e[0 : 1])
  }
  for (long i = 0; i < n; i += 1000) {
    long *e = ELEM(i);
#pragma omp target map(tofrom : e[0 : 1])
    e[0] += 1;
  }
  for (long i = 0; i < n; i++) {
    long *e = ELEM(i);
#pragma omp target exit data map(from : e[0 : 1])
  }
  malloc_trim(0);
  long after = resident_kib();

  long long checksum = 0;
  for (long i = 0; i < n; i++) checksum += *ELEM(i) * (i % 7 + 1);
  int still = 0;
  for (long i = 0; i < n; i += n / 100 + 1) still += omp_target_is_present(ELEM(i), omp_get_default_device());
  printf("map_memory: %ld mappings (%s) entered and exited, checksum %lld, still present %d, warm-up %d\n", n,
         blocks ? "blocks" : "array", checksum, still, warm);
  long grew = after - before;
  fprintf(stderr, "map_memory: resident %+ld KiB after %ld mappings entered and exited\n", grew, n);
  if (blocks) {
    for (long i = 0; i < n; i++) free(p[i]);
    free(p);
  } else {
    free(a);
  }
  if (max_mib > 0 && grew >= max_mib * 1024) {
    fprintf(stderr, "map_memory: FAIL: %.1f MiB kept, the bound is %.0f MiB\n", grew / 1024.0, max_mib);
    return 1;
  }
  return 0;
}
