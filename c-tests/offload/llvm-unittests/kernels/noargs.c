// CPU-device counterpart of the tests' "noargs" kernel.
void noargs(void) {}
