//! Pure checks of ELF64 little-endian images over untrusted bytes: every
//! offset and address is bounds-checked, nothing is mapped or executed, and
//! a malformed image gives an error naming the field and value at fault.
//!
//! * [`check_elf_layout`]: the file layout every plugin checks before a
//!   driver or loader gets an image (headers and ranges inside the bytes).
//! * [`check_shared_object`]: what the system loader (glibc's `ld.so` on
//!   x86-64) reads from a shared object while `dlopen` maps, relocates and
//!   initialises it. The loader trusts the program headers and the dynamic
//!   section: inconsistent ones make it read or write outside the mapping
//!   (SIGSEGV), fail one of its assertions (the process ends with status
//!   127) or call a non-code address. Everything it would dereference is
//!   checked here first: loadable segments (order, overlap, sizes,
//!   alignment, address range), the segments it reads through addresses
//!   (dynamic section, RELRO, TLS, notes, program-header table, unwind
//!   table), the dynamic entries (string, symbol, hash, version and
//!   relocation tables inside readable segments, entry sizes, string
//!   offsets), every relocation's target, and the addresses it calls
//!   (`DT_INIT`, `DT_FINI`, init/fini arrays, IFUNC resolvers).
//!
//! Only this module's own error type is used from the crate (`super::error`).

use super::error::{OffloadError, Result};

fn bad(what: impl Into<String>) -> OffloadError {
    OffloadError::BadImage(what.into())
}

fn read_u16(b: &[u8], off: u64) -> Option<u16> {
    let off = usize::try_from(off).ok()?;
    Some(u16::from_le_bytes(b.get(off..off.checked_add(2)?)?.try_into().ok()?))
}
fn read_u32(b: &[u8], off: u64) -> Option<u32> {
    let off = usize::try_from(off).ok()?;
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}
fn read_u64(b: &[u8], off: u64) -> Option<u64> {
    let off = usize::try_from(off).ok()?;
    Some(u64::from_le_bytes(b.get(off..off.checked_add(8)?)?.try_into().ok()?))
}

/// Checks that an ELF image lies wholly inside its bytes before anything maps
/// or parses it: the program-header and section-header tables, every
/// segment's file range and every section's (except `SHT_NOBITS`) must end
/// within `bytes`. A truncated image handed to `dlopen` or a driver would
/// otherwise be mapped past its end (SIGBUS in the loader). Bytes that are
/// not ELF (PTX text) pass unchanged.
pub fn check_elf_layout(bytes: &[u8]) -> Result<()> {
    if bytes.len() < 4 || &bytes[..4] != b"\x7fELF" {
        return Ok(());
    }
    let len = bytes.len() as u64;
    let trunc = |what: String| bad(format!("truncated or malformed ELF image ({len} bytes): {what}"));
    if bytes.len() < 64 || bytes[4] != 2 || bytes[5] != 1 {
        return Err(trunc("not a complete 64-bit little-endian ELF header".into()));
    }
    let u16_at = |off: u64| read_u16(bytes, off);
    let u32_at = |off: u64| read_u32(bytes, off);
    let u64_at = |off: u64| read_u64(bytes, off);
    let within = |off: u64, size: u64| off.checked_add(size).is_some_and(|end| end <= len);
    let (phoff, shoff) = (u64_at(32).unwrap_or(0), u64_at(40).unwrap_or(0));
    let (phentsize, phnum) = (u64::from(u16_at(54).unwrap_or(0)), u64::from(u16_at(56).unwrap_or(0)));
    let (shentsize, mut shnum) = (u64::from(u16_at(58).unwrap_or(0)), u64::from(u16_at(60).unwrap_or(0)));
    if phnum > 0 {
        if phentsize < 56 || !within(phoff, phentsize * phnum) {
            return Err(trunc(format!("{phnum} program headers at offset {phoff} do not fit")));
        }
        for i in 0..phnum {
            let ph = phoff + i * phentsize;
            let (p_type, p_offset, p_filesz) = (u32_at(ph).unwrap_or(0), u64_at(ph + 8).unwrap_or(0), u64_at(ph + 32).unwrap_or(0));
            if p_type != 0 && !within(p_offset, p_filesz) {
                return Err(trunc(format!(
                    "segment {i} (type {p_type:#x}) covers bytes {p_offset}..{}",
                    p_offset.saturating_add(p_filesz)
                )));
            }
        }
    }
    if shoff != 0 {
        if shentsize < 64 || !within(shoff, shentsize * shnum.max(1)) {
            return Err(trunc(format!("section headers at offset {shoff} do not fit")));
        }
        if shnum == 0 {
            // Extended numbering: the count is section 0's sh_size.
            shnum = u64_at(shoff + 32).unwrap_or(0);
            if shnum.checked_mul(shentsize).is_none_or(|n| !within(shoff, n)) {
                return Err(trunc(format!("{shnum} section headers at offset {shoff} do not fit")));
            }
        }
        for i in 0..shnum {
            let sh = shoff + i * shentsize;
            let (sh_type, sh_offset, sh_size) = (u32_at(sh + 4).unwrap_or(0), u64_at(sh + 24).unwrap_or(0), u64_at(sh + 32).unwrap_or(0));
            // SHT_NULL and SHT_NOBITS occupy no file bytes.
            if sh_type != 0 && sh_type != 8 && !within(sh_offset, sh_size) {
                return Err(trunc(format!("section {i} covers bytes {sh_offset}..{}", sh_offset.saturating_add(sh_size))));
            }
        }
    }
    Ok(())
}

// Program-header types and flags.
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PT_NOTE: u32 = 4;
const PT_PHDR: u32 = 6;
const PT_TLS: u32 = 7;
const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
const PT_GNU_RELRO: u32 = 0x6474_e552;
const PT_GNU_PROPERTY: u32 = 0x6474_e553;
const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

