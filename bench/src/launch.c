/* Whole-process launcher: runs a program N times and reports, per run, its
 * wall time (spawn to exit, CLOCK_MONOTONIC), peak RSS (wait4 ru_maxrss) and
 * user and system CPU time (wait4 rusage, ms).
 *
 *   launch <metric-prefix> <n> [VAR=VALUE ...] -- <program> [args ...]
 *
 * The VAR=VALUE assignments are added to the child's environment only (so an
 * LD_PRELOAD does not apply to the launcher itself). The child's stdout goes
 * to /dev/null. Prints "sample <prefix>_wall <ms>", "sample <prefix>_rss
 * <MiB>", "sample <prefix>_user <ms>" and "sample <prefix>_sys <ms>" per
 * run; exits 1 if a run fails.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: launch prefix n [VAR=VAL ...] -- prog [args]\n");
    return 2;
  }
  const char *prefix = argv[1];
  int n = atoi(argv[2]);
  int i = 3, nvars = 0;
  char *vars[64];
  for (; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (nvars < 64) vars[nvars++] = argv[i];
  if (i >= argc - 1) {
    fprintf(stderr, "launch: missing -- program\n");
    return 2;
  }
  char **prog = argv + i + 1;

  /* Child environment: ours first (overrides), then the inherited one minus
   * the variables we set. */
  size_t nenv = 0;
  while (environ[nenv]) nenv++;
  char **envp = calloc(nenv + (size_t)nvars + 1, sizeof *envp);
  size_t k = 0;
  for (int v = 0; v < nvars; v++) envp[k++] = vars[v];
  for (size_t e = 0; e < nenv; e++) {
    int dup = 0;
    for (int v = 0; v < nvars; v++) {
      size_t len = strcspn(vars[v], "=");
      if (strncmp(environ[e], vars[v], len) == 0 && environ[e][len] == '=') dup = 1;
    }
    if (!dup) envp[k++] = environ[e];
  }
  envp[k] = NULL;

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);

  for (int r = 0; r < n; r++) {
    pid_t pid;
    double t0 = now_ms();
    int err = posix_spawn(&pid, prog[0], &fa, NULL, prog, envp);
    if (err) {
      fprintf(stderr, "launch: cannot spawn %s: %s\n", prog[0], strerror(err));
      return 1;
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
      perror("launch: wait4");
      return 1;
    }
    double t1 = now_ms();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "launch: %s failed (status 0x%x)\n", prog[0], status);
      return 1;
    }
    printf("sample %s_wall %.3f\n", prefix, t1 - t0);
    printf("sample %s_rss %.3f\n", prefix, ru.ru_maxrss / 1024.0);
    printf("sample %s_user %.3f\n", prefix, ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3);
    printf("sample %s_sys %.3f\n", prefix, ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3);
  }
  return 0;
}
