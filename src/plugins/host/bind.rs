//! Per-device bindings of a loaded host image.
//!
//! Code in a host image calls libomp's `omp_get_device_num`, which answers
//! the initial device's number on every device (22.1 does the same). OpenMP
//! 5.2 §18.7.5 wants the number of the device the region runs on. Each
//! device loads its own copy of the image (`dlopen` of its own memfd), so
//! each copy has its own GOT: after loading, the copy's relocations of
//! `omp_get_device_num` (PLT slot, GOT entry, or a plain data pointer) are
//! rewritten to a function of this module that answers that device's
//! number. Nothing changes on the launch path; a region's call costs what
//! libomp's did (one indirect call through the GOT).

use crate::base::error::{OffloadError, Result};
use std::sync::atomic::{AtomicI32, Ordering};

use super::NUM_DEVICES;

/// User device number of each host-plugin device, set when the runtime
/// exposes it; until then the plugin's own number (the usual mapping when
/// the host plugin is the only one).
static DEVICE_IDS: [AtomicI32; NUM_DEVICES] = [AtomicI32::new(0), AtomicI32::new(1), AtomicI32::new(2), AtomicI32::new(3)];

/// Records that the plugin's `device` is user device `id`.
pub fn set_device_id(device: usize, id: usize) {
    if let (Some(slot), Ok(id)) = (DEVICE_IDS.get(device), i32::try_from(id)) {
        slot.store(id, Ordering::Relaxed);
    }
}

/// `omp_get_device_num` as seen by code of device `D`'s image copy.
extern "C" fn device_num<const D: usize>() -> libc::c_int {
    DEVICE_IDS[D].load(Ordering::Relaxed)
}

/// One function per device (the function's address is what a copy binds).
const DEVICE_NUM_FNS: [extern "C" fn() -> libc::c_int; NUM_DEVICES] = [device_num::<0>, device_num::<1>, device_num::<2>, device_num::<3>];

/// Symbols bound per device: the C name and the Fortran one (same ABI).
const BOUND_SYMBOLS: [&str; 2] = ["omp_get_device_num", "omp_get_device_num_"];

/// A word of the loaded image to rewrite: its offset from the load base,
/// the addend (`R_X86_64_64`: S + A; the others: S) and the protection
/// ld.so left on its page (`None`: no loaded segment holds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub offset: u64,
    pub addend: i64,
    pub prot: Option<libc::c_int>,
}

/// A 64-bit little-endian ELF image (the only kind a host device loads).
type Elf<'a> = object::read::elf::ElfFile64<'a, object::LittleEndian>;

/// The protection ld.so leaves on the page at `offset` (image-relative):
/// read-only for whole pages inside `PT_GNU_RELRO` (ld.so rounds the end
/// down), otherwise the flags of the `PT_LOAD` segment holding it.
fn page_protection(file: &Elf<'_>, offset: u64) -> Option<libc::c_int> {
    use object::elf::{PF_R, PF_W, PF_X, PT_GNU_RELRO, PT_LOAD};
    use object::read::elf::ProgramHeader;
    let e = file.endian();
    let page = offset & !4095;
    let mut prot = None;
    for ph in file.elf_program_headers() {
        let (vaddr, memsz) = (ph.p_vaddr(e), ph.p_memsz(e));
        match ph.p_type(e) {
            PT_GNU_RELRO => {
                let (start, end) = (vaddr & !4095, vaddr.saturating_add(memsz) & !4095);
                if page >= start && page < end {
                    return Some(libc::PROT_READ);
                }
            }
            PT_LOAD if offset >= vaddr && offset < vaddr.saturating_add(memsz) => {
                let f = ph.p_flags(e);
                let mut p = 0;
                for (flag, bit) in [(PF_R, libc::PROT_READ), (PF_W, libc::PROT_WRITE), (PF_X, libc::PROT_EXEC)] {
                    if f.contains(flag) {
                        p |= bit;
                    }
                }
                prot = Some(p);
            }
            _ => {}
        }
    }
    prot
}