// Dynamic tags the loader reads.
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_PLTRELSZ: u64 = 2;
const DT_PLTGOT: u64 = 3;
const DT_HASH: u64 = 4;
const DT_STRTAB: u64 = 5;
const DT_SYMTAB: u64 = 6;
const DT_RELA: u64 = 7;
const DT_RELASZ: u64 = 8;
const DT_RELAENT: u64 = 9;
const DT_STRSZ: u64 = 10;
const DT_SYMENT: u64 = 11;
const DT_INIT: u64 = 12;
const DT_FINI: u64 = 13;
const DT_SONAME: u64 = 14;
const DT_RPATH: u64 = 15;
const DT_REL: u64 = 17;
const DT_PLTREL: u64 = 20;
const DT_TEXTREL: u64 = 22;
const DT_JMPREL: u64 = 23;
const DT_INIT_ARRAY: u64 = 25;
const DT_FINI_ARRAY: u64 = 26;
const DT_INIT_ARRAYSZ: u64 = 27;
const DT_FINI_ARRAYSZ: u64 = 28;
const DT_RUNPATH: u64 = 29;
const DT_FLAGS: u64 = 30;
const DT_PREINIT_ARRAY: u64 = 32;
const DT_PREINIT_ARRAYSZ: u64 = 33;
const DT_RELRSZ: u64 = 35;
const DT_RELR: u64 = 36;
const DT_RELRENT: u64 = 37;
const DT_GNU_HASH: u64 = 0x6fff_fef5;
const DT_VERSYM: u64 = 0x6fff_fff0;
const DT_RELACOUNT: u64 = 0x6fff_fff9;
const DT_VERDEF: u64 = 0x6fff_fffc;
const DT_VERNEED: u64 = 0x6fff_fffe;
const DT_AUXILIARY: u64 = 0x7fff_fffd;
const DT_FILTER: u64 = 0x7fff_ffff;
const DF_TEXTREL: u64 = 4;

// x86-64 relocation types the loader applies.
const R_NONE: u32 = 0;
const R_64: u32 = 1;
const R_PC32: u32 = 2;
const R_COPY: u32 = 5;
const R_GLOB_DAT: u32 = 6;
const R_JUMP_SLOT: u32 = 7;
const R_RELATIVE: u32 = 8;
const R_32: u32 = 10;
const R_DTPMOD64: u32 = 16;
const R_DTPOFF64: u32 = 17;
const R_TPOFF64: u32 = 18;
const R_SIZE32: u32 = 32;
const R_SIZE64: u32 = 33;
const R_TLSDESC: u32 = 36;
const R_IRELATIVE: u32 = 37;

/// Page size the x86-64 loader maps with.
const PAGE: u64 = 0x1000;
/// Largest loadable-segment alignment accepted (1 GiB).
const MAX_ALIGN: u64 = 1 << 30;
/// User addresses on x86-64 are below 2^47.
const ADDRESS_LIMIT: u64 = 1 << 47;
/// Largest span of all loadable segments together (1 TiB).
const MAX_SPAN: u64 = 1 << 40;
/// Largest thread-local block per thread (1 GiB).
const MAX_TLS: u64 = 1 << 30;
const SYM_SIZE: u64 = 24;
const RELA_SIZE: u64 = 24;

fn pt_name(ty: u32) -> String {
    match ty {
        PT_LOAD => "PT_LOAD".into(),
        PT_DYNAMIC => "PT_DYNAMIC".into(),
        PT_NOTE => "PT_NOTE".into(),
        PT_PHDR => "PT_PHDR".into(),
        PT_TLS => "PT_TLS".into(),
        PT_GNU_EH_FRAME => "PT_GNU_EH_FRAME".into(),
        PT_GNU_RELRO => "PT_GNU_RELRO".into(),
        PT_GNU_PROPERTY => "PT_GNU_PROPERTY".into(),
        _ => format!("type {ty:#x}"),
    }
}

fn dt_name(tag: u64) -> String {
    let name = match tag {
        DT_NEEDED => "DT_NEEDED",
        DT_PLTRELSZ => "DT_PLTRELSZ",
        DT_PLTGOT => "DT_PLTGOT",
        DT_HASH => "DT_HASH",
        DT_STRTAB => "DT_STRTAB",
        DT_SYMTAB => "DT_SYMTAB",
        DT_RELA => "DT_RELA",
        DT_RELASZ => "DT_RELASZ",
        DT_RELAENT => "DT_RELAENT",
        DT_STRSZ => "DT_STRSZ",
        DT_SYMENT => "DT_SYMENT",
        DT_INIT => "DT_INIT",
        DT_FINI => "DT_FINI",
        DT_SONAME => "DT_SONAME",
        DT_RPATH => "DT_RPATH",
        DT_PLTREL => "DT_PLTREL",
        DT_JMPREL => "DT_JMPREL",
        DT_INIT_ARRAY => "DT_INIT_ARRAY",
        DT_FINI_ARRAY => "DT_FINI_ARRAY",
        DT_PREINIT_ARRAY => "DT_PREINIT_ARRAY",
        DT_INIT_ARRAYSZ => "DT_INIT_ARRAYSZ",
        DT_FINI_ARRAYSZ => "DT_FINI_ARRAYSZ",
        DT_PREINIT_ARRAYSZ => "DT_PREINIT_ARRAYSZ",
        DT_RELRSZ => "DT_RELRSZ",
        DT_RUNPATH => "DT_RUNPATH",
        DT_RELR => "DT_RELR",
        DT_RELRENT => "DT_RELRENT",
        DT_GNU_HASH => "DT_GNU_HASH",
        DT_VERSYM => "DT_VERSYM",
        DT_RELACOUNT => "DT_RELACOUNT",
        DT_VERDEF => "DT_VERDEF",
        DT_VERNEED => "DT_VERNEED",
        DT_AUXILIARY => "DT_AUXILIARY",
        DT_FILTER => "DT_FILTER",
        _ => return format!("dynamic tag {tag:#x}"),
    };
    name.into()
}

/// A loadable segment: where it lies in memory (relative to the load base)
/// and in the file.
#[derive(Debug, Clone, Copy)]
struct Segment {
    index: u64,
    vaddr: u64,
    memsz: u64,
    offset: u64,
    filesz: u64,
    flags: u32,
}

impl Segment {
    fn end(&self) -> u64 {
        self.vaddr + self.memsz
    }

    /// Whether `[addr, addr + size)` lies inside the first `limit` bytes of the segment.
    fn holds_within(&self, addr: u64, size: u64, limit: u64) -> bool {
        addr >= self.vaddr && size <= limit && addr - self.vaddr <= limit - size
    }

    fn holds(&self, addr: u64, size: u64) -> bool {
        self.holds_within(addr, size, self.memsz)
    }
}

/// The loadable segments of a checked image, in address order.
struct Loads<'a> {
    bytes: &'a [u8],
    segs: Vec<Segment>,
    /// The dynamic section's address (`PT_DYNAMIC`'s `p_vaddr`).
    dynamic: u64,
}

impl<'a> Loads<'a> {
    /// The segment holding `[addr, addr + size)` in memory.
    fn holding(&self, addr: u64, size: u64) -> Option<&Segment> {
        self.segs.iter().find(|s| s.holds(addr, size))
    }

