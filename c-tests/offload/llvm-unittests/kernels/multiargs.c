// CPU-device counterpart of the tests' "multiargs" kernel: its argument
// struct {char, int *, short} arrives as three 8-byte values.
#include <stdint.h>
void multiargs(uint64_t a, uint64_t b, uint64_t c) { (void)a, (void)b, (void)c; }
