//! Parsers for device-image bytes: the OffloadBinary container
//! (abi-reference §3.1) and the ELF identification the plugins use to decide
//! compatibility (§3.4). Pure functions over untrusted bytes: every offset is
//! bounds-checked and a malformed input gives an error naming the problem.

use crate::base::error::{OffloadError, Result};

/// Magic bytes of an OffloadBinary: `10 FF 10 AD`.
pub const OFFLOAD_BINARY_MAGIC: [u8; 4] = [0x10, 0xff, 0x10, 0xad];
const HEADER_SIZE: usize = 32;
const ENTRY_SIZE: usize = 40;

/// `ImageKind` values of the OffloadBinary entry.
pub mod image_kind {
    pub const OBJECT: u16 = 1;
    pub const BITCODE: u16 = 2;
    pub const CUBIN: u16 = 3;
    pub const FATBINARY: u16 = 4;
    pub const PTX: u16 = 5;
    pub const SPIRV: u16 = 6;
}

/// The parsed container: where the inner image lies and what it claims to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadBinary {
    pub image_kind: u16,
    pub offload_kind: u16,
    pub flags: u32,
    /// Byte range of the inner image within the container.
    pub image: std::ops::Range<usize>,
    pub triple: String,
    pub arch: String,
}

fn read_u16(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off.checked_add(2)?)?.try_into().ok()?))
}
fn read_u32(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}
fn read_u64(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off.checked_add(8)?)?.try_into().ok()?))
}

fn bad(what: impl Into<String>) -> OffloadError {
    OffloadError::BadImage(what.into())
}

/// Reads a NUL-terminated string starting at `off`.
fn read_cstr(b: &[u8], off: u64, what: &str) -> Result<String> {
    let off = usize::try_from(off).map_err(|_| bad(format!("OffloadBinary {what} offset {off} out of range")))?;
    let tail = b.get(off..).ok_or_else(|| bad(format!("OffloadBinary {what} offset {off} past the end ({} bytes)", b.len())))?;
    let len =
        tail.iter().position(|&c| c == 0).ok_or_else(|| bad(format!("OffloadBinary {what} at offset {off} is not NUL-terminated")))?;
    Ok(String::from_utf8_lossy(&tail[..len]).into_owned())
}

/// Parses `bytes` as an OffloadBinary.
///
/// Returns `Ok(None)` when the bytes do not start with the container magic
/// (a raw image, used as-is), `Ok(Some(..))` for a valid container and an
/// error for a container whose header, entry or string table is inconsistent.
pub fn parse_offload_binary(bytes: &[u8]) -> Result<Option<OffloadBinary>> {
    if bytes.len() < 4 || bytes[..4] != OFFLOAD_BINARY_MAGIC {
        return Ok(None);
    }
    if bytes.len() < HEADER_SIZE + ENTRY_SIZE {
        return Err(bad(format!("OffloadBinary truncated: {} bytes, header and entry need {}", bytes.len(), HEADER_SIZE + ENTRY_SIZE)));
    }
    let version = read_u32(bytes, 4).unwrap_or(0);
    if version == 0 {
        return Err(bad("OffloadBinary version 0 is invalid"));
    }
    let total = read_u64(bytes, 8).unwrap_or(0);
    if total > bytes.len() as u64 || total < (HEADER_SIZE + ENTRY_SIZE) as u64 {
        return Err(bad(format!("OffloadBinary claims {total} bytes but the image range holds {}", bytes.len())));
    }
    let bytes = &bytes[..total as usize];
    let entry_off = read_u64(bytes, 16).unwrap_or(u64::MAX);
    let entry_size = read_u64(bytes, 24).unwrap_or(0);
    if entry_size < ENTRY_SIZE as u64 || entry_off.checked_add(entry_size).is_none_or(|e| e > total) {
        return Err(bad(format!("OffloadBinary entry record [{entry_off}, +{entry_size}) is outside the {total}-byte binary")));
    }
    let e = entry_off as usize;
    let image_kind = read_u16(bytes, e).unwrap_or(0);
    let offload_kind = read_u16(bytes, e + 2).unwrap_or(0);
    let flags = read_u32(bytes, e + 4).unwrap_or(0);
    let str_off = read_u64(bytes, e + 8).unwrap_or(0);
    let num_strings = read_u64(bytes, e + 16).unwrap_or(0);
    let img_off = read_u64(bytes, e + 24).unwrap_or(0);
    let img_size = read_u64(bytes, e + 32).unwrap_or(0);
    if img_off.checked_add(img_size).is_none_or(|end| end > total) {
        return Err(bad(format!("OffloadBinary image [{img_off}, +{img_size}) is outside the {total}-byte binary")));
    }
    let table_bytes = num_strings.checked_mul(16);
    if table_bytes.and_then(|t| t.checked_add(str_off)).is_none_or(|end| end > total) {
        return Err(bad(format!(
            "OffloadBinary string table ({num_strings} entries at offset {str_off}) is outside the {total}-byte binary"
        )));
    }
    let (mut triple, mut arch) = (String::new(), String::new());
    for i in 0..num_strings as usize {
        let rec = str_off as usize + 16 * i;
        let key = read_cstr(bytes, read_u64(bytes, rec).unwrap_or(u64::MAX), "string key")?;
        let value = read_cstr(bytes, read_u64(bytes, rec + 8).unwrap_or(u64::MAX), "string value")?;
        match key.as_str() {
            "triple" => triple = value,
            "arch" => arch = value,
            _ => {}
        }
    }
    Ok(Some(OffloadBinary { image_kind, offload_kind, flags, image: img_off as usize..(img_off + img_size) as usize, triple, arch }))
}

