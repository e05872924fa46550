// Teardown with work in flight in a dlopen'd library:
// the program dlopens teardown_dl_lib.so, which queues 8 target nowait
// regions and a ninth that waits for them and checks their results; then
// (argv[2]) main returns ("return", status 0), calls exit(3) ("exit"), or
// starts a thread that calls exit(4) ("thread-exit": a thread that never
// offloaded), without waiting and without dlclose. The library is still
// open at exit, so its descriptor is unregistered by the exit handlers while
// libomp's hidden helpers may still launch its regions (they run until
// libomp's destructor has waited for them). Expected: the program's status
// (0, 3 or 4) and "teardown_dl: 8 regions complete, results ok" from the
// ninth region; never an abort (134; 22.1 and ours before: abort, segfault
// or wrong results).
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *exit_from_thread(void *arg) {
  (void)arg;
  exit(4);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: teardown_dl LIB.so return|exit\n");
    return 2;
  }
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  void (*launch)(void) = (void (*)(void))dlsym(h, "tdl_launch");
  if (!launch) return 2;
  launch();
  printf("main %s with 9 target nowait regions of a dlopen'd library queued\n", argv[2]);
  fflush(stdout);
  if (!strcmp(argv[2], "exit")) exit(3);
  if (!strcmp(argv[2], "thread-exit")) {
    pthread_t t;
    pthread_create(&t, NULL, exit_from_thread, NULL);
    pthread_join(t, NULL);
  }
  return 0;
}
