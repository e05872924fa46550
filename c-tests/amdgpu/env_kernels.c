/*
 * env_kernels.c - AMDGPU test kernels with OpenMP kernel environments and a
 * device environment, for what gpu-images' bare kernels do not
 * cover: `<kernel>_kernel_environment` parsing, the launch environment of
 * kernels with team reductions, __omp_rtl_device_environment, dynamic LDS.
 *
 * Built twice by c-tests/amdgpu-images.sh:
 *   clang-22 --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2  -> env_kernels.gfx90a.hsaco
 *   clang-22 -shared -fPIC -O2 -DOFFLOAD_EMULATE_GRID                 -> env_kernels.emu.so
 * (the second is what mock-hsa runs on the CPU; same ok_emu_ids protocol as
 * c-tests/gpu/images' kernels.emu.so).
 *
 * The environments use the 22.1 layout (abi-reference section 7.2).
 */
typedef struct {
  unsigned char use_generic_state_machine, may_use_nested_parallelism, exec_mode, pad;
  int min_threads, max_threads, min_teams, max_teams, reduction_data_size, reduction_buffer_length;
  int pad2;
  void *ident, *dynamic_env;
} KernelEnvironment;
typedef struct {
  unsigned debug_kind, num_devices, device_num, dynamic_mem_size;
  unsigned long long clock_frequency, indirect_call_table, indirect_call_table_size, hardware_parallelism;
} DeviceEnvironment;

#if defined(__AMDGPU__) || defined(__AMDGCN__)
#define VIS __attribute__((visibility("protected")))
#define KERNEL __attribute__((amdgpu_kernel, visibility("protected")))
#define BLOCK_X __builtin_amdgcn_workgroup_id_x()
#define THREAD_X __builtin_amdgcn_workitem_id_x()
#else
#define VIS __attribute__((visibility("default"), used))
#define KERNEL __attribute__((visibility("default"), used))
__attribute__((visibility("default"), used)) volatile unsigned ok_emu_ids[12];
#define BLOCK_X ok_emu_ids[0]
#define THREAD_X ok_emu_ids[3]
#endif

VIS DeviceEnvironment __omp_rtl_device_environment;

/* Generic mode, thread limit 256 (clang's AMDGPU generic kernel shape). */
VIS const KernelEnvironment k_generic_kernel_environment = {1, 1, 1, 0, 1, 256, -1, -1, 0, 0, 0, 0, 0};
/* SPMD with a team reduction of 8 bytes into a 1024-slot buffer. */
VIS const KernelEnvironment k_spmd_red_kernel_environment = {0, 0, 2, 0, 1, 256, 0, 0, 8, 1024, 0, 0, 0};

/* out[0] = the dyn_ptr each kernel receives (~0, or a launch environment). */
KERNEL void k_generic(void *dyn_ptr, long long *out) {
  if (BLOCK_X == 0 && THREAD_X == 0)
    out[0] = (long long)dyn_ptr;
}
KERNEL void k_spmd_red(void *dyn_ptr, long long *out) {
  if (BLOCK_X == 0 && THREAD_X == 0) {
    out[1] = (long long)dyn_ptr;
    /* The launch environment's ReductionBuffer (offset 8) must be non-NULL. */
    out[2] = dyn_ptr && dyn_ptr != (void *)-1 ? *(long long *)((char *)dyn_ptr + 8) : 0;
  }
}
/* Bare: out[block] = value + block. */
KERNEL void k_bare(long long *out, long long value) {
  if (THREAD_X == 0)
    out[BLOCK_X] = value + BLOCK_X;
}
/* Copies the device environment the runtime wrote. */
KERNEL void k_read_env(DeviceEnvironment *out) {
  if (BLOCK_X == 0 && THREAD_X == 0)
    *out = __omp_rtl_device_environment;
}
