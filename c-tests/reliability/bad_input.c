/* Bad input that crashed the runtime; LLVM 22.1 crashes
 * on each too, so this harness runs only on ours (c-tests/reliability/run.sh).
 * Usage: bad_input <devimg.so> <case>; one case per process:
 *   truncated  the first half of a valid device image is registered and a
 *              kernel launched: a clear "truncated or malformed ELF image"
 *              error and the failed-load abort (134), never SIGBUS;
 *   null       __tgt_target_data_begin_mapper with a NULL host pointer and
 *              64 bytes: reported, nothing mapped, the program goes on;
 *   negative   the same call with size -8 (OpenMP 5.2 5.2.5: a section
 *              length is non-negative; a non-conforming program): reported,
 *              nothing mapped, the program goes on;
 *   manyargs   a kernel launch with 2^21 arguments: the excess over the host
 *              plugin's limit is reported and the launch fails (abort 134
 *              with LLVM's launch-failure message), no stack overflow;
 *   dynamic, memsz, relro
 *              a program-header corruption of the image (elf_patch.h) that
 *              crashed or ended the process inside dlopen: refused before
 *              loading with a message naming the program header, and the
 *              failed-load abort (134);
 *   launch     a plain launch on the image as given (run.sh passes one that
 *              needs a library that does not exist: the message names it). */
#include "../abi/abi_util.h"
#include "elf_patch.h"

static const char r_add = 0;

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  const char *c = argc > 2 ? argv[2] : "";
  if (!strcmp(c, "truncated")) image.size /= 2;
  int corrupt = elf_corrupt(image.data, c);
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  int a[4] = {1, 2, 3, 4};
  if (!strcmp(c, "truncated") || corrupt || !strcmp(c, "launch")) {
    void *kb[3] = {a, ABI_LIT(4), ABI_LIT(1)}, *kp[3] = {a, ABI_LIT(4), ABI_LIT(1)};
    int64_t ks[3] = {sizeof a, 8, 8};
    int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                     OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                     OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
    KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
    printf("launching on a %s image\n", !strcmp(c, "launch") ? "given" : corrupt ? "corrupted" : "truncated");
    int rc = __tgt_target_kernel(abi_loc(), 0, 1, 1, (void *)&r_add, &k);
    printf("launch returned %d\n", rc);
  } else if (!strcmp(c, "null") || !strcmp(c, "negative")) {
    int null = !strcmp(c, "null");
    void *b[1] = {null ? NULL : a}, *p[1] = {null ? NULL : a};
    int64_t s[1] = {null ? 64 : -8}, t[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM};
    __tgt_target_data_begin_mapper(abi_loc(), 0, 1, b, p, s, t, NULL, NULL);
    printf("after begin: a present=%d\n", omp_target_is_present(a, 0));
    __tgt_target_data_end_mapper(abi_loc(), 0, 1, b, p, s, t, NULL, NULL);
    printf("after end: a[0]=%d\n", a[0]);
  } else if (!strcmp(c, "manyargs")) {
    uint32_t n = 1u << 21;
    void **kb = abi_alloc8(n * sizeof(void *)), **kp = abi_alloc8(n * sizeof(void *));
    int64_t *ks = abi_alloc8(n * sizeof(int64_t)), *kt = abi_alloc8(n * sizeof(int64_t));
    for (uint32_t i = 0; i < n; i++) {
      kb[i] = kp[i] = ABI_LIT(i);
      ks[i] = 8;
      kt[i] = OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM;
    }
    KernelArgsTy k = abi_kargs(3, n, kb, kp, ks, kt);
    printf("launching with %u arguments\n", n);
    int rc = __tgt_target_kernel(abi_loc(), 0, 1, 1, (void *)&r_add, &k);
    printf("launch returned %d\n", rc);
  } else {
    printf("unknown case '%s'\n", c);
    return 3;
  }
  __tgt_unregister_lib(&d.desc);
  printf("done\n");
  return 0;
}
