/*
 * harness.c - the indirect-call table a libomptarget-compatible runtime builds
 * when it loads an image that defines __omp_rtl_device_environment
 * (abi-reference sections 7.1 and 7.9), observed on mock-cuda, so that the same
 * binary can be run under LLVM 22.1's libomptarget and under ours and the
 * outputs compared (run.sh).
 *
 * The cubin of indirect.ptx (IMAGE_FILE) is embedded with .incbin and
 * registered with __tgt_register_lib from a constructor. Its entry table
 * (56-byte llvm::offloading::EntryTy, a static array) holds:
 *   k_indirect  kernel                      Flags 0,    Size 0
 *   ind_fn_?    INDIRECT, the host function  Flags 0x08, Size 8  } listed in
 *   ind_fn_?    with the higher address first Flags 0x08, Size 8  } DEcreasing
 *                                                                   host order
 *   ind_vtable  INDIRECT_VTABLE, host_vtable Flags 0x20, Size 24 (3 slots)
 * Device globals: ind_fn_a = 0x1111, ind_fn_b = 0x2222, ind_vtable = 0x30000.
 * Expected table (sorted by host address): {host_fn_a, 0x1111},
 * {host_fn_b, 0x2222}, {&host_vtable[k], 0x30000 + 8k} for k = 0..2.
 *
 * An empty __tgt_target_data_begin_mapper/end_mapper pair on the CUDA device
 * makes the runtime load the image; the harness then dlopen()s the emulation
 * library (MOCK_CUDA_EMU: the same loaded object in which mock-cuda keeps the
 * device globals) and prints IndirectCallTableSize, whether IndirectCallTable
 * is set, and the pairs read from it (mock-cuda's device addresses are host
 * pointers), host addresses symbolically, device values in hex; the output
 * does not depend on addresses, so it is the same under both runtimes for a
 * right table. Last line: "verdict: expected table" or
 * "verdict: unexpected table (...)". Exit status 0 unless the setup failed.
 *
 * Build: cc -O2 -Wall -Wextra -DIMAGE_FILE='"indirect.sm_90.cubin"' harness.c
 *          -o harness -L<dir> -l:libomptarget.so.22.1 -ldl
 * Run:   MOCK_CUDA_EMU=/abs/indirect.emu.so with mock-cuda as libcuda.so.1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IMAGE_FILE
#error "define IMAGE_FILE as a quoted path: -DIMAGE_FILE='\"path/indirect.sm_90.cubin\"'"
#endif

typedef struct ident {
  int32_t reserved_1, flags, reserved_2, reserved_3;
  const char *psource;
} ident_t;

/* llvm::offloading::EntryTy (56 bytes). */
struct offload_entry {
  uint64_t Reserved;
  uint16_t Version;
  uint16_t Kind;
  uint32_t Flags;
  void *Address;
  const char *SymbolName;
  uint64_t Size;
  uint64_t Data;
  void *AuxAddr;
};
_Static_assert(sizeof(struct offload_entry) == 56, "EntryTy is 56 bytes");

struct tgt_device_image {
  void *ImageStart;
  void *ImageEnd;
  const struct offload_entry *EntriesBegin;
  const struct offload_entry *EntriesEnd;
};

struct tgt_bin_desc {
  int32_t NumDeviceImages;
  struct tgt_device_image *DeviceImages;
  const struct offload_entry *HostEntriesBegin;
  const struct offload_entry *HostEntriesEnd;
};

void __tgt_register_lib(struct tgt_bin_desc *desc);
void __tgt_unregister_lib(struct tgt_bin_desc *desc);
void __tgt_target_data_begin_mapper(ident_t *loc, int64_t device_id, int32_t arg_num,
                                    void **args_base, void **args, int64_t *arg_sizes,
                                    int64_t *arg_types, void **arg_names,
                                    void **arg_mappers);
void __tgt_target_data_end_mapper(ident_t *loc, int64_t device_id, int32_t arg_num,
                                  void **args_base, void **args, int64_t *arg_sizes,
                                  int64_t *arg_types, void **arg_names,
                                  void **arg_mappers);
int omp_get_num_devices(void);
int omp_get_initial_device(void);

enum {
  OMP_DECLARE_TARGET_INDIRECT = 0x08,
  OMP_DECLARE_TARGET_INDIRECT_VTABLE = 0x20,
};

/* ------------------------------------------------------------------------ */
/* The image and its registration                                            */
/* ------------------------------------------------------------------------ */

__asm__(".section .rodata.cuda_indirect_image,\"a\",@progbits\n"
        ".balign 64\n"
        ".globl cuda_indirect_image_start\n"
        "cuda_indirect_image_start:\n"
        ".incbin \"" IMAGE_FILE "\"\n"
        ".globl cuda_indirect_image_end\n"
        "cuda_indirect_image_end:\n"
        ".previous\n");
extern char cuda_indirect_image_start[], cuda_indirect_image_end[];

/* The host functions (distinct bodies, so they are not folded together). */
__attribute__((noinline, used)) int host_fn_a(int x);
__attribute__((noinline, used)) int host_fn_b(int x);
int host_fn_a(int x) { return x + 1; }
int host_fn_b(int x) { return x * 3 + 7; }
/* The host vtable (3 slots). */
void *host_vtable[3] = {(void *)host_fn_a, (void *)host_fn_b, NULL};
/* Region id of the kernel: only its address matters. */
char region_k_indirect;

#define ENTRY(addr, name, size, flags)                                         \
  (struct offload_entry) { 0, 1, 1, flags, (void *)(addr), name, size, 0, 0 }