/// ELF machine numbers the plugins recognise.
pub mod machine {
    pub const X86_64: u16 = 62;
    pub const CUDA: u16 = 190;
    pub const AMDGPU: u16 = 224;
}

/// What the ELF header of a device image says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfIdent {
    pub machine: u16,
    pub elf_type: u16,
    pub os_abi: u8,
    pub abi_version: u8,
    pub flags: u32,
}

/// Reads and checks the ELF header the way `checkMachine` does (64-bit,
/// little-endian, executable or shared object). Messages match LLVM's.
pub fn elf_ident(bytes: &[u8]) -> Result<ElfIdent> {
    if bytes.len() < 4 || &bytes[..4] != b"\x7fELF" {
        return Err(bad("not an ELF image (bad magic)"));
    }
    if bytes.len() < 64 {
        return Err(bad(format!("ELF image truncated: {} bytes, the header needs 64", bytes.len())));
    }
    if bytes[4] != 2 {
        return Err(bad("Only 64-bit ELF files are supported"));
    }
    if bytes[5] != 1 {
        return Err(bad("only little-endian ELF files are supported"));
    }
    let elf_type = read_u16(bytes, 16).unwrap_or(0);
    // ET_EXEC = 2, ET_DYN = 3.
    if elf_type != 2 && elf_type != 3 {
        return Err(bad("only executable ELF files are supported"));
    }
    Ok(ElfIdent {
        machine: read_u16(bytes, 18).unwrap_or(0),
        elf_type,
        os_abi: bytes[7],
        abi_version: bytes[8],
        flags: read_u32(bytes, 48).unwrap_or(0),
    })
}

/// The file-layout check every plugin runs before a driver or loader gets
/// an image (pure; lives with the other ELF checks in `base::elf`).
pub use crate::base::elf::check_elf_layout;

/// Finds the size of a defined symbol in the image's dynamic symbol table
/// (used to check a global's size against the host's view).
pub fn elf_symbol_size(bytes: &[u8], name: &str) -> Option<u64> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(bytes).ok()?;
    file.dynamic_symbols().chain(file.symbols()).find(|s| s.name() == Ok(name) && !s.is_undefined()).map(|s| s.size())
}

/// What a symbol of a program is (the device layer's look-ups by kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Kernel,
    Global,
}

/// ELF symbol types that the kinds accept.
fn kind_matches(kind: SymbolKind, sym: object::SymbolKind) -> bool {
    match kind {
        SymbolKind::Kernel => sym == object::SymbolKind::Text,
        SymbolKind::Global => sym == object::SymbolKind::Data,
    }
}

