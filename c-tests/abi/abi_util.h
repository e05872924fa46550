/* Helpers shared by the ABI harnesses (header-only; static inline). */
#ifndef OMPTARGET_RS_CTESTS_ABI_UTIL_H
#define OMPTARGET_RS_CTESTS_ABI_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"

/* Location records as clang emits them (1.7): without -g, and with a
 * source location (printed as "abi.c:42:7" in messages). */
static inline ident_t *abi_loc(void) {
  static ident_t loc = {0, 2, 0, 22, ";unknown;unknown;0;0;;"};
  return &loc;
}
static inline ident_t *abi_loc_named(void) {
  static ident_t loc = {0, 2, 0, 18, ";abi.c;main;42;7;;"};
  return &loc;
}

#define ABI_DYN_PTR_VALUE 0xffffffffffffffffull

/* An 8-byte-aligned buffer. */
typedef struct abi_buf {
  unsigned char *data;
  size_t size;
} abi_buf;

static inline void *abi_alloc8(size_t size) {
  size_t rounded = (size + 7) & ~(size_t)7;
  void *p = aligned_alloc(8, rounded ? rounded : 8);
  if (!p) {
    printf("out of memory\n");
    exit(3);
  }
  memset(p, 0, rounded ? rounded : 8);
  return p;
}

/* Read the device image file named on the command line. */
static inline abi_buf abi_read_file(const char *path) {
  abi_buf b = {NULL, 0};
  FILE *f = fopen(path, "rb");
  if (!f) {
    printf("cannot open device image %s\n", path ? path : "(null)");
    exit(3);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b.data = abi_alloc8((size_t)n);
  b.size = (size_t)n;
  if (fread(b.data, 1, b.size, f) != b.size) {
    printf("short read of %s\n", path);
    exit(3);
  }
  fclose(f);
  return b;
}

/* Also makes stdout line-buffered so that output survives an abort(). */
static inline abi_buf abi_image_from_args(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    printf("usage: %s <device-image.so>\n", argv[0]);
    exit(3);
  }
  return abi_read_file(argv[1]);
}

/* Wrap an image in an OffloadBinary (3.1): header, one entry, a string map
 * {triple, arch}, the strings, then the image at an 8-aligned offset. */
static inline abi_buf abi_wrap_offload_binary(abi_buf image, const char *triple, const char *arch) {
  const char *keys[2] = {"triple", "arch"};
  const char *vals[2] = {triple, arch};
  size_t hdr = sizeof(offload_binary_header), ent = sizeof(offload_binary_entry);
  size_t strmap = 2 * sizeof(offload_binary_string);
  size_t strings = 0;
  for (int i = 0; i < 2; i++)
    strings += strlen(keys[i]) + 1 + strlen(vals[i]) + 1;
  size_t image_off = (hdr + ent + strmap + strings + 7) & ~(size_t)7;
  size_t total = image_off + image.size;
  total = (total + 7) & ~(size_t)7;
  abi_buf out;
  out.data = abi_alloc8(total);
  out.size = total;
  offload_binary_header h = {OFFLOAD_BINARY_MAGIC, 1, total, hdr, ent};
  offload_binary_entry e = {IMG_Object, OFK_OpenMP, 0, hdr + ent, 2, image_off, image.size};
  memcpy(out.data, &h, sizeof h);
  memcpy(out.data + hdr, &e, sizeof e);
  size_t pos = hdr + ent + strmap;
  for (int i = 0; i < 2; i++) {
    offload_binary_string s;
    s.KeyOffset = pos;
    memcpy(out.data + pos, keys[i], strlen(keys[i]) + 1);
    pos += strlen(keys[i]) + 1;
    s.ValueOffset = pos;
    memcpy(out.data + pos, vals[i], strlen(vals[i]) + 1);
    pos += strlen(vals[i]) + 1;
    memcpy(out.data + hdr + ent + (size_t)i * sizeof s, &s, sizeof s);
  }
  memcpy(out.data + image_off, image.data, image.size);
  return out;
}

/* New-layout entries (2.2/2.3). */
static inline tgt_offload_entry abi_kernel_entry(void *region_id, const char *name) {
  tgt_offload_entry e = {0, 1, OFK_OpenMP, 0, region_id, name, 0, 0, NULL};
  return e;
}

static inline tgt_offload_entry abi_global_entry(void *host_addr, const char *name, uint64_t size, uint32_t flags) {
  tgt_offload_entry e = {0, 1, OFK_OpenMP, flags, host_addr, name, size, 0, NULL};
  return e;
}

/* One descriptor with one image whose entry tables are the host table (what
 * clang-linker-wrapper emits). */
typedef struct abi_desc {
  __tgt_device_image image;
  __tgt_bin_desc desc;
} abi_desc;

static inline void abi_make_desc(abi_desc *d, abi_buf image, void *entries_begin, void *entries_end) {
  d->image.ImageStart = image.data;
  d->image.ImageEnd = image.data + image.size;
  d->image.EntriesBegin = entries_begin;
  d->image.EntriesEnd = entries_end;
  d->desc.NumDeviceImages = 1;
  d->desc.DeviceImages = &d->image;
  d->desc.HostEntriesBegin = entries_begin;
  d->desc.HostEntriesEnd = entries_end;
}

/* A Version 3 KernelArgsTy as clang 22 emits it for a plain 'target'. */
static inline KernelArgsTy abi_kargs(uint32_t version, uint32_t n, void **base, void **ptrs, int64_t *sizes,
                                     int64_t *types) {
  KernelArgsTy k;
  memset(&k, 0, sizeof k);
  k.Version = version;
  k.NumArgs = n;
  k.ArgBasePtrs = base;
  k.ArgPtrs = ptrs;
  k.ArgSizes = sizes;
  k.ArgTypes = types;
  return k;
}

/* literal argument value */
#define ABI_LIT(v) ((void *)(intptr_t)(v))

#endif
