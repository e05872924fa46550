// device_num_host.c with the device image linked -z now -z relro
// (device_num_host_now.flags): the image's GOT entries are read-only after
// relocation, so the per-device binding must lift and restore the
// protection ld.so left.
#include "device_num_host.c"