/// How the image defines `name`: `Ok(Some(size))` when it defines it with
/// the asked kind, `Ok(None)` when the image is no ELF file (PTX: the driver
/// decides), an error naming what is wrong otherwise.
pub fn own_symbol(bytes: &[u8], name: &str, kind: SymbolKind) -> Result<Option<u64>> {
    use object::{Object, ObjectSymbol};
    let Ok(file) = object::File::parse(bytes) else { return Ok(None) };
    let mut found_other = None;
    for s in file.dynamic_symbols().chain(file.symbols()) {
        if s.name() != Ok(name) || s.is_undefined() {
            continue;
        }
        if kind_matches(kind, s.kind()) {
            return Ok(Some(s.size()));
        }
        found_other = Some(s.kind());
    }
    let what = match kind {
        SymbolKind::Kernel => "kernel",
        SymbolKind::Global => "global variable",
    };
    Err(match found_other {
        Some(k) => OffloadError::InvalidArgument(format!("'{name}' is not a {what} of the program (it is {k:?})")),
        None => OffloadError::NotInImage(format!("the program defines no {what} '{name}'")),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a container around `image` the way clang-offload-packager does.
    pub fn wrap(image: &[u8], triple: &str, arch: &str) -> Vec<u8> {
        let strings_at = HEADER_SIZE + ENTRY_SIZE;
        let data_at = strings_at + 2 * 16;
        let mut data = Vec::new();
        let off = |s: &str, data: &mut Vec<u8>| {
            let o = data_at + data.len();
            data.extend_from_slice(s.as_bytes());
            data.push(0);
            o as u64
        };
        let (k1, v1, k2, v2) = (off("triple", &mut data), off(triple, &mut data), off("arch", &mut data), off(arch, &mut data));
        let img_at = (data_at + data.len()).next_multiple_of(8);
        let total = img_at + image.len();
        let mut b = Vec::new();
        b.extend_from_slice(&OFFLOAD_BINARY_MAGIC);
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(total as u64).to_le_bytes());
        b.extend_from_slice(&(HEADER_SIZE as u64).to_le_bytes());
        b.extend_from_slice(&(ENTRY_SIZE as u64).to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&(strings_at as u64).to_le_bytes());
        b.extend_from_slice(&2u64.to_le_bytes());
        b.extend_from_slice(&(img_at as u64).to_le_bytes());
        b.extend_from_slice(&(image.len() as u64).to_le_bytes());
        for v in [k1, v1, k2, v2] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&data);
        b.resize(img_at, 0);
        b.extend_from_slice(image);
        b
    }

    #[test]
    fn raw_image_is_not_a_container() {
        assert_eq!(parse_offload_binary(b"\x7fELF....").unwrap(), None);
        assert_eq!(parse_offload_binary(b"").unwrap(), None);
    }

    #[test]
    fn container_roundtrip() {
        let b = wrap(b"\x7fELFpayload", "x86_64-unknown-linux-gnu", "");
        let ob = parse_offload_binary(&b).unwrap().unwrap();
        assert_eq!(&b[ob.image.clone()], b"\x7fELFpayload");
        assert_eq!(ob.triple, "x86_64-unknown-linux-gnu");
        assert_eq!(ob.arch, "");
    }

    #[test]
    fn every_truncation_and_bitflip_is_handled() {
        let b = wrap(b"\x7fELFpayload-bytes", "nvptx64-nvidia-cuda", "sm_90");
        for n in 0..b.len() {
            let r = parse_offload_binary(&b[..n]);
            if n >= 4 {
                assert!(r.is_err(), "truncation to {n} bytes accepted");
            }
        }
        // Every 16th bit under miri (cargo miri test): all of them take minutes there.
        for i in (0..b.len() * 8).step_by(if cfg!(miri) { 16 } else { 1 }) {
            let mut c = b.clone();
            c[i / 8] ^= 1 << (i % 8);
            if let Ok(Some(ob)) = parse_offload_binary(&c) {
                assert!(ob.image.end <= c.len());
            }
        }
    }

    #[test]
    fn elf_checks() {
        assert!(elf_ident(b"nope").is_err());
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 1;
        assert_eq!(elf_ident(&h).unwrap_err().to_string(), "malformed offload image: Only 64-bit ELF files are supported");
        h[4] = 2;
        h[5] = 1;
        h[16] = 1; // ET_REL
        assert!(elf_ident(&h).unwrap_err().to_string().contains("only executable"));
        h[16] = 3;
        h[18] = 62;
        assert_eq!(elf_ident(&h).unwrap().machine, machine::X86_64);
    }
}
