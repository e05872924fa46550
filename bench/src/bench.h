/* Shared helpers for the omptarget-rs benchmark programs (bench/run.sh).
 *
 * Output protocol (stdout, one record per line, parsed by run.sh):
 *   sample <metric> <value>   one measurement; run.sh takes the median of all
 *                             samples of a metric over all runs of a runtime
 *   check <key> <value>       a computed result; must be identical between
 *                             LLVM's runtime and ours, otherwise run.sh fails
 * Anything else on stdout is ignored. A program exits non-zero when its own
 * result validation fails.
 */
#ifndef OMPTARGET_RS_BENCH_H
#define OMPTARGET_RS_BENCH_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define BENCH_HAVE_CALLGRIND 1
#endif
#endif
#ifndef BENCH_HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

static inline uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void bench_sample(const char *metric, double value) {
  printf("sample %s %.3f\n", metric, value);
  fflush(stdout);
}

static inline void bench_check(const char *key, long long value) {
  printf("check %s %lld\n", key, value);
  fflush(stdout);
}

#define BENCH_FAIL(...)                                                        \
  do {                                                                         \
    fprintf(stderr, "bench: FAILED: " __VA_ARGS__);                            \
    fprintf(stderr, "\n");                                                     \
    exit(1);                                                                   \
  } while (0)

/* Keep a value alive without generating a memory access. */
#define BENCH_USE(x) __asm__ volatile("" : : "r"(x))

static inline long bench_arg_long(int argc, char **argv, int i, long dflt) {
  return argc > i ? strtol(argv[i], NULL, 10) : dflt;
}

#endif
