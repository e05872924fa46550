/* spmd_test.c - self-checking ordinary OpenMP target regions (no ompx_bare)
 * for the test-only device runtime c-tests/gpu/rt/omprt.c: SPMD, generic and
 * generic-SPMD kernels, schedules, reductions, critical, the omp_* queries.
 * Prints one line per case and "N passed, M failed" (deterministic: no
 * device, team or thread counts). Runs anywhere: on a host-offload device
 * (the .expected), on a GPU, and on the stand-ins. Built with
 * -DNO_DEVICE_LIBM (spmd_test.flags): without libdevice there is no device
 * libm. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int npass, nfail;
static void check(const char *name, int ok) {
  printf("%-4s %s\n", ok ? "ok" : "FAIL", name);
  if (ok) npass++; else nfail++;
}

#pragma omp declare target
int g_counter;
__attribute__((noinline)) static void bump(int *p, int v) { *p += v; }
#pragma omp end declare target

int main(void) {
  const int n = 100003; /* not a multiple of anything */
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double *d = malloc(n * sizeof *d);
  for (int i = 0; i < n; i++) { x[i] = (float)(i % 97); y[i] = 1.0f; d[i] = i * 0.5; }
  check("omp_get_num_devices() >= 1", omp_get_num_devices() >= 1);

  /* 1. SPMD saxpy */
  float a = 3.0f;
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
  { int ok = 1; for (int i = 0; i < n; i++) ok &= y[i] == 3.0f * (float)(i % 97) + 1.0f; check("spmd saxpy", ok); }

  /* 2. long induction variable + num_teams/thread_limit + simd */
  long m = n;
#pragma omp target teams distribute parallel for simd num_teams(37) thread_limit(96) map(tofrom: d[0:m])
  for (long i = 0; i < m; i++) d[i] = d[i] * 2.0 + 1.0;
  { int ok = 1; for (int i = 0; i < n; i++) ok &= d[i] == i * 1.0 + 1.0; check("long iv, num_teams(37) thread_limit(96), simd", ok); }

  /* 3. collapse(2) with unsigned bounds */
  unsigned R = 301, C = 333;
  int *grid = calloc(R * C, sizeof *grid);
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: grid[0:R*C])
  for (unsigned r = 0; r < R; r++)
    for (unsigned c = 0; c < C; c++) grid[r * C + c] += (int)(r + 2 * c);
  { int ok = 1; for (unsigned r = 0; r < R; r++) for (unsigned c = 0; c < C; c++) ok &= grid[r * C + c] == (int)(r + 2 * c); check("collapse(2) unsigned", ok); }

  /* 4. reductions: +, max, multiple variables */
  double sum = 0; float mx = -1; long cnt = 0;
#pragma omp target teams distribute parallel for reduction(+: sum, cnt) reduction(max: mx) map(to: x[0:n])
  for (int i = 0; i < n; i++) { sum += x[i]; cnt += 1; mx = x[i] > mx ? x[i] : mx; }
  { double s = 0; for (int i = 0; i < n; i++) s += x[i]; check("reduction(+,max) over teams", sum == s && cnt == n && mx == 96.0f); }

  /* 5. schedule(dynamic, 7) and schedule(guided) */
  int *hits = calloc(n, sizeof *hits);
#pragma omp target teams distribute parallel for schedule(dynamic, 7) map(tofrom: hits[0:n])
  for (int i = 0; i < n; i++) hits[i] += 1;
#pragma omp target teams distribute parallel for schedule(guided) map(tofrom: hits[0:n])
  for (int i = 0; i < n; i++) hits[i] += 2;
  { int ok = 1; for (int i = 0; i < n; i++) ok &= hits[i] == 3; check("schedule(dynamic,7) + schedule(guided)", ok); }

  /* 6. atomic + critical */
  long acc[2] = {0, 0};
#pragma omp target teams distribute parallel for map(tofrom: acc[0:2])
  for (int i = 0; i < 10000; i++) {
#pragma omp atomic
    acc[0] += i;
#pragma omp critical
    acc[1] += 2 * i;
  }
  check("atomic + critical", acc[0] == 49995000L && acc[1] == 2 * 49995000L);

  /* 7. omp_* queries inside SPMD */
  int q[4] = {0, 0, 0, 0};
