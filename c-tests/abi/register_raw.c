/* Register a descriptor whose image is the raw device ELF (what the clang 22
 * wrapper passes), with new-layout (56-byte) entries; map data, launch
 * Version 3 kernels, unregister. */
#include "abi_util.h"
#include "scenario.h"

int main(int argc, char **argv) {
  abi_buf image = abi_image_from_args(argc, argv);
  return abi_basic_scenario("raw", image);
}
