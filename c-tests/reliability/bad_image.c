// Corrupt and unloadable images through liboffload's olCreateProgram, on
// omptarget-rs (compiled against LLVM 22.1's OffloadAPI.h). Each program-
// header corruption of elf_patch.h (which crashed dlopen or ended the
// process with status 127) must be refused with OL_ERRC_INVALID_BINARY and
// error details naming the program header; an image whose dependency is
// missing must be refused with details naming the library. Afterwards the
// valid image still loads, and its kernel runs and computes. Prints one line
// per case and "bad_image: N refused, valid image ok"; exit 0 when all held.
// Usage: bad_image KERNEL.so MISSING_DEP.so [load-only]
// (KERNEL.so: c-tests/offload/kernel.c). With load-only the valid image is
// loaded and destroyed but no symbol looked up: olGetSymbol keeps each
// symbol's name for the life of the process, which valgrind's leak check
// (run.sh's valgrind check) reports as definitely lost.
#include <stdbool.h> // before OffloadAPI.h, which uses bool
#include <stdint.h>
#include <offload/OffloadAPI.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_patch.h"

#define OK(call)                                                                                         \
  do {                                                                                                   \
    ol_result_t r_ = (call);                                                                             \
    if (r_) {                                                                                            \
      fprintf(stderr, "line %d: %s -> %d %s\n", __LINE__, #call, r_->Code, r_->Details ? r_->Details : ""); \
      exit(1);                                                                                           \
    }                                                                                                    \
  } while (0)

static ol_device_handle_t cpu, host;
static bool find_devices(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  OK(olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t));
  if (t == OL_DEVICE_TYPE_CPU && !cpu) cpu = d;
  if (t == OL_DEVICE_TYPE_HOST) host = d;
  return true;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*size);
  if (!b || fread(b, 1, *size, f) != *size) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  return b;
}

// olCreateProgram must refuse `image` with details containing `want`.
static int refused(const char *name, const unsigned char *image, size_t size, const char *want) {
  ol_program_handle_t p = NULL;
  ol_result_t r = olCreateProgram(cpu, image, size, &p);
  if (!r) {
    printf("FAIL %s: olCreateProgram succeeded\n", name);
    olDestroyProgram(p);
    return 0;
  }
  const char *details = r->Details ? r->Details : "";
  if (r->Code != OL_ERRC_INVALID_BINARY || !strstr(details, want)) {
    printf("FAIL %s: code %d, details '%s' (want OL_ERRC_INVALID_BINARY and '%s')\n", name, r->Code, details, want);
    return 0;
  }
  printf("%s: refused: %s\n", name, details);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bad_image KERNEL.so MISSING_DEP.so\n");
    return 2;
  }
  size_t size, missing_size;
  unsigned char *valid = read_file(argv[1], &size);
  unsigned char *missing = read_file(argv[2], &missing_size);
  OK(olInit());
  OK(olIterateDevices(find_devices, NULL));
  if (!cpu || !host) {
    fprintf(stderr, "no CPU device or no host device\n");
    return 1;
  }
  static const struct {
    const char *name, *want;
  } cases[] = {{"dynamic", "(PT_DYNAMIC) (0x8000"}, {"memsz", "p_filesz 0x"}, {"relro", "(PT_GNU_RELRO) at 0x"}};
  int n = 0, ok = 0;
  unsigned char *copy = malloc(size);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memcpy(copy, valid, size);
    if (!elf_corrupt(copy, cases[i].name)) {
      printf("FAIL %s: the image has no program header to corrupt\n", cases[i].name);
    } else {
      ok += refused(cases[i].name, copy, size, cases[i].want);
    }
    n++;
  }
  ok += refused("missing dependency", missing, missing_size, "libomptarget_rs_missing_dep.so: cannot open shared object file");
  n++;

  // The valid image still loads and runs.
  ol_program_handle_t prog;
  ol_symbol_handle_t vadd;
  OK(olCreateProgram(cpu, valid, size, &prog));
  if (argc > 3 && !strcmp(argv[3], "load-only")) {
    OK(olDestroyProgram(prog));
    OK(olShutDown());
    free(copy);
    free(valid);
    free(missing);
    printf("bad_image: %d of %d refused, valid image ok (loaded)\n", ok, n);
    return ok == n ? 0 : 1;
  }
  OK(olGetSymbol(prog, "vadd", OL_SYMBOL_KIND_KERNEL, &vadd));
  int64_t a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {0};
  int64_t *da, *db, *dout;
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof a, (void **)&da));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof b, (void **)&db));
  OK(olMemAlloc(cpu, OL_ALLOC_TYPE_DEVICE, sizeof out, (void **)&dout));
  ol_queue_handle_t q;
  OK(olCreateQueue(cpu, &q));
  OK(olMemcpy(q, da, cpu, a, host, sizeof a));
  OK(olMemcpy(q, db, cpu, b, host, sizeof b));
  struct {
    int64_t *out, *a, *b;
    int64_t n;
  } args = {dout, da, db, 4};
  ol_kernel_launch_size_args_t ls = {1, {1, 1, 1}, {1, 1, 1}, 0};
  OK(olLaunchKernel(q, cpu, vadd, &args, sizeof args, &ls));
  OK(olMemcpy(q, out, host, dout, cpu, sizeof out));
  OK(olSyncQueue(q));
  int computed = 1;
  for (int i = 0; i < 4; i++) computed &= out[i] == a[i] + b[i];
  OK(olDestroyQueue(q));
  OK(olMemFree(da));
  OK(olMemFree(db));
  OK(olMemFree(dout));
  OK(olDestroyProgram(prog));
  OK(olShutDown());
  free(copy);
  free(valid);
  free(missing);
  if (!computed) {
    printf("FAIL the valid image's kernel computed wrong results\n");
    return 1;
  }
  printf("bad_image: %d of %d refused, valid image ok\n", ok, n);
  return ok == n ? 0 : 1;
}