#pragma omp target teams num_teams(5) thread_limit(64) map(tofrom: q[0:4])
#pragma omp parallel
  {
    if (omp_get_thread_num() == 0) {
#pragma omp atomic
      q[0] += 1;                        /* once per team */
    }
#pragma omp atomic
    q[1] += 1;                          /* once per thread */
    if (omp_get_team_num() == 0 && omp_get_thread_num() == 0) { q[2] = omp_get_num_threads(); q[3] = omp_get_num_teams(); }
  }
  check("omp_get_thread_num/num_threads/team_num/num_teams", q[0] == q[3] && q[1] == q[3] * q[2] && q[2] >= 1 && q[3] >= 1);

  /* 8. barrier inside a parallel region */
  int *buf = calloc(64 * 8, sizeof *buf), bad = 0;
#pragma omp target teams num_teams(8) thread_limit(64) map(tofrom: buf[0:512], bad)
#pragma omp parallel num_threads(64)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads(), base = omp_get_team_num() * 64;
    buf[base + t] = t + 1;
#pragma omp barrier
    if (buf[base + (t + 1) % nt] != (t + 1) % nt + 1) {
#pragma omp atomic
      bad += 1;
    }
  }
  check("barrier in parallel", bad == 0);

  /* 9. generic kernel: sequential team code + parallel for + side effects */
  int *tv = calloc(8 * 64, sizeof *tv), tsum[8];
  memset(tsum, 0, sizeof tsum);
#pragma omp target teams num_teams(8) map(tofrom: tv[0:512], tsum[0:8])
  for (int t = omp_get_team_num(); t < 8; t += omp_get_num_teams()) { /* any team count */
    int local = 10 * t;                 /* team-shared, captured by reference */
    bump(&tsum[t], 1);                  /* sequential side effect */
#pragma omp parallel for
    for (int i = 0; i < 64; i++) tv[t * 64 + i] = local + i;
    bump(&tsum[t], local);
  }
  { int ok = 1; for (int t = 0; t < 8; t++) { ok &= tsum[t] == 1 + 10 * t; for (int i = 0; i < 64; i++) ok &= tv[t * 64 + i] == 10 * t + i; } check("generic: team code + parallel for", ok); }

  /* 10. target (single thread) + declare-target global + target update */
  g_counter = 5;
#pragma omp target update to(g_counter)
#pragma omp target map(tofrom: y[0:4])
  {
    for (int i = 0; i < 4; i++) y[i] = (float)(g_counter + i);
    g_counter = 42;
  }
#pragma omp target update from(g_counter)
  check("target (serial) + declare target global", y[0] == 5 && y[3] == 8 && g_counter == 42);

  /* 11. teams distribute (no parallel) */
  int *td = calloc(1000, sizeof *td);
#pragma omp target teams distribute map(tofrom: td[0:1000])
  for (int i = 0; i < 1000; i++) td[i] = i * 3;
  { int ok = 1; for (int i = 0; i < 1000; i++) ok &= td[i] == i * 3; check("teams distribute", ok); }

  /* 12. nested parallel (serialised) + num_threads(1) + if(0) */
  int nest[3] = {0, 0, 0};
#pragma omp target teams num_teams(1) map(tofrom: nest[0:3])
#pragma omp parallel num_threads(32)
  {
#pragma omp parallel
    {
      if (omp_get_thread_num() == 0 && omp_get_num_threads() == 1) {
#pragma omp atomic
        nest[0] += 1;
      }
    }
  }
#pragma omp target map(tofrom: nest[0:3])
  {
#pragma omp parallel if(0)
    { nest[1] = omp_get_num_threads(); }
#pragma omp parallel num_threads(1)
    { nest[2] = omp_get_num_threads() + 10; }
  }
  check("nested parallel / if(0) / num_threads(1)", nest[0] >= 1 && nest[1] == 1 && nest[2] == 11);

#ifndef NO_DEVICE_LIBM
  /* 13. math library (libdevice on NVPTX) */
  float ms = 0;
#pragma omp target teams distribute parallel for reduction(+: ms) map(to: x[0:1000])
  for (int i = 0; i < 1000; i++) ms += sinf(x[i]) * sinf(x[i]) + cosf(x[i]) * cosf(x[i]);
  check("sinf/cosf", fabsf(ms - 1000.0f) < 0.5f);
#endif

  printf("%d passed, %d failed\n", npass, nfail);
  return nfail != 0;
}
