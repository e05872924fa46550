// CPU-device counterpart of the tests' "sequence" kernel: entry idx of a
// Fibonacci sequence from the two before it. Its argument struct
// {uint32_t Idx; uint32_t *Mem;} arrives as two 8-byte values.
#include <stdint.h>
void sequence(uint64_t idx64, uint32_t *mem) {
  uint32_t idx = (uint32_t)idx64;
  if (idx < 2)
    mem[idx] = 1;
  else
    mem[idx] = mem[idx - 1] + mem[idx - 2];
}
