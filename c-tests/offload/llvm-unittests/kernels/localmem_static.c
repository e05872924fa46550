// CPU-device counterpart of the tests' "localmem_static" kernel (as
// localmem_reduction, with static group-local memory): out[0] = 2.
#include <stdint.h>
void localmem_static(uint32_t *out) { out[0] = 2; }
