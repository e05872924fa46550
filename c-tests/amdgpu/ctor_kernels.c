/*
 * ctor_kernels.c - an AMDGPU code object with device global constructors and
 * destructors, for the plugin's amdgcn.device.init / amdgcn.device.fini
 * handling (LLVM 22.1: callGlobalCtorDtorCommon, run after loading the image
 * and before unloading it).
 *
 * Built twice by c-tests/amdgpu-images.sh:
 *   clang-22 --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2  -> ctor_kernels.gfx90a.hsaco
 *   clang-22 -shared -fPIC -O2 -DOFFLOAD_EMULATE_GRID                 -> ctor_kernels.emu.so
 * On the GPU, clang's amdgpu-lower-ctor-dtor pass turns the constructor and
 * destructor into the kernels amdgcn.device.init and amdgcn.device.fini
 * (one team of one thread; they walk .init_array / .fini_array). The host
 * build, which mock-hsa runs, defines kernels of the same names directly.
 *
 * g_log records the order: the constructor appends g_seed + 1, the
 * destructor g_seed + 2 (g_seed is volatile so that the compiler cannot
 * evaluate the constructor at compile time and drop it).
 */
#if defined(__AMDGPU__) || defined(__AMDGCN__)
#define VIS __attribute__((visibility("protected")))
#define KERNEL __attribute__((amdgpu_kernel, visibility("protected")))
#define CTOR __attribute__((constructor))
#define DTOR __attribute__((destructor))
#else
#define VIS __attribute__((visibility("default"), used))
#define KERNEL __attribute__((visibility("default"), used))
#define CTOR
#define DTOR
__attribute__((visibility("default"), used)) volatile unsigned ok_emu_ids[12];
#endif

VIS int g_log[4];
VIS int g_count;
VIS volatile int g_seed = 10;

CTOR static void ctor(void) { g_log[g_count++ & 3] = g_seed + 1; }
DTOR static void dtor(void) { g_log[g_count++ & 3] = g_seed + 2; }

/* out[0] = how many constructors and destructors ran so far. */
KERNEL void k_count(int *out) { out[0] = g_count; }

#if !defined(__AMDGPU__) && !defined(__AMDGCN__)
KERNEL void device_init(void) __asm__("amdgcn.device.init");
KERNEL void device_init(void) { ctor(); }
KERNEL void device_fini(void) __asm__("amdgcn.device.fini");
KERNEL void device_fini(void) { dtor(); }
#endif
