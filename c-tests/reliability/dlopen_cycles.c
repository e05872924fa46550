// dlopen/dlclose cycles: CYCLES times (argv[2], default
// 1000) dlopen the library argv[1] (target regions, a declare-target
// global), offload through it, dlclose it. After a warm-up of 20 cycles the
// resident set, the open descriptors and the /proc/self/maps lines are
// measured, and again at the end; prints the growth and exits 1 unless RSS
// grew by less than 2 MiB and neither descriptors nor maps grew.
#include <dirent.h>
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) v = atol(line + 6);
  if (f) fclose(f);
  return v;
}
static int fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  while (d && readdir(d)) n++;
  if (d) closedir(d);
  return n;
}
static int maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  int n = 0, c;
  while (f && (c = fgetc(f)) != EOF) n += c == '\n';
  if (f) fclose(f);
  return n;
}

static int cycle(const char *lib, int k) {
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*run)(int *, int) = (int (*)(int *, int))dlsym(h, "lib_run");
  int a[16];
  for (int i = 0; i < 16; i++) a[i] = i + k;
  int v = run ? run(a, 16) : -2;
  int ok = v == 1; // each load starts with a fresh device global
  for (int i = 0; i < 16; i++) ok &= a[i] == i + k + 1;
  dlclose(h);
  if (!ok) printf("cycle %d: wrong result (counter %d)\n", k, v);
  return !ok;
}

int main(int argc, char **argv) {
  const char *lib = argc > 1 ? argv[1] : "./dl_cycle_lib.so";
  int cycles = argc > 2 ? atoi(argv[2]) : 1000, warm = 20;
  int dummy = 0;
#pragma omp target map(tofrom : dummy) // the runtime and devices up first
  dummy += 1;
  for (int k = 0; k < warm; k++)
    if (cycle(lib, k)) return 1;
  long rss0 = rss_kib();
  int fd0 = fds(), maps0 = maps();
  for (int k = 0; k < cycles; k++)
    if (cycle(lib, k)) return 1;
  long drss = rss_kib() - rss0;
  int dfd = fds() - fd0, dmaps = maps() - maps0;
  printf("dlopen_cycles: %d cycles: RSS %+ld KiB, fds %+d, maps lines %+d\n", cycles, drss, dfd, dmaps);
  return drss < 2048 && dfd <= 0 && dmaps <= 0 ? 0 : 1;
}
