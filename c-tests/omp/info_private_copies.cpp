// LIBOMPTARGET_INFO kernel-argument and data-transfer lines for private
// copies (.stderr-same against 22.1, addresses masked):
//  - a firstprivate array (PRIVATE|TO) is listed as "to(...)", a scalar
//    (LITERAL) as "firstprivate(...)", a private array as "private(...)";
//  - 22.1 packs firstprivate items of at most 1024 bytes into one buffer,
//    each aligned like its host address (at most 16) after the previous one,
//    and reports one copy of the packed size after the arguments; a larger
//    item is reported as its own copy, in argument order;
//  - a lambda's captured pointers are patched on the device with one
//    reported 8-byte copy each.
#include <cstdio>

int main() {
  char tag[3] = {'a', 'b', 'c'};
  double pair[2] = {1.25, 2.75};
  int table[300];
  for (int i = 0; i < 300; i++)
    table[i] = i;
  short five[5] = {1, 2, 3, 4, 5};
  int scratch[16];
  int scalar = 40;
  long out = 0;
#pragma omp target firstprivate(tag, pair, table, five, scalar) private(scratch) map(from : out)
  {
    scratch[0] = 2;
    out = tag[2] + (long)pair[1] + table[299] + five[4] + scratch[0] + scalar;
  }
  std::printf("firstprivate sum %ld\n", out);

  int a = 3, b = 4;
  auto add = [&a, &b]() { return a + b; };
  int sum = 0;
#pragma omp target map(to : a, b) map(from : sum)
  sum = add();
  std::printf("lambda sum %d\n", sum);

  int on_host = 1;
#pragma omp target map(from : on_host)
  on_host = 0;
  std::printf("device used: %s\n", on_host ? "no" : "yes");
  return 0;
}
