/* How map entries become kernel arguments (abi-reference 5.1, 5.6, 6.11):
 * LITERAL values, PRIVATE|TO (firstprivate) copies, sections whose base
 * differs from the begin address (the kernel receives the device BASE),
 * entries without TARGET_PARAM (mapped, not passed). */
#include "abi_util.h"

static const char r_mul = 0, r_pair = 0, r_section = 0;

struct Pair {
  long a, b;
  long arr[3];
};

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static tgt_offload_entry entries[3];
  entries[0] = abi_kernel_entry((void *)&r_mul, "k3_mul");
  entries[1] = abi_kernel_entry((void *)&r_pair, "k3_pair");
  entries[2] = abi_kernel_entry((void *)&r_section, "k3_section");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[3]);
  __tgt_register_lib(&d.desc);

  /* literals, including negative values and 4-byte sizes (int firstprivate) */
  long out[1] = {0};
  void *lb[3] = {ABI_LIT(-6), ABI_LIT(7), out}, *lp[3] = {ABI_LIT(-6), ABI_LIT(7), out};
  int64_t ls[3] = {4, 4, sizeof out};
  int64_t lt[3] = {OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM | OMP_TGT_MAPTYPE_IMPLICIT,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, lb, lp, ls, lt);
  int rc = __tgt_target_kernel(abi_loc(), 0, 0, 0, (void *)&r_mul, &k);
  printf("literals: rc=%d -6*7=%ld\n", rc, out[0]);

  /* firstprivate struct: the kernel gets a private copy and clobbers it */
  struct Pair pr = {1, 2, {3, 4, 5}};
  void *pb[2] = {&pr, out}, *pp[2] = {&pr, out};
  int64_t ps[2] = {sizeof pr, sizeof out};
  int64_t pt[2] = {OMP_TGT_MAPTYPE_PRIVATE | OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM};
  k = abi_kargs(3, 2, pb, pp, ps, pt);
  rc = __tgt_target_kernel(abi_loc(), 1, 0, 0, (void *)&r_pair, &k);
  printf("firstprivate struct: rc=%d sum=%ld host pr.a=%ld pr.arr[2]=%ld present=%d\n", rc, out[0], pr.a,
         pr.arr[2], omp_target_is_present(&pr, 1));

  /* two firstprivates + one > 1024 bytes (not packed) */
  static struct {
    struct Pair p;
    char pad[2000];
  } bigp;
  bigp.p = (struct Pair){10, 20, {30, 40, 50}};
  void *bb[2] = {&bigp, out}, *bp[2] = {&bigp, out};
  int64_t bs[2] = {sizeof bigp, sizeof out};
  k = abi_kargs(3, 2, bb, bp, bs, pt);
  rc = __tgt_target_kernel(abi_loc(), 1, 0, 0, (void *)&r_pair, &k);
  printf("large firstprivate: rc=%d sum=%ld host a=%ld\n", rc, out[0], bigp.p.a);

  /* section a[4:4] of int a[10]: base &a[0], begin &a[4]; kernel negates a[4..8) via the base */
  int a[10];
  for (int i = 0; i < 10; i++)
    a[i] = i;
  int extra = 99;
  void *sb[4] = {a, ABI_LIT(4), ABI_LIT(8), &extra}, *sp[4] = {&a[4], ABI_LIT(4), ABI_LIT(8), &extra};
  int64_t ss[4] = {4 * sizeof(int), 8, 8, sizeof extra};
  int64_t st[4] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_TO /* mapped only, not a parameter */};
  k = abi_kargs(3, 4, sb, sp, ss, st);
  rc = __tgt_target_kernel(abi_loc(), 2, 0, 0, (void *)&r_section, &k);
  printf("section via base: rc=%d a=", rc);
  for (int i = 0; i < 10; i++)
    printf("%d ", a[i]);
  printf("\nnon-parameter entry released after the region: present=%d\n", omp_target_is_present(&extra, 2));
  __tgt_unregister_lib(&d.desc);
  return 0;
}
