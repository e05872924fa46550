// Built as dl_g.so; dlopen'ed by main.c.
#pragma omp declare target
int dl_value = 7;
int dl_array[16];
#pragma omp end declare target

void *dl_value_addr(void) { return &dl_value; }
void *dl_array_addr(void) { return dl_array; }