    /// The file bytes ld.so reads at `[addr, addr + size)`: inside the
    /// file-backed part of one readable segment.
    fn data(&self, addr: u64, size: u64, what: &dyn Fn() -> String) -> Result<&'a [u8]> {
        let seg =
            self.segs.iter().find(|s| s.holds_within(addr, size, s.filesz)).ok_or_else(|| {
                bad(format!("{} ({addr:#x}..+{size:#x}) is not inside the file contents of one loadable segment", what()))
            })?;
        if seg.flags & PF_R == 0 {
            return Err(bad(format!("{} ({addr:#x}) is in loadable segment {}, which is not readable", what(), seg.index)));
        }
        // `holds_within` and the layout check keep this inside `bytes`.
        let start = (seg.offset + (addr - seg.vaddr)) as usize;
        self.bytes.get(start..start + size as usize).ok_or_else(|| bad(format!("{} ({addr:#x}) lies past the file", what())))
    }

    fn executable(&self, addr: u64) -> bool {
        self.holding(addr, 1).is_some_and(|s| s.flags & PF_X != 0)
    }

    fn writable(&self, addr: u64, size: u64, textrel: bool) -> bool {
        self.holding(addr, size).is_some_and(|s| textrel || s.flags & PF_W != 0)
    }
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("invariant: 4 bytes"))
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("invariant: 8 bytes"))
}

/// The dynamic section's entries as ld.so records them: the last entry of a
/// tag counts (`DT_NEEDED` excepted, each of which counts).
#[derive(Default)]
struct Dynamic {
    entries: Vec<(u64, u64)>,
}

impl Dynamic {
    fn get(&self, tag: u64) -> Option<u64> {
        self.entries.iter().rev().find(|e| e.0 == tag).map(|e| e.1)
    }
}

/// Checks an x86-64 shared object the way the system loader will use it,
/// before `dlopen` gets it (see the module documentation). The error names
/// the program header, dynamic entry or relocation at fault.
pub fn check_shared_object(bytes: &[u8]) -> Result<()> {
    check_elf_layout(bytes)?;
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Err(bad("not an ELF image (bad magic)"));
    }
    let e_type = read_u16(bytes, 16).unwrap_or(0);
    if e_type != 3 {
        return Err(bad(format!("ELF type {e_type} is not a shared object (ET_DYN, 3)")));
    }
    let machine = read_u16(bytes, 18).unwrap_or(0);
    if machine != 62 {
        return Err(bad(format!("ELF machine {machine} is not x86-64 (62)")));
    }
    let loads = check_program_headers(bytes)?;
    check_dynamic(&loads, bytes)
}

/// The program headers: loadable segments in ascending order without
/// overlap, each with `p_filesz <= p_memsz`, page-or-larger power-of-two
/// alignment matching its file offset, and addresses inside the user
/// address space; one `PT_DYNAMIC`; the segments ld.so or the unwinder read
/// through their address inside one loadable segment.
fn check_program_headers(bytes: &[u8]) -> Result<Loads<'_>> {
    let phoff = read_u64(bytes, 32).unwrap_or(0);
    let phentsize = read_u16(bytes, 54).unwrap_or(0);
    let phnum = u64::from(read_u16(bytes, 56).unwrap_or(0));
    if phentsize != 56 {
        return Err(bad(format!("program-header entry size {phentsize} is not 56")));
    }
    if phnum == 0 {
        return Err(bad("the image has no program headers"));
    }
    let mut segs: Vec<Segment> = Vec::new();
    let mut others = Vec::new();
    for i in 0..phnum {
        let ph = phoff + 56 * i;
        // check_elf_layout established that the table lies inside `bytes`.
        let f = |off: u64| read_u64(bytes, ph + off).unwrap_or(0);
        let (ty, flags) = (read_u32(bytes, ph).unwrap_or(0), read_u32(bytes, ph + 4).unwrap_or(0));
        let (offset, vaddr, filesz, memsz, align) = (f(8), f(16), f(32), f(40), f(48));
        let head = || format!("program header {i} ({})", pt_name(ty));
        if ty != PT_LOAD {
            if matches!(ty, PT_DYNAMIC | PT_PHDR | PT_TLS | PT_GNU_EH_FRAME | PT_GNU_RELRO | PT_GNU_PROPERTY)
                && let Some(&(j, ..)) = others.iter().find(|o: &&(u64, u32, u64, u64, u64, u64)| o.1 == ty)
            {
                return Err(bad(format!("program headers {j} and {i} are both {}; the loader expects one", pt_name(ty))));
            }
            others.push((i, ty, vaddr, filesz, memsz, align));
            continue;
        }
        if filesz > memsz {
            return Err(bad(format!("{}: p_filesz {filesz:#x} is larger than p_memsz {memsz:#x}", head())));
        }
        if flags & PF_X != 0 && filesz != memsz {
            return Err(bad(format!(
                "{}: executable, but p_filesz {filesz:#x} differs from p_memsz {memsz:#x} (code would be zero-filled)",
                head()
            )));
        }
        if !align.is_power_of_two() || !(PAGE..=MAX_ALIGN).contains(&align) {
            return Err(bad(format!(
                "{}: alignment {align:#x} is not a power of two from the page size {PAGE:#x} to {MAX_ALIGN:#x}",
                head()
            )));
        }
        if vaddr.wrapping_sub(offset) & (align - 1) != 0 {
            return Err(bad(format!("{}: address {vaddr:#x} and file offset {offset:#x} differ modulo the alignment {align:#x}", head())));
        }
        if vaddr.checked_add(memsz).is_none_or(|end| end > ADDRESS_LIMIT) {
            return Err(bad(format!("{}: {vaddr:#x} + {memsz:#x} reaches past the 47-bit user address space", head())));
        }
        if let Some(prev) = segs.last()
            && vaddr < prev.end()
        {
            return Err(bad(format!(
                "{} at {vaddr:#x} overlaps or precedes loadable segment {} ({:#x}..{:#x}); loadable segments must ascend without overlap",
                head(),
                prev.index,
                prev.vaddr,
                prev.end()
            )));
        }
        segs.push(Segment { index: i, vaddr, memsz, offset, filesz, flags });
    }
    let (Some(first), Some(last)) = (segs.first(), segs.last()) else {
        return Err(bad("the image has no loadable (PT_LOAD) segment"));
    };
    let span = last.end() - (first.vaddr & !(PAGE - 1));
    if span > MAX_SPAN {
        return Err(bad(format!("the loadable segments span {span:#x} bytes, more than the limit of {MAX_SPAN:#x}")));
    }
    let mut loads = Loads { bytes, segs, dynamic: 0 };
    check_sections_match_segments(&loads, &sections(bytes))?;
    let mut dynamic = false;
    for &(i, ty, vaddr, filesz, memsz, align) in &others {
        let head = || format!("program header {i} ({})", pt_name(ty));
        match ty {
            PT_DYNAMIC => {
                dynamic = true;
                if filesz < 16 || !vaddr.is_multiple_of(8) {
                    return Err(bad(format!("{}: empty or misaligned dynamic section at {vaddr:#x} (+{filesz:#x})", head())));
                }
                loads.data(vaddr, memsz.max(filesz), &head)?;
                loads.dynamic = vaddr;
            }
            // ld.so makes the pages read-only after relocating: they must
            // belong to one segment, or it would protect memory that is
            // not the image's or that another segment writes later.
            PT_GNU_RELRO if loads.holding(vaddr, memsz).is_none() => {
                return Err(bad(format!("{} at {vaddr:#x}..+{memsz:#x} is not inside one loadable segment", head())));
            }
            PT_TLS => {
                if filesz > memsz {
                    return Err(bad(format!("{}: p_filesz {filesz:#x} is larger than p_memsz {memsz:#x}", head())));
                }
                if align > PAGE || (align > 1 && !align.is_power_of_two()) {
                    return Err(bad(format!("{}: alignment {align:#x} is not a power of two up to {PAGE:#x}", head())));
                }
                if memsz > MAX_TLS {
                    return Err(bad(format!("{}: {memsz:#x} bytes per thread, more than the limit of {MAX_TLS:#x}", head())));
                }
                // The loader copies the initialised part from the mapping; the
                // rest (.tbss) is zero-filled and need not lie in any segment.
                if filesz > 0 {
                    loads.data(vaddr, filesz, &head)?;
                }
            }
            PT_PHDR => {
                // The loader and dl_iterate_phdr's users (unwinders) read
                // the program headers at this address.
                loads.data(vaddr, 56 * phnum, &head)?;
                if loads.holding(vaddr, 1).is_none_or(|seg| seg.offset + (vaddr - seg.vaddr) != phoff) {
                    return Err(bad(format!("{} at {vaddr:#x} does not map the program-header table (file offset {phoff:#x})", head())));
                }
            }
            PT_NOTE | PT_GNU_PROPERTY | PT_GNU_EH_FRAME => {
                loads.data(vaddr, memsz.max(filesz), &head)?;
            }
            _ => {}
        }
    }
    if !dynamic {
        return Err(bad("the image has no dynamic section (PT_DYNAMIC); it is not a shared object"));
    }
    Ok(loads)
}

