// CPU-device counterpart of the tests' "single_counter" kernel: *Out =
// *InitVal + InitLoop * Addend, one addition per iteration. Its argument
// struct {int32_t InitLoop; int32_t Addend; uint32_t *InitVal, *Out;}
// arrives as three 8-byte values, the two int32_t packed in the first.
#include <stdint.h>
void single_counter(uint64_t loop_addend, uint32_t *init, uint32_t *out) {
  int32_t loop = (int32_t)(uint32_t)loop_addend;
  int32_t addend = (int32_t)(uint32_t)(loop_addend >> 32);
  volatile uint32_t v = *init;
  for (int32_t i = 0; i < loop; ++i)
    v += (uint32_t)addend;
  *out = v;
}
