// Fork safety: four parent threads offload without pause
// (target regions with map(tofrom), enter/exit data) while the main thread
// forks FORKS times (default 60). Usage: fork_offload [FORKS [threads|nowait]]. Each child offloads right away (a fresh
// array and an array the parent had mapped) and checks the results; the
// parent waits for it with a deadline, so a child that inherited a runtime
// lock held by a vanished thread shows as a hang ("child N hung"), not as a
// stuck test. Prints "fork_offload: N children ok" and exits 0 when all
// children offloaded correctly.
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 256
static atomic_int stop;
static atomic_long parent_iters;

static int offload_check(int dev, int seed) {
  int a[N];
  for (int i = 0; i < N; i++) a[i] = i + seed;
#pragma omp target map(tofrom : a) device(dev)
  for (int i = 0; i < N; i++) a[i] = a[i] * 2 + 1;
  for (int i = 0; i < N; i++)
    if (a[i] != (i + seed) * 2 + 1) return 1;
  return 0;
}

static int shared[4][N];

static void *worker(void *arg) {
  int id = (int)(long)arg, dev = id % omp_get_num_devices();
  int *b = shared[id];
  long it = 0;
  while (!atomic_load(&stop)) {
    if (offload_check(dev, id + (int)it)) {
      fprintf(stderr, "parent thread %d: wrong result\n", id);
      exit(3);
    }
#pragma omp target enter data map(to : b[0 : N]) device(dev)
#pragma omp target map(tofrom : b[0 : N]) device(dev)
    for (int i = 0; i < N; i++) b[i] += 1;
#pragma omp target exit data map(from : b[0 : N]) device(dev)
    it++;
  }
  atomic_fetch_add(&parent_iters, it);
  return NULL;
}

// Child mode "threads": four child threads offload at once (contended
// runtime locks in the child, which parent threads may have been parked on
// at the fork). Mode "nowait": the child's regions are target nowait tasks
// (libomp's hidden helpers, recreated in the child) waited for by taskwait.
static int child_mode; // 0 plain, 1 threads, 2 nowait

static int child_threads(void) {
  int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
  {
    int t = omp_get_thread_num();
    int *b = shared[t], dev = t % omp_get_num_devices();
    for (int k = 0; k < 20; k++) {
      bad += offload_check(dev, 100 * t + k);
#pragma omp target enter data map(to : b[0 : N]) device(dev)
#pragma omp target exit data map(release : b[0 : N]) device(dev)
    }
  }
  return bad ? 5 : 0;
}

static int child_nowait(void) {
  int a[8][N];
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < N; i++) a[k][i] = i + k;
  for (int k = 0; k < 8; k++) {
    int *p = a[k];
#pragma omp target nowait map(tofrom : p[0 : N]) device(k % omp_get_num_devices())
    for (int i = 0; i < N; i++) p[i] = p[i] * 2 + 1;
  }
#pragma omp taskwait
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < N; i++)
      if (a[k][i] != (i + k) * 2 + 1) return 6;
  return 0;
}

static int child_main(void) {
  if (child_mode == 1 && child_threads()) return 5;
  if (child_mode == 2 && child_nowait()) return 6;
  // The parent threads' arrays: the same mapping-table shards they lock.
  for (int k = 0; k < 4; k++) {
    int *b = shared[k], dev = k % omp_get_num_devices();
#pragma omp target enter data map(to : b[0 : N]) device(dev)
#pragma omp target exit data map(release : b[0 : N]) device(dev)
  }
  for (int d = 0; d < omp_get_num_devices(); d++)
    for (int k = 0; k < 5; k++)
      if (offload_check(d, 1000 * d + k)) return 2;
  int on_device = 1;
#pragma omp target map(from : on_device)
  on_device = omp_is_initial_device();
  return on_device == 0 ? 0 : 4;
}

int main(int argc, char **argv) {
  int forks = argc > 1 ? atoi(argv[1]) : 60;
  if (argc > 2) child_mode = !strcmp(argv[2], "threads") ? 1 : !strcmp(argv[2], "nowait") ? 2 : 0;
  if (offload_check(0, 7)) return 1; // runtime up before the threads start
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  int ok = 0, bad = 0;
  for (int f = 0; f < forks; f++) {
    struct timespec d = {0, 2000000};
    nanosleep(&d, NULL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(child_main());
    int status = 0;
    int waited_ms = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
      if (++waited_ms == 10000) { // 10 s: the child is stuck
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fprintf(stderr, "child %d hung\n", f);
        status = -1;
        break;
      }
    }
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      ok++;
    } else {
      if (status != -1)
        fprintf(stderr, "child %d failed: %s %d\n", f, WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      bad++;
    }
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  printf("fork_offload: %d children ok, %d failed (parent threads ran %ld iterations)\n", ok, bad,
         atomic_load(&parent_iters));
  return bad ? 1 : 0;
}
