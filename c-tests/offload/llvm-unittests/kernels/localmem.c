// CPU-device counterpart of the tests' "localmem" kernel (out[i] = local
// id * 2 through group-local memory): one work item writes out[0] = 0.
#include <stdint.h>
void localmem(uint32_t *out) { out[0] = 0; }
