// CPU-device counterpart of the tests' "foo" kernel (out[id] = id for every
// work item): a CPU device runs one work item, so it writes out[0] = 0.
#include <stdint.h>
void foo(uint32_t *out) { out[0] = 0; }
