/*
 * emu.c - the host "emulation library" of indirect.ptx for mock-cuda
 * (MOCK_CUDA_EMU): mock-cuda places the cubin's globals in the storage of the
 * same-named symbols here (initialised from the cubin's data), so the harness
 * can read what the runtime wrote to the device by dlopen()ing this library.
 *
 * Build: cc -shared -fPIC -Wall -Wextra emu.c -o indirect.emu.so
 */
#include <stdint.h>

uint32_t ok_emu_ids[12]; /* required by mock-cuda */

/* Device globals (storage only; mock-cuda copies the cubin's data in). */
uint64_t __omp_rtl_device_environment[6];
uint64_t ind_fn_a, ind_fn_b, ind_vtable;

/* The trivial kernel. */
void k_indirect(void);
void k_indirect(void) {}
