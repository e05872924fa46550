/* Malformed non-contiguous `target update` descriptors
 * (abi-reference 6.10). For a NON_CONTIG entry ArgSizes[i] is the number of
 * dimensions and ArgPtrs[i] points to that many {offset, count, stride}
 * descriptors. clang 22 sometimes passes, for the NON_CONTIG component of a
 * strided update through a mapper, the byte size instead (4096 where 2
 * belongs), and LLVM 22.1 reads 4096 descriptors off a small array and
 * crashes (SIGSEGV here: the descriptors end a page that is followed by an
 * inaccessible one). Ours rejects a count over 32 and a descriptor range that
 * is not readable memory with a message naming the variable; the construct
 * then fails as any failed update does (fatal under mandatory offloading).
 * Each case runs in a child process; the parent prints how it ended and
 * whether the child's stderr named the variable. Well-formed updates, direct
 * and through a mapper, move exactly the section's elements in both. */
#define _DEFAULT_SOURCE
#include "abi_util.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

void __tgt_push_mapper_component(void *Handle, void *Base, void *Begin, int64_t Size, int64_t Type, void *Name);

#define NON_CONTIG ((int64_t)0x100000000000)

typedef struct {
  uint64_t offset, count, stride;
} dim_t;

static const char r_holder = 0;
static const char var_name[] = ";vec[0:3:2];non_contig_malformed.c;30;1;;";
static int vec[8];
/* What the mapper pushes: set by the case before the update. */
static void *m_begin;
static int64_t m_size;

static void mapper(void *handle, void *base, void *begin, int64_t size, int64_t type, void *name) {
  (void)begin, (void)size, (void)type, (void)name;
  __tgt_push_mapper_component(handle, base, m_begin, m_size, OMP_TGT_MAPTYPE_FROM | NON_CONTIG, (void *)var_name);
}

/* Two descriptors that end a readable page; the next page is PROT_NONE. */
static dim_t *descriptors_at_page_end(void) {
  long pg = sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m + pg, pg, PROT_NONE) != 0) {
    printf("mmap failed\n");
    exit(3);
  }
  dim_t *d = (dim_t *)(m + pg) - 2;
  /* vec[0:3:2]: elements 0, 2, 4 (a zero lower bound: both runtimes agree), one int each. */
  d[0] = (dim_t){0, 3, 2 * sizeof(int)};
  d[1] = (dim_t){0, 1, sizeof(int)};
  return d;
}

static void run_case(const char *c, abi_buf image) {
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_holder, "k3_holder");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  for (int i = 0; i < 8; i++)
    vec[i] = i;
  void *b[1] = {vec}, *p[1] = {vec};
  int64_t s[1] = {sizeof vec}, to[1] = {OMP_TGT_MAPTYPE_TO};
  __tgt_target_data_begin_mapper(abi_loc(), 0, 1, b, p, s, to, NULL, NULL);
  int neg[8];
  for (int i = 0; i < 8; i++)
    neg[i] = -i;
  omp_target_memcpy(omp_get_mapped_ptr(vec, 0), neg, sizeof neg, 0, 0, 0, omp_get_initial_device());

  dim_t *desc = descriptors_at_page_end();
  int64_t dims = 2;
  void *dp = desc;
  int via_mapper = strstr(c, "mapper") != NULL;
  if (strncmp(c, "bytes", 5) == 0)
    dims = 4096; /* the clang 22 bug: a byte size */
  else if (strncmp(c, "unreadable", 10) == 0)
    dims = 8; /* plausible count, but only 2 descriptors are readable */
  else if (strncmp(c, "null", 4) == 0)
    dp = NULL;
  void *ub[1] = {vec}, *up[1] = {dp}, *names[1] = {(void *)var_name}, *mappers[1] = {NULL};
  int64_t us[1] = {dims}, ut[1] = {OMP_TGT_MAPTYPE_FROM | NON_CONTIG};
  if (via_mapper) {
    m_begin = dp;
    m_size = dims;
    up[0] = vec;
    us[0] = sizeof vec;
    ut[0] = OMP_TGT_MAPTYPE_FROM;
    mappers[0] = (void *)mapper;
  }
  __tgt_target_data_update_mapper(abi_loc(), 0, 1, ub, up, us, ut, (void **)names, mappers);
  printf("%s: host vec =", c);
  for (int i = 0; i < 8; i++)
    printf(" %d", vec[i]);
  printf("\n");
  fflush(stdout);
  int64_t del[1] = {OMP_TGT_MAPTYPE_DELETE};
  __tgt_target_data_end_mapper(abi_loc(), 0, 1, b, p, s, del, NULL, NULL);
  __tgt_unregister_lib(&d.desc);
}

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  const char *cases[] = {"good_direct", "good_mapper", "bytes_direct", "bytes_mapper",
                         "unreadable_direct", "unreadable_mapper", "null_direct"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int pipefd[2];
    if (pipe(pipefd) != 0)
      return 3;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(pipefd[1], 2);
      close(pipefd[0]);
      run_case(cases[i], image);
      _exit(0);
    }
    close(pipefd[1]);
    static char err[1 << 16];
    size_t n = 0;
    ssize_t r;
    while ((r = read(pipefd[0], err + n, sizeof err - 1 - n)) > 0)
      n += (size_t)r;
    err[n] = 0;
    close(pipefd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st))
      printf("%s: exit %d", cases[i], WEXITSTATUS(st));
    else
      printf("%s: signal %d (%s)", cases[i], WTERMSIG(st), WTERMSIG(st) == SIGSEGV ? "SIGSEGV" : WTERMSIG(st) == SIGABRT ? "SIGABRT" : WTERMSIG(st) == SIGBUS ? "SIGBUS" : "other");
    printf(", stderr names the variable: %s\n", strstr(err, "non-contiguous update of 'vec") ? "yes" : "no");
    if (getenv("SHOW_STDERR"))
      fputs(err, stderr);
  }
  return 0;
}
