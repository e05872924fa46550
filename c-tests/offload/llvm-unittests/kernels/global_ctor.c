// CPU-device counterpart of the tests' "global_ctor" kernel: a global set by
// a constructor when the program loads; out[id] = global + id, for id 0.
#include <stdint.h>
static uint32_t global;
__attribute__((constructor)) static void ctor(void) { global = 100; }
void global_ctor(uint32_t *out) { out[0] = global; }
