/* __tgt_target_data_begin_mapper with PRESENT on unmapped data: the 'present'
 * message and a fatal error (134); the location comes from the ident_t. */
#include "abi_util.h"

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  static const char r_add = 0;
  static tgt_offload_entry entries[1];
  entries[0] = abi_kernel_entry((void *)&r_add, "k3_add");
  abi_desc d;
  abi_make_desc(&d, image, &entries[0], &entries[1]);
  __tgt_register_lib(&d.desc);
  int a[10] = {0};
  void *b[1] = {a}, *p[1] = {a};
  int64_t s[1] = {sizeof a};
  int64_t t[1] = {OMP_TGT_MAPTYPE_TO | OMP_TGT_MAPTYPE_FROM | OMP_TGT_MAPTYPE_PRESENT};
  printf("mapping with PRESENT\n");
  __tgt_target_data_begin_mapper(abi_loc_named(), 0, 1, b, p, s, t, NULL, NULL);
  printf("not reached\n");
  return 0;
}
