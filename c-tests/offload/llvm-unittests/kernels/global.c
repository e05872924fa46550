// CPU-device counterpart of the tests' "global" program: a 64-element global
// and kernels that write it (id) and read it into a buffer, for one work item.
#include <stdint.h>
uint32_t global[64];
void write(void) { global[0] = 0; }
void read(uint32_t *out) { out[0] = global[0]; }
