/* The device image wrapped in an OffloadBinary container (abi-reference 3.1;
 * triple x86_64-unknown-linux-gnu, empty arch), as older wrappers and
 * hand-made descriptors pass it.
 *
 * Observed LLVM 22.1 behaviour (recorded in register_wrapped.expected): the
 * runtime unwraps the container into its DeviceImageTy, but registerLib asks
 * the plugins about the descriptor's ORIGINAL (wrapped) bytes, which no plugin
 * recognises, so no device gets the image: 0 devices, kernel launches return
 * -1 (the caller must run its host fallback) and data calls are no-ops.
 * abi-reference 3.3 says both forms "must be accepted" [S]; an implementation
 * that does accept the wrapped form differs here and should list this as a
 * known divergence. */
#include "abi_util.h"

static const char region_add = 0;

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  abi_buf wrapped = abi_wrap_offload_binary(image, "x86_64-unknown-linux-gnu", "");
  const offload_binary_header *h = (const offload_binary_header *)wrapped.data;
  printf("container: magic=%08x version=%u size_ok=%d\n", h->Magic, h->Version, h->Size == wrapped.size);

  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&region_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, wrapped, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  int nd = omp_get_num_devices();
  printf("num_devices=%d initial_device=%d\n", nd, omp_get_initial_device());

  int a[4] = {1, 2, 3, 4};
  void *b[1] = {a}, *p[1] = {a};
  int64_t s[1] = {sizeof a}, t[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM};
  __tgt_target_data_begin_mapper(abi_loc(), -1, 1, b, p, s, t, NULL, NULL);
  void *kb[3] = {a, ABI_LIT(4), ABI_LIT(10)}, *kp[3] = {a, ABI_LIT(4), ABI_LIT(10)};
  int64_t ks[3] = {sizeof a, 8, 8};
  int64_t kt[3] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM,
                   OMP_TGT_MAPTYPE_LITERAL | OMP_TGT_MAPTYPE_TARGET_PARAM};
  KernelArgsTy k = abi_kargs(3, 3, kb, kp, ks, kt);
  k.NumTeams[0] = (uint32_t)-1;
  int rc = __tgt_target_kernel(abi_loc(), -1, -1, 0, (void *)&region_add, &k);
  printf("launch rc=%d (non-zero: host fallback)\n", rc);
  __tgt_target_data_end_mapper(abi_loc(), -1, 1, b, p, s, t, NULL, NULL);
  printf("a[0]=%d (unchanged: nothing ran)\n", a[0]);
  __tgt_unregister_lib(&d.desc);
  printf("unregistered\n");
  return 0;
}