/// One section header: the fields the checks compare with the program
/// headers and the dynamic section.
#[derive(Debug, Clone, Copy)]
struct Section {
    index: u64,
    ty: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
}

const SHF_ALLOC: u64 = 2;
const SHT_RELA: u32 = 4;
const SHT_NOBITS: u32 = 8;
const SHT_DYNSYM: u32 = 11;
const SHT_RELR: u32 = 19;

/// The section headers (none when the image has no table; the loader
/// needs none, so they are optional). check_elf_layout established that the
/// table lies inside `bytes`.
fn sections(bytes: &[u8]) -> Vec<Section> {
    let (shoff, shentsize) = (read_u64(bytes, 40).unwrap_or(0), u64::from(read_u16(bytes, 58).unwrap_or(0)));
    let mut shnum = u64::from(read_u16(bytes, 60).unwrap_or(0));
    if shoff == 0 || shentsize < 64 {
        return Vec::new();
    }
    if shnum == 0 {
        shnum = read_u64(bytes, shoff + 32).unwrap_or(0);
    }
    (0..shnum)
        .map(|index| {
            let sh = shoff + index * shentsize;
            let f = |off: u64| read_u64(bytes, sh + off).unwrap_or(0);
            Section { index, ty: read_u32(bytes, sh + 4).unwrap_or(0), flags: f(8), addr: f(16), offset: f(24), size: f(32) }
        })
        .collect()
}

/// Where the section headers (when present) say each allocated section's
/// bytes are, the loadable segment holding its address must map them from:
/// a segment whose file offset or address moved maps other bytes there, and
/// the loader would run or read them as the section's (the code at
/// `DT_INIT`, the relocation tables).
fn check_sections_match_segments(loads: &Loads<'_>, sections: &[Section]) -> Result<()> {
    // SHF_ALLOC sections with file contents (not SHT_NULL or SHT_NOBITS).
    for s in sections.iter().filter(|s| s.flags & SHF_ALLOC != 0 && s.ty != 0 && s.ty != SHT_NOBITS && s.size != 0) {
        if let Some(seg) = loads.segs.iter().find(|g| g.holds_within(s.addr, s.size, g.filesz))
            && seg.offset + (s.addr - seg.vaddr) != s.offset
        {
            return Err(bad(format!(
                "section {} (address {:#x}, file offset {:#x}) is mapped by loadable segment {} from file offset {:#x} instead",
                s.index,
                s.addr,
                s.offset,
                seg.index,
                seg.offset + (s.addr - seg.vaddr)
            )));
        }
    }
    Ok(())
}

/// Every allocated relocation section the section headers list (when
/// present) must be one the loader applies: inside the `DT_RELA`,
/// `DT_JMPREL` or `DT_RELR` table. A relocation table whose address or size
/// entry moved leaves relocations unapplied (pointers the loader should have
/// set, procedure-linkage slots) that the image's code then jumps through.
fn check_relocation_sections_covered(sections: &[Section], d: &Dynamic) -> Result<()> {
    let tables: Vec<(u64, u64)> = [(DT_RELA, DT_RELASZ), (DT_JMPREL, DT_PLTRELSZ), (DT_RELR, DT_RELRSZ)]
        .iter()
        .filter_map(|&(t, sz)| Some((d.get(t)?, d.get(sz).unwrap_or(0))))
        .collect();
    for s in sections.iter().filter(|s| matches!(s.ty, SHT_RELA | SHT_RELR) && s.flags & SHF_ALLOC != 0 && s.size != 0) {
        let (addr, size) = (s.addr, s.size);
        let covered = tables.iter().any(|&(start, len)| addr >= start && addr - start <= len && size <= len - (addr - start));
        if !covered {
            return Err(bad(format!(
                "relocation section {} ({addr:#x}..+{size:#x}) is not inside the DT_RELA, DT_JMPREL or DT_RELR table, so the loader would not apply it",
                s.index
            )));
        }
    }
    Ok(())
}

