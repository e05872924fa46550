// CPU-device counterpart of the tests' "byte" kernel (one byte argument).
#include <stdint.h>
void byte(uint64_t c) { (void)c; }
