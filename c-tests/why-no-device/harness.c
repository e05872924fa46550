// "Why no device": registers one CUDA (PTX, sm_90) image and one
// AMDGPU-less descriptor, then runs an empty target data construct. With no
// CUDA driver the construct finds no device: ours prints one line per
// registered image saying why, before the fallback or the mandatory abort.
#include "../abi/abi.h"
#include <stdio.h>
#include <string.h>

static const char ptx[] = "//\n.version 8.0\n.target sm_90\n.address_size 64\n\n"
                          ".visible .entry k()\n{\n\tret;\n}\n";
static char region;
static tgt_offload_entry entries[1];

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  entries[0] = (tgt_offload_entry){0, 1, OFK_OpenMP, 0, &region, "k", 0, 0, NULL};
  __tgt_device_image img = {(void *)ptx, (void *)(ptx + strlen(ptx)), entries, entries + 1};
  __tgt_bin_desc desc = {1, &img, entries, entries + 1};
  __tgt_register_lib(&desc);
  printf("registered\n");
  __tgt_target_data_begin_mapper(NULL, -1, 0, NULL, NULL, NULL, NULL, NULL, NULL);
  printf("fell back to the host\n");
  __tgt_unregister_lib(&desc);
  return 0;
}
