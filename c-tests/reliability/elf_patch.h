/* Single-field corruptions of an x86-64 shared object held in memory, for
 * the bad-image checks (bad_input.c, bad_image.c). The image buffer must be
 * 8-byte aligned (malloc'd) and a complete ELF64 image. */
#ifndef OMPTARGET_RS_CTESTS_ELF_PATCH_H
#define OMPTARGET_RS_CTESTS_ELF_PATCH_H

#include <stdint.h>
#include <string.h>

#define ELF_PT_LOAD 1u
#define ELF_PT_DYNAMIC 2u
#define ELF_PT_GNU_RELRO 0x6474e552u

typedef struct elf_phdr {
  uint32_t type, flags;
  uint64_t offset, vaddr, paddr, filesz, memsz, align;
} elf_phdr;

/* The first (or, with `last`, the last) program header of `type`; NULL if none. */
static inline elf_phdr *elf_find_phdr(unsigned char *image, uint32_t type, int last) {
  uint64_t phoff;
  uint16_t phnum;
  memcpy(&phoff, image + 32, 8);
  memcpy(&phnum, image + 56, 2);
  elf_phdr *found = NULL;
  for (uint16_t i = 0; i < phnum; i++) {
    elf_phdr *p = (elf_phdr *)(image + phoff + 56u * i);
    if (p->type == type) {
      found = p;
      if (!last) break;
    }
  }
  return found;
}

/* Applies the corruption `name`; returns 0 for an unknown name or an image
 * without the program header it needs.
 *   dynamic  PT_DYNAMIC's address with the high bit set (ld.so: SIGSEGV)
 *   memsz    the last PT_LOAD's p_memsz one below its p_filesz (ld.so maps
 *            it, then ends the process with status 127)
 *   relro    PT_GNU_RELRO one page longer, past its segment (read-only
 *            protection over memory the image writes later) */
static inline int elf_corrupt(unsigned char *image, const char *name) {
  elf_phdr *p;
  if (!strcmp(name, "dynamic") && (p = elf_find_phdr(image, ELF_PT_DYNAMIC, 0))) {
    p->vaddr |= 1ull << 63;
  } else if (!strcmp(name, "memsz") && (p = elf_find_phdr(image, ELF_PT_LOAD, 1))) {
    p->memsz = p->filesz - 1;
  } else if (!strcmp(name, "relro") && (p = elf_find_phdr(image, ELF_PT_GNU_RELRO, 0))) {
    p->memsz += 4096;
  } else {
    return 0;
  }
  return 1;
}

#endif