/// The dynamic section and everything it points at.
fn check_dynamic(loads: &Loads<'_>, bytes: &[u8]) -> Result<()> {
    let dyn_addr = loads.dynamic;
    // ld.so reads entries up to DT_NULL, whatever PT_DYNAMIC's size says.
    let Some(seg) = loads.segs.iter().find(|s| s.holds_within(dyn_addr, 16, s.filesz)) else {
        return Err(bad(format!("the dynamic section at {dyn_addr:#x} is not inside the file contents of one loadable segment")));
    };
    let room = (seg.vaddr + seg.filesz - dyn_addr) / 16;
    let table = loads.data(dyn_addr, room * 16, &|| "the dynamic section".into())?;
    let mut d = Dynamic::default();
    let mut terminated = false;
    for k in 0..room as usize {
        let (tag, val) = (le_u64(table, 16 * k), le_u64(table, 16 * k + 8));
        if tag == DT_NULL {
            terminated = true;
            break;
        }
        d.entries.push((tag, val));
    }
    if !terminated {
        return Err(bad(format!("the dynamic section at {dyn_addr:#x} has no DT_NULL entry inside its segment")));
    }
    let entry = |tag: u64| {
        let k = d.entries.iter().rposition(|e| e.0 == tag).unwrap_or(0);
        format!("dynamic entry {k} ({})", dt_name(tag))
    };

    // Entry sizes and kinds the loader asserts on (a failed assertion ends
    // the process with status 127).
    for (tag, want, need) in [(DT_RELAENT, RELA_SIZE, DT_RELA), (DT_SYMENT, SYM_SIZE, 0), (DT_RELRENT, 8, DT_RELR), (DT_PLTREL, DT_RELA, 0)]
    {
        match d.get(tag) {
            Some(v) if v != want => return Err(bad(format!("{} is {v:#x}; x86-64 needs {want:#x}", entry(tag)))),
            None if need != 0 && d.get(need).is_some() => {
                return Err(bad(format!("{} is present without {}", entry(need), dt_name(tag))));
            }
            _ => {}
        }
    }
    // The loader reads the size entry of each of these tables unconditionally.
    for (tag, size_tag) in [
        (DT_RELA, DT_RELASZ),
        (DT_JMPREL, DT_PLTRELSZ),
        (DT_RELR, DT_RELRSZ),
        (DT_INIT_ARRAY, DT_INIT_ARRAYSZ),
        (DT_FINI_ARRAY, DT_FINI_ARRAYSZ),
        (DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ),
    ] {
        if d.get(tag).is_some() && d.get(size_tag).is_none() {
            return Err(bad(format!("{} is present without its size entry", entry(tag))));
        }
    }
    // Without DT_PLTREL the loader skips the DT_JMPREL relocations, and
    // calls through the procedure linkage table would jump to unset slots.
    if d.get(DT_JMPREL).is_some() && d.get(DT_PLTREL).is_none() {
        return Err(bad(format!("{} is present without DT_PLTREL", entry(DT_JMPREL))));
    }
    let sections = sections(bytes);
    check_relocation_sections_covered(&sections, &d)?;
    if d.get(DT_REL).is_some() {
        return Err(bad(format!("{}: x86-64 shared objects use DT_RELA relocations, not DT_REL", entry(DT_REL))));
    }

    // Strings.
    let (Some(strtab), Some(strsz)) = (d.get(DT_STRTAB), d.get(DT_STRSZ)) else {
        return Err(bad("the dynamic section lacks DT_STRTAB or DT_STRSZ (the string table)"));
    };
    let strings = loads.data(strtab, strsz, &|| format!("the string table ({} with DT_STRSZ)", entry(DT_STRTAB)))?;
    let string = |off: u64, what: &dyn Fn() -> String| -> Result<&[u8]> {
        let tail = usize::try_from(off).ok().and_then(|o| strings.get(o..)).unwrap_or(&[]);
        match tail.iter().position(|&c| c == 0) {
            Some(n) => Ok(&tail[..n]),
            None => Err(bad(format!("{}: string offset {off:#x} is outside the {strsz:#x}-byte string table", what()))),
        }
    };
    let mut needed = Vec::new();
    for (k, &(tag, val)) in d.entries.iter().enumerate() {
        if matches!(tag, DT_NEEDED | DT_SONAME | DT_RPATH | DT_RUNPATH | DT_AUXILIARY | DT_FILTER) {
            let s = string(val, &|| format!("dynamic entry {k} ({})", dt_name(tag)))?;
            if tag == DT_NEEDED {
                needed.push(s);
            }
        }
    }

    // Symbols. A System V hash table gives the symbol count (nchain); a GNU
    // one only reaches the defined symbols it hashes (an object with no
    // defined symbol may leave its undefined ones above `symoffset`), so
    // with it an index is bounded only by the segment holding the table.
    // Every symbol a hash lookup can reach is checked below; every other
    // one a relocation names is checked with the relocation.
    let Some(symtab) = d.get(DT_SYMTAB) else {
        return Err(bad("the dynamic section lacks DT_SYMTAB (the symbol table)"));
    };
    loads.data(symtab, SYM_SIZE, &|| format!("the symbol table ({})", entry(DT_SYMTAB)))?;
    let (hashed, mut nsyms) = match (d.get(DT_GNU_HASH), d.get(DT_HASH)) {
        (Some(gnu), _) => (gnu_hash_symbols(loads, gnu, &entry(DT_GNU_HASH))?, None),
        (None, Some(sysv)) => {
            let n = sysv_hash_symbols(loads, sysv, &entry(DT_HASH))?;
            (n, Some(n))
        }
        (None, None) => (0, None),
    };
    // The table starts with the null symbol (all zero), and the string
    // table with an empty string: a table address that moved rarely does.
    if loads.data(symtab, SYM_SIZE, &|| entry(DT_SYMTAB))?.iter().any(|&b| b != 0) {
        return Err(bad(format!("{} at {symtab:#x} does not start with the null symbol", entry(DT_SYMTAB))));
    }
    if strings.first() != Some(&0) {
        return Err(bad(format!("{} at {strtab:#x} does not start with an empty string", entry(DT_STRTAB))));
    }
    // The dynamic symbol section (when the section headers list one) is
    // the table DT_SYMTAB names, and its size is the symbol count.
    if let Some(dynsym) = sections.iter().find(|s| s.ty == SHT_DYNSYM && s.flags & SHF_ALLOC != 0) {
        if dynsym.addr != symtab {
            return Err(bad(format!(
                "{} is {symtab:#x}, but the dynamic symbol section {} is at {:#x}",
                entry(DT_SYMTAB),
                dynsym.index,
                dynsym.addr
            )));
        }
        let count = dynsym.size / SYM_SIZE;
        if hashed > count || nsyms.is_some_and(|n| n != count) {
            return Err(bad(format!(
                "the hash table covers {} symbols, but the dynamic symbol section {} holds {count}",
                nsyms.unwrap_or(hashed),
                dynsym.index
            )));
        }
        nsyms = Some(count);
    }
    let symbol = |index: u64, what: &dyn Fn() -> String| -> Result<&[u8]> {
        if let Some(n) = nsyms
            && index >= n
        {
            return Err(bad(format!("{}: symbol index {index} is past the {n} symbols of the table", what())));
        }
        let rec = loads.data(symtab + SYM_SIZE * index, SYM_SIZE, &|| format!("{}: symbol {index}", what()))?;
        string(u64::from(le_u32(rec, 0)), &|| format!("{}: the name of symbol {index}", what()))?;
        Ok(rec)
    };
    let nsyms_checked = hashed;
    for i in 0..nsyms_checked {
        symbol(i, &|| entry(DT_SYMTAB))?;
    }

    // Versions: the loader sizes its version array by the largest index the
    // need/definition records name, then indexes it with DT_VERSYM entries.
    let mut versions = 0u64;
    // Records are at least 8 bytes apart (each `next` moves forward): more
    // visits than the image has 8-byte words means chains that revisit.
    let mut budget = bytes.len() / 8 + 1;
    let mut visit = || {
        budget = budget.checked_sub(1).ok_or_else(|| bad("the version records' chains revisit records"))?;
        Ok::<(), OffloadError>(())
    };
    if let Some(vn) = d.get(DT_VERNEED) {
        let mut at = vn;
        loop {
            visit()?;
            let rec = loads.data(at, 16, &|| format!("{} record", entry(DT_VERNEED)))?;
            let (version, file, aux, next) = (le_u16(rec, 0), le_u32(rec, 4), le_u32(rec, 8), le_u32(rec, 12));
            if version != 1 {
                return Err(bad(format!("{} record at {at:#x}: version {version}, not 1", entry(DT_VERNEED))));
            }
            let name = string(u64::from(file), &|| format!("{} record at {at:#x}", entry(DT_VERNEED)))?;
            if !needed.contains(&name) {
                return Err(bad(format!(
                    "{} record at {at:#x} names '{}', which no DT_NEEDED entry names",
                    entry(DT_VERNEED),
                    String::from_utf8_lossy(name)
                )));
            }
            let mut a = at.checked_add(u64::from(aux)).ok_or_else(|| bad("version record chain overflows"))?;
            loop {
                visit()?;
                let r = loads.data(a, 16, &|| format!("{} auxiliary record", entry(DT_VERNEED)))?;
                string(u64::from(le_u32(r, 8)), &|| format!("{} auxiliary record at {a:#x}", entry(DT_VERNEED)))?;
                versions = versions.max(u64::from(le_u16(r, 6) & 0x7fff) + 1);
                let next = le_u32(r, 12);
                if next == 0 {
                    break;
                }
                a += u64::from(next);
            }
            if next == 0 {
                break;
            }
            at += u64::from(next);
        }
    }
    if let Some(vd) = d.get(DT_VERDEF) {
        let mut at = vd;
        loop {
            visit()?;
            let rec = loads.data(at, 20, &|| format!("{} record", entry(DT_VERDEF)))?;
            let (version, ndx, cnt, aux, next) = (le_u16(rec, 0), le_u16(rec, 4), le_u16(rec, 6), le_u32(rec, 12), le_u32(rec, 16));
            if version != 1 {
                return Err(bad(format!("{} record at {at:#x}: version {version}, not 1", entry(DT_VERDEF))));
            }
            versions = versions.max(u64::from(ndx & 0x7fff) + 1);
            let mut a = at + u64::from(aux);
            for _ in 0..cnt.max(1) {
                visit()?;
                let r = loads.data(a, 8, &|| format!("{} auxiliary record", entry(DT_VERDEF)))?;
                string(u64::from(le_u32(r, 0)), &|| format!("{} auxiliary record at {a:#x}", entry(DT_VERDEF)))?;
                let next = le_u32(r, 4);
                if next == 0 {
                    break;
                }
                a += u64::from(next);
            }
            if next == 0 {
                break;
            }
            at += u64::from(next);
        }
    }
    let versym = d.get(DT_VERSYM);
    let version_of = |index: u64, what: &dyn Fn() -> String| -> Result<()> {
        let Some(vs) = versym else { return Ok(()) };
        // `vs` is the entry's value, not yet checked: wrapping, data() refuses what is outside.
        let v = le_u16(loads.data(vs.wrapping_add(2 * index), 2, &|| format!("{}: the version of symbol {index}", what()))?, 0);
        if u64::from(v & 0x7fff) >= versions {
            return Err(bad(format!(
                "{}: symbol {index} has version index {} but the version records define {versions}",
                what(),
                v & 0x7fff
            )));
        }
        Ok(())
    };
    // With version records, the loader takes the DT_VERSYM table's address unconditionally.
    if versym.is_none() && versions > 0 {
        return Err(bad("the dynamic section has version records (DT_VERNEED or DT_VERDEF) without DT_VERSYM"));
    }
    if versym.is_some() && versions == 0 {
        return Err(bad(format!("{} is present without DT_VERNEED or DT_VERDEF records", entry(DT_VERSYM))));
    }
    for i in 0..nsyms_checked {
        version_of(i, &|| entry(DT_VERSYM))?;
    }

    // Code the loader calls.
    for tag in [DT_INIT, DT_FINI] {
        if let Some(a) = d.get(tag)
            && !loads.executable(a)
        {
            return Err(bad(format!("{} at {a:#x} is not inside an executable segment", entry(tag))));
        }
    }
    let mut arrays = Vec::new();
    for (tag, size_tag) in [(DT_INIT_ARRAY, DT_INIT_ARRAYSZ), (DT_FINI_ARRAY, DT_FINI_ARRAYSZ), (DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ)] {
        if let Some(a) = d.get(tag) {
            let size = d.get(size_tag).unwrap_or(0) & !7;
            loads.data(a, size, &|| format!("{} with its size", entry(tag)))?;
            if a % 8 != 0 {
                return Err(bad(format!("{} at {a:#x} is misaligned", entry(tag))));
            }
            // ld.so does not run a shared object's preinit array.
            if tag != DT_PREINIT_ARRAY {
                arrays.push((tag, a, size, vec![None; (size / 8) as usize]));
            }
        }
    }
    if let Some(got) = d.get(DT_PLTGOT) {
        loads.data(got, 8, &|| entry(DT_PLTGOT))?;
    }

    // Relocations: each target inside a writable segment (any segment with
    // text relocations), known types, symbols inside the tables.
    let textrel = d.get(DT_TEXTREL).is_some() || d.get(DT_FLAGS).is_some_and(|f| f & DF_TEXTREL != 0);
    let relative_count = d.get(DT_RELACOUNT).unwrap_or(0);
    for (tag, size_tag) in [(DT_RELA, DT_RELASZ), (DT_JMPREL, DT_PLTRELSZ)] {
        let Some(at) = d.get(tag) else { continue };
        let size = d.get(size_tag).unwrap_or(0);
        let table =
            loads.data(at, size - size % RELA_SIZE, &|| format!("the relocation table {} with {}", entry(tag), dt_name(size_tag)))?;
        let count = size / RELA_SIZE;
        if tag == DT_RELA && relative_count > count {
            return Err(bad(format!("{} says {relative_count} relative relocations, but the table holds {count}", entry(DT_RELACOUNT))));
        }
        for n in 0..count as usize {
            let (offset, info, addend) = (le_u64(table, 24 * n), le_u64(table, 24 * n + 8), le_u64(table, 24 * n + 16));
            let (ty, sym) = (info as u32, info >> 32);
            let what = || format!("relocation {n} of {} (type {ty}, at {offset:#x})", entry(tag));
            if tag == DT_RELA && (n as u64) < relative_count && ty != R_RELATIVE {
                return Err(bad(format!("{}: {} counts it as relative, but it is not", what(), dt_name(DT_RELACOUNT))));
            }
            let width = match ty {
                R_NONE => continue,
                R_PC32 | R_32 | R_SIZE32 => 4,
                R_TLSDESC => 16,
                R_64 | R_GLOB_DAT | R_JUMP_SLOT | R_RELATIVE | R_DTPMOD64 | R_DTPOFF64 | R_TPOFF64 | R_SIZE64 | R_IRELATIVE => 8,
                R_COPY => return Err(bad(format!("{}: a copy relocation belongs in an executable, not a shared object", what()))),
                _ => return Err(bad(format!("{}: a relocation type the x86-64 loader does not apply", what()))),
            };
            if !loads.writable(offset, width, textrel) {
                return Err(bad(format!("{}: its target is not inside a writable loadable segment", what())));
            }
            if ty == R_IRELATIVE && !loads.executable(addend) {
                return Err(bad(format!("{}: the resolver address {addend:#x} is not inside an executable segment", what())));
            }
            let mut target = None;
            if sym != 0 && ty != R_RELATIVE && ty != R_IRELATIVE {
                let rec = symbol(sym, &what)?;
                version_of(sym, &what)?;
                // A symbol defined here: its address is known now.
                if le_u16(rec, 6) != 0 {
                    target = Some(le_u64(rec, 8).wrapping_add(if ty == R_64 { addend } else { 0 }));
                } else {
                    target = Some(u64::MAX);
                }
            } else if ty == R_RELATIVE {
                target = Some(addend);
            }
            for (_, a, size, slots) in arrays.iter_mut() {
                if offset >= *a && offset < *a + *size && matches!(ty, R_RELATIVE | R_64 | R_GLOB_DAT) {
                    slots[((offset - *a) / 8) as usize] = target;
                }
            }
        }
    }
    if let Some(at) = d.get(DT_RELR) {
        let size = d.get(DT_RELRSZ).unwrap_or(0) & !7;
        let table = loads.data(at, size, &|| format!("the relocation table {} with DT_RELRSZ", entry(DT_RELR)))?;
        let mut next = 0u64;
        let apply = |addr: u64, arrays: &mut Vec<(u64, u64, u64, Vec<Option<u64>>)>| -> Result<()> {
            if !loads.writable(addr, 8, textrel) {
                return Err(bad(format!("{}: relocated address {addr:#x} is not inside a writable loadable segment", entry(DT_RELR))));
            }
            for (_, a, size, slots) in arrays.iter_mut() {
                if addr >= *a && addr < *a + *size && addr.is_multiple_of(8) {
                    // The file holds the link-time address; the loader adds the base.
                    let linked = loads.data(addr, 8, &|| entry(DT_RELR)).map(|b| le_u64(b, 0))?;
                    slots[((addr - *a) / 8) as usize] = Some(linked);
                }
            }
            Ok(())
        };
        for k in 0..(size / 8) as usize {
            let e = le_u64(table, 8 * k);
            if e & 1 == 0 {
                apply(e, &mut arrays)?;
                next = e.wrapping_add(8);
            } else {
                for bit in 1..64 {
                    if (e >> bit) & 1 != 0 {
                        apply(next.wrapping_add(8 * (bit - 1)), &mut arrays)?;
                    }
                }
                next = next.wrapping_add(63 * 8);
            }
        }
    }
    // Each init/fini array slot is called: it must end up pointing at code
    // (u64::MAX marks a symbol from another object, resolved or refused by the loader).
    for (tag, a, _, slots) in &arrays {
        for (k, slot) in slots.iter().enumerate() {
            match slot {
                None => {
                    return Err(bad(format!(
                        "{} slot {k} at {:#x} has no relocation; the loader would call its unrelocated value",
                        entry(*tag),
                        a + 8 * k as u64
                    )));
                }
                Some(u64::MAX) => {}
                Some(t) if loads.executable(*t) => {}
                Some(t) => {
                    return Err(bad(format!("{} slot {k} points at {t:#x}, which is not inside an executable segment", entry(*tag))));
                }
            }
        }
    }
    Ok(())
}

