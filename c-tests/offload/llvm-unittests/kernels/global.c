// CPU-device counterpart of the tests' "global" program: a 64-element global,
// "write" stores id * 2 into it and "read" copies it into a buffer, for the
// one work item (id 0) of a CPU device.
#include <stdint.h>
uint32_t global[64];
void write(void) { global[0] = 0; }
void read(uint32_t *out) { out[0] = global[0]; }
