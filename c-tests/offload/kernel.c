// A CPU-device program for the ol* tests: an x86-64 shared object whose
// exported functions are kernels (called once with the argument buffer split
// into 8-byte values) and whose globals are device globals.
#include <stdint.h>

int64_t counter = 7;
int64_t table[4] = {1, 2, 3, 4};

void vadd(int64_t *out, const int64_t *a, const int64_t *b, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = a[i] + b[i];
}

// Ten arguments: six in registers, four on the stack.
void sum10(int64_t *out, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f, int64_t g, int64_t h, int64_t i) {
  *out = a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i;
}

void bump(void) { counter += 1; }

void empty(void) {}