/// The image's dynamic relocations that bind [`BOUND_SYMBOLS`] (empty for
/// an image that does not call `omp_get_device_num`, the usual case).
pub fn slots(bytes: &[u8]) -> Vec<Slot> {
    use object::elf::{R_X86_64_64, R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT};
    use object::{Object, ObjectSymbol, ObjectSymbolTable, RelocationFlags, RelocationTarget};
    let Ok(file) = Elf::parse(bytes) else { return Vec::new() };
    let (Some(relocs), Some(dynsym)) = (file.dynamic_relocations(), file.dynamic_symbol_table()) else { return Vec::new() };
    let mut out = Vec::new();
    for (offset, r) in relocs {
        let RelocationFlags::Elf { r_type } = r.flags() else { continue };
        if !matches!(r_type, R_X86_64_64 | R_X86_64_GLOB_DAT | R_X86_64_JUMP_SLOT) {
            continue;
        }
        let RelocationTarget::Symbol(index) = r.target() else { continue };
        let named = dynsym.symbol_by_index(index).ok().and_then(|s| s.name().ok().map(|n| BOUND_SYMBOLS.contains(&n)));
        if named == Some(true) {
            let addend = if r_type == R_X86_64_64 { r.addend() } else { 0 };
            out.push(Slot { offset, addend, prot: page_protection(&file, offset) });
        }
    }
    out
}

/// Points the `slots` of the image copy loaded at `base` (its `l_addr`) for
/// `device` at that device's `omp_get_device_num`.
///
/// # Safety
/// `base` must be the load base of a loaded copy of the image `slots` came
/// from whose relocations have been applied (`RTLD_NOW`), and no other
/// thread may use the copy yet.
pub unsafe fn bind(base: usize, device: usize, slots: &[Slot]) -> Result<()> {
    let Some(&f) = DEVICE_NUM_FNS.get(device) else {
        return Err(OffloadError::Internal(format!("host device {device} has no omp_get_device_num binding")));
    };
    for s in slots {
        let fail = |what: String| {
            OffloadError::BadImage(format!("failed to bind omp_get_device_num in the image (offset {:#x}): {what}", s.offset))
        };
        let prot = s.prot.ok_or_else(|| fail("no loaded segment holds it".into()))?;
        let addr =
            usize::try_from(s.offset).ok().and_then(|o| base.checked_add(o)).ok_or_else(|| fail("beyond the address space".into()))?;
        if addr % 8 != 0 {
            return Err(fail("misaligned".into()));
        }
        let page = addr & !4095;
        let len = (addr + 8).next_multiple_of(4096) - page;
        let writable = prot & libc::PROT_WRITE != 0;
        if !writable {
            // SAFETY: the page(s) belong to the loaded copy (`page_protection` found a segment holding the word); only the protection changes.
            if unsafe { libc::mprotect(page as *mut libc::c_void, len, prot | libc::PROT_WRITE) } != 0 {
                return Err(fail(format!("mprotect: {}", std::io::Error::last_os_error())));
            }
        }
        let value = (f as usize as u64).wrapping_add_signed(s.addend);
        // SAFETY: an aligned, now writable word of the copy's relocated data that no other thread reads yet (caller's contract).
        unsafe { (addr as *mut u64).write_volatile(value) };
        if !writable {
            // SAFETY: as above; restores what ld.so left.
            if unsafe { libc::mprotect(page as *mut libc::c_void, len, prot) } != 0 {
                return Err(fail(format!("mprotect: {}", std::io::Error::last_os_error())));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_device_answers_its_number() {
        // Until the runtime exposes them, the plugin's own numbers.
        assert_eq!(DEVICE_NUM_FNS.map(|f| f()), [0, 1, 2, 3]);
        // A device the plugin does not have is ignored.
        set_device_id(NUM_DEVICES, 1);
        assert_eq!(DEVICE_NUM_FNS.map(|f| f()), [0, 1, 2, 3]);
    }

    #[test]
    fn non_elf_has_no_slots() {
        assert!(slots(b"not an image").is_empty());
        assert!(slots(&[]).is_empty());
    }
}