static struct offload_entry entries[4];
static struct tgt_device_image images[1];
static struct tgt_bin_desc desc;
static void unregister(void) { __tgt_unregister_lib(&desc); }

__attribute__((constructor(101))) static void register_image(void) {
  entries[0] = ENTRY(&region_k_indirect, "k_indirect", 0, 0);
  /* The two INDIRECT entries in decreasing host-address order. */
  int a_first = (uintptr_t)host_fn_a > (uintptr_t)host_fn_b;
  struct offload_entry ea = ENTRY(host_fn_a, "ind_fn_a", 8, OMP_DECLARE_TARGET_INDIRECT);
  struct offload_entry eb = ENTRY(host_fn_b, "ind_fn_b", 8, OMP_DECLARE_TARGET_INDIRECT);
  entries[1] = a_first ? ea : eb;
  entries[2] = a_first ? eb : ea;
  entries[3] = ENTRY(host_vtable, "ind_vtable", sizeof host_vtable,
                     OMP_DECLARE_TARGET_INDIRECT_VTABLE);
  images[0].ImageStart = cuda_indirect_image_start;
  images[0].ImageEnd = cuda_indirect_image_end;
  images[0].EntriesBegin = entries;
  images[0].EntriesEnd = entries + 4;
  desc.NumDeviceImages = 1;
  desc.DeviceImages = images;
  desc.HostEntriesBegin = entries;
  desc.HostEntriesEnd = entries + 4;
  __tgt_register_lib(&desc);
  atexit(unregister);
}

/* ------------------------------------------------------------------------ */

/* A host address, symbolically. */
static const char *host_name(uint64_t h, char *buf, size_t n) {
  if (h == (uintptr_t)host_fn_a)
    return "host_fn_a";
  if (h == (uintptr_t)host_fn_b)
    return "host_fn_b";
  for (int k = 0; k < 3; k++)
    if (h == (uintptr_t)&host_vtable[k]) {
      snprintf(buf, n, "&host_vtable[%d]", k);
      return buf;
    }
  snprintf(buf, n, "unknown host address 0x%" PRIx64, h);
  return buf;
}

int main(void) {
  static ident_t loc = {0, 2, 0, 22, ";harness.c;main;0;0;;"};
  char buf[96];

  setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a runtime abort */
  printf("entries as registered:");
  for (int i = 0; i < 4; i++)
    printf(" %s(flags 0x%02x, size %" PRIu64 ", %s)%s", entries[i].SymbolName,
           entries[i].Flags, entries[i].Size,
           i == 0 ? "region id" : host_name((uintptr_t)entries[i].Address, buf, sizeof buf),
           i < 3 ? "," : "\n");

  int ndev = omp_get_num_devices();
  printf("omp_get_num_devices() = %d, omp_get_initial_device() = %d\n", ndev,
         omp_get_initial_device());
  if (ndev < 1) {
    printf("no offload device: setup failed\n");
    return 2;
  }
  /* With only a CUDA image registered the CUDA device is device 0. */
  const int64_t dev = 0;
  printf("loading the image on device %" PRId64 " (empty data begin/end)\n", dev);
  __tgt_target_data_begin_mapper(&loc, dev, 0, NULL, NULL, NULL, NULL, NULL, NULL);

  const char *emu_path = getenv("MOCK_CUDA_EMU");
  if (!emu_path || !*emu_path) {
    printf("MOCK_CUDA_EMU not set: setup failed\n");
    return 2;
  }
  void *emu = dlopen(emu_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  printf("emulation library already loaded by the driver: %s\n", emu ? "yes" : "no");
  if (!emu)
    emu = dlopen(emu_path, RTLD_NOW | RTLD_LOCAL);
  const uint64_t *env = emu ? (const uint64_t *)dlsym(emu, "__omp_rtl_device_environment") : NULL;
  if (!env) {
    printf("cannot find __omp_rtl_device_environment in %s: setup failed\n", emu_path);
    return 2;
  }

  uint64_t table = env[3], size = env[4];
  printf("IndirectCallTable != 0: %s\n", table ? "yes" : "no");
  printf("IndirectCallTableSize: %" PRIu64 "\n", size);
  const char *why = NULL;
  if (size != 5)
    why = "size is not 5";
  else if (!table)
    why = "no table address";
  if (table && size > 0 && size <= 64) {
    const uint64_t *pairs = (const uint64_t *)(uintptr_t)table;
    for (uint64_t i = 0; i < size; i++) {
      uint64_t h = pairs[2 * i], d = pairs[2 * i + 1];
      printf("  pair %" PRIu64 ": host %s -> device 0x%" PRIx64 "\n", i,
             host_name(h, buf, sizeof buf), d);
      if (i > 0 && pairs[2 * (i - 1)] >= h && !why)
        why = "not sorted by host address";
      uint64_t want = 0;
      if (h == (uintptr_t)host_fn_a)
        want = 0x1111;
      else if (h == (uintptr_t)host_fn_b)
        want = 0x2222;
      else
        for (int k = 0; k < 3; k++)
          if (h == (uintptr_t)&host_vtable[k])
            want = 0x30000 + 8 * (uint64_t)k;
      if (!want && !why)
        why = "unknown host address";
      else if (want != d && !why)
        why = "wrong device value";
    }
  } else if (table && size > 64) {
    printf("  (size too large; pairs not read)\n");
  }
  __tgt_target_data_end_mapper(&loc, dev, 0, NULL, NULL, NULL, NULL, NULL, NULL);
  if (why)
    printf("verdict: unexpected table (%s)\n", why);
  else
    printf("verdict: expected table\n");
  fflush(stdout);
  return 0;
}
