#define ONLY_ALLOC_ORDER
#include "mem_reuse.c"