/// The number of symbols a GNU hash table covers, after checking that the
/// table and every chain its buckets start lie inside the image. Chains run
/// through consecutive symbols and end at a hash with bit 0 set, so every
/// chain ends at or before the first end mark after the highest bucket
/// start: one forward scan finds the count.
fn gnu_hash_symbols(loads: &Loads<'_>, at: u64, what: &str) -> Result<u64> {
    let head = loads.data(at, 16, &|| format!("the hash table ({what})"))?;
    let (nbuckets, symoffset, bloom) = (le_u32(head, 0), le_u32(head, 4), le_u32(head, 8));
    if nbuckets == 0 || !bloom.is_power_of_two() {
        return Err(bad(format!("{what}: {nbuckets} buckets and a {bloom}-word filter (need buckets and a power-of-two filter)")));
    }
    let buckets_at = at + 16 + 8 * u64::from(bloom);
    let buckets = loads.data(buckets_at, 4 * u64::from(nbuckets), &|| format!("the buckets of the hash table ({what})"))?;
    let chains_at = buckets_at + 4 * u64::from(nbuckets);
    let mut highest = None;
    for b in 0..nbuckets as usize {
        let start = le_u32(buckets, 4 * b);
        if start == 0 {
            continue;
        }
        if start < symoffset {
            return Err(bad(format!("{what}: bucket {b} starts at symbol {start}, below the first hashed symbol {symoffset}")));
        }
        highest = highest.max(Some(start));
    }
    let Some(highest) = highest else { return Ok(u64::from(symoffset)) };
    let mut i = u64::from(highest);
    loop {
        let c = loads.data(chains_at + 4 * (i - u64::from(symoffset)), 4, &|| format!("the hash chain of symbol {highest} ({what})"))?;
        if le_u32(c, 0) & 1 != 0 {
            return Ok(i + 1);
        }
        i += 1;
    }
}

