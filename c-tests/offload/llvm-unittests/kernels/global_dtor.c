// CPU-device counterpart of the tests' "global_dtor" kernel: a program with a
// destructor, run when it unloads.
#include <stdint.h>
static volatile uint32_t global = 1;
__attribute__((destructor)) static void dtor(void) { global = 0; }
void global_dtor(void) { global = 2; }
