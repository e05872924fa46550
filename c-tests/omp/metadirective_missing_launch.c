/* The launch of the missing kernel: see metadirective_missing_kernel.c. 22.1
 * fails it with an arbitrary plugin error (it takes the host region id for a
 * kernel object) and the fatal "failure of target construct", exit 134; ours
 * names the kernel. */
#define LAUNCH_MISSING
#include "metadirective_missing_kernel.c"