/// The number of symbols a System V hash table covers (`nchain`), after
/// checking its buckets and chains stay below it and its chains end.
fn sysv_hash_symbols(loads: &Loads<'_>, at: u64, what: &str) -> Result<u64> {
    let head = loads.data(at, 8, &|| format!("the hash table ({what})"))?;
    let (nbucket, nchain) = (u64::from(le_u32(head, 0)), u64::from(le_u32(head, 4)));
    if nbucket == 0 {
        return Err(bad(format!("{what}: the hash table has no buckets")));
    }
    let t = loads.data(at + 8, 4 * (nbucket + nchain), &|| format!("the buckets and chains of the hash table ({what})"))?;
    let word = |i: u64| u64::from(le_u32(t, 4 * i as usize));
    let mut steps = 0u64;
    for b in 0..nbucket {
        let mut i = word(b);
        while i != 0 {
            if i >= nchain {
                return Err(bad(format!("{what}: a chain of bucket {b} reaches symbol {i}, past the {nchain} symbols")));
            }
            steps += 1;
            if steps > nchain {
                return Err(bad(format!("{what}: the chains loop")));
            }
            i = word(nbucket + i);
        }
    }
    Ok(nchain)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reads libc (2 MiB) from disk: no files under miri, and far too slow there.
    #[cfg_attr(miri, ignore)]
    #[test]
    fn elf_layout_rejects_every_truncation() {
        // A real shared object (the system's libc, ELF64), cut at several places.
        let Ok(bytes) = std::fs::read("/lib/x86_64-linux-gnu/libc.so.6") else { return };
        assert!(check_elf_layout(&bytes).is_ok());
        for cut in [64, 100, 4096, bytes.len() / 2, bytes.len() - 1] {
            let err = check_elf_layout(&bytes[..cut]).expect_err("truncated image accepted");
            assert!(err.to_string().contains("truncated or malformed ELF image"), "{err}");
        }
        assert!(check_elf_layout(b"// PTX text").is_ok());
    }

    /// Offsets of the program headers of type `ty` in `b`.
    fn phdrs(b: &[u8], ty: u32) -> Vec<u64> {
        let (phoff, phnum) = (read_u64(b, 32).unwrap(), u64::from(read_u16(b, 56).unwrap()));
        (0..phnum).map(|i| phoff + 56 * i).filter(|&ph| read_u32(b, ph) == Some(ty)).collect()
    }

    fn phdr(b: &[u8], ty: u32, nth: usize) -> u64 {
        phdrs(b, ty)[nth]
    }

    fn set_u64(b: &mut [u8], off: u64, v: u64) {
        b[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn expect_rejected(b: &[u8], words: &str) {
        let e = check_shared_object(b).expect_err("corrupt image accepted").to_string();
        assert!(e.contains(words), "{e}");
    }

    /// The corruptions that crashed the loader or ended the process, on a
    /// real shared object: each refused with its reason.
    #[cfg_attr(miri, ignore)]
    #[test]
    fn loader_crashing_corruptions_are_refused() {
        let Ok(lib) = std::fs::read("/lib/x86_64-linux-gnu/libdl.so.2") else { return };
        check_shared_object(&lib).expect("libdl passes");
        let loads = phdrs(&lib, PT_LOAD).len();

        // The last loadable segment with p_memsz < p_filesz (ld.so maps it,
        // then ends the process with status 127).
        let mut b = lib.clone();
        let last = phdr(&b, PT_LOAD, loads - 1);
        let filesz = read_u64(&b, last + 32).unwrap();
        set_u64(&mut b, last + 40, filesz - 1);
        expect_rejected(&b, "p_filesz");

        // The dynamic segment's address with the high bit set (SIGSEGV in dlopen).
        let mut b = lib.clone();
        let d = phdr(&b, PT_DYNAMIC, 0);
        let vaddr = read_u64(&b, d + 16).unwrap();
        set_u64(&mut b, d + 16, vaddr | 1 << 63);
        expect_rejected(&b, "PT_DYNAMIC");

        // RELRO reaching past its segment, segments out of order, a huge alignment.
        let mut b = lib.clone();
        let r = phdr(&b, PT_GNU_RELRO, 0);
        let memsz = read_u64(&b, r + 40).unwrap();
        set_u64(&mut b, r + 40, memsz + PAGE);
        expect_rejected(&b, "PT_GNU_RELRO");
        let mut b = lib.clone();
        let second = phdr(&b, PT_LOAD, 1);
        set_u64(&mut b, second + 16, 0);
        expect_rejected(&b, "ascend");
        let mut b = lib.clone();
        let first = phdr(&b, PT_LOAD, 0);
        set_u64(&mut b, first + 48, 1 << 62);
        expect_rejected(&b, "alignment");
    }

    /// Small and empty inputs: errors, never panics (also under miri).
    #[test]
    fn small_inputs_are_errors() {
        assert!(check_shared_object(&[]).is_err());
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        assert!(check_shared_object(&h).is_err());
        h[16] = 3;
        h[18] = 62;
        assert!(check_shared_object(&h).unwrap_err().to_string().contains("program-header entry size"));
        h[54] = 56;
        assert!(check_shared_object(&h).unwrap_err().to_string().contains("no program headers"));
        h[56] = 1;
        h[32] = 64;
        assert!(check_shared_object(&h).unwrap_err().to_string().contains("truncated"));
        h.resize(120, 0);
        assert!(check_shared_object(&h).unwrap_err().to_string().contains("no loadable"));
    }

    #[cfg_attr(miri, ignore)]
    #[test]
    fn system_libraries_pass() {
        for lib in ["libc.so.6", "libm.so.6", "libgcc_s.so.1", "libstdc++.so.6"] {
            let Ok(bytes) = std::fs::read(format!("/lib/x86_64-linux-gnu/{lib}")) else { continue };
            if let Err(e) = check_shared_object(&bytes) {
                panic!("{lib}: {e}");
            }
        }
    }
}
