// A map clause list that clang 22's descriptors cannot honour
// must fail with a clear error, never crash. For a nested struct with a
// pointer member, map(tofrom: s.in.p[0:5]) map(to: s.tag) is emitted as
// {&s, &s.tag, 4, TO|TARGET_PARAM}, {s.in.p, 20, TO|FROM}, {&s.in.p, ATTACH}:
// the struct argument covers s.tag only and the pointer s.in.p is mapped
// nowhere, so the region reads s.in.p past the end of a 4-byte device copy.
// LLVM 22.1 dereferences that and crashes (SIGSEGV); OpenMP 5.2 §5.8.3 (map
// clause: the pointer is attached to the mapped pointee) requires the region
// to see s.in.p's device pointee, which no runtime can arrange from these
// entries, so omptarget-rs reports it (with map names, i.e. -g: "cannot map ... the pointer it is
// attached through ... is not mapped") and the construct fails (fatal under
// mandatory offloading). The construct runs in a child; the parent prints
// how the child ended. Mapping the pointer member too works in both.
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct In {
  int n;
  int *p;
};
struct S {
  int tag;
  struct In in;
};

static int run(int broken) {
  struct S s;
  s.tag = 7;
  s.in.n = 5;
  s.in.p = malloc(5 * sizeof(int));
  for (int i = 0; i < 5; i++)
    s.in.p[i] = i;
  int seen = -1;
  if (broken) {
#pragma omp target map(tofrom : s.in.p[0:5]) map(to : s.tag) map(from : seen)
    {
      for (int i = 0; i < 5; i++)
        s.in.p[i] += 10;
      seen = s.tag;
    }
  } else {
#pragma omp target map(to : s.in.p) map(tofrom : s.in.p[0:5]) map(to : s.tag) map(from : seen)
    {
      for (int i = 0; i < 5; i++)
        s.in.p[i] += 10;
      seen = s.tag;
    }
  }
  printf("seen=%d p=%d %d %d %d %d\n", seen, s.in.p[0], s.in.p[1], s.in.p[2], s.in.p[3], s.in.p[4]);
  return 0;
}

int main(void) {
  for (int broken = 0; broken < 2; broken++) {
    int fds[2];
    if (pipe(fds) != 0)
      return 3;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(fds[1], 2);
      close(fds[0]);
      run(broken);
      fflush(stdout);
      _exit(0);
    }
    close(fds[1]);
    static char err[1 << 16];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], err + n, sizeof err - 1 - n)) > 0)
      n += (size_t)r;
    err[n] = 0;
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    const char *how = WIFEXITED(st) ? (WEXITSTATUS(st) == 0 ? "exit 0" : "exit non-zero")
                      : WTERMSIG(st) == SIGSEGV ? "SIGSEGV"
                      : WTERMSIG(st) == SIGABRT ? "SIGABRT"
                                                : "other signal";
    printf("%s: %s, error names s.in.p: %s\n", broken ? "s.in.p[0:5] + s.tag" : "with s.in.p mapped", how,
           strstr(err, "cannot map 's.in.p[0:5]'") ? "yes" : "no");
  }
  return 0;
}
