//! What a CUDA device image says about itself, read from its bytes alone
//! (no driver): cubin ELF headers of both generations, PTX text, the
//! architecture, compatibility with a compute capability, the kernels and
//! globals it defines, and the OpenMP kernel environments (abi-reference
//! §3.4, §7.2).
//!
//! Everything here is a pure function over untrusted bytes: offsets are
//! bounds-checked and malformed input is an error naming the problem, never
//! a panic.

use crate::base::error::{OffloadError, Result};
use crate::base::image::{elf_ident, machine};
use crate::plugins::gpu::kernel_env;
pub use crate::plugins::gpu::kernel_env::{ExecMode, KERNEL_ENV_BYTES, KERNEL_ENV_CONFIG_BYTES, KERNEL_ENV_SUFFIX, KernelEnvironment};
use std::collections::HashMap;
use std::fmt;

/// Cubin ELF ABI generations (`EI_ABIVERSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CubinAbi {
    /// `ELFABIVERSION_CUDA_V1` (7), ptxas ≤ 12: SM in `e_flags & 0xff`,
    /// `0x400` = 64-bit addressing.
    V1,
    /// `ELFABIVERSION_CUDA_V2` (8), ptxas ≥ 13: SM in `(e_flags >> 8) & 0xff`.
    V2,
}

pub const ELFABIVERSION_CUDA_V1: u8 = 7;
pub const ELFABIVERSION_CUDA_V2: u8 = 8;
pub const EF_CUDA_64BIT_ADDRESS: u32 = 0x400;

/// Variant suffix of an architecture name (`sm_90`, `sm_90a`, `sm_100f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchVariant {
    /// `sm_NN`: runs on the same major with an equal or newer minor (cubin),
    /// or on any newer device (PTX, by JIT).
    Plain,
    /// `sm_NNa`: architecture-specific features; exactly that device.
    Specific,
    /// `sm_NNf`: family-specific; same major, equal or newer minor.
    Family,
}

/// An image's target architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaArch {
    /// `major * 10 + minor` (90 for sm_90, 100 for sm_100).
    pub sm: u32,
    pub variant: ArchVariant,
}

impl fmt::Display for CudaArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.variant {
            ArchVariant::Plain => "",
            ArchVariant::Specific => "a",
            ArchVariant::Family => "f",
        };
        write!(f, "sm_{}{suffix}", self.sm)
    }
}

/// A device's compute capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    /// The `sm_NN` number of the device.
    pub fn sm(&self) -> u32 {
        self.major * 10 + self.minor
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{} (compute capability {}.{})", self.sm(), self.major, self.minor)
    }
}

/// The two kinds of image the CUDA plugin accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CudaImageKind {
    /// A device ELF (`e_machine == EM_CUDA`).
    Cubin(CubinAbi),
    /// PTX assembly text, compiled by the driver's JIT at load.
    Ptx,
}

/// The identification of a CUDA image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaImage {
    pub kind: CudaImageKind,
    pub arch: CudaArch,
}

impl fmt::Display for CudaImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            CudaImageKind::Cubin(CubinAbi::V1) => write!(f, "{} cubin (ELF ABI v1)", self.arch),
            CudaImageKind::Cubin(CubinAbi::V2) => write!(f, "{} cubin (ELF ABI v2)", self.arch),
            CudaImageKind::Ptx => write!(f, "{} PTX", self.arch),
        }
    }
}

fn bad(what: impl Into<String>) -> OffloadError {
    OffloadError::BadImage(what.into())
}

/// Decodes the SM of a cubin from its ELF header (`checkMachine`'s CUDA rules).
///
/// Reference (utils::elf::checkMachine): V1 needs the 64-bit addressing flag
/// and SM ≥ 35. LLVM 22.1.8 was observed to accept ptxas 13's ABI-v2 cubins
/// for sm_90 (c-tests/gpu/images/README.md), so V2 is held to the same SM ≥ 35.
pub fn decode_cubin(abi_version: u8, e_flags: u32) -> Result<(CubinAbi, u32)> {
    match abi_version {
        ELFABIVERSION_CUDA_V1 => {
            if e_flags & EF_CUDA_64BIT_ADDRESS == 0 {
                return Err(bad("invalid CUDA addressing mode"));
            }
            let sm = e_flags & 0xff;
            if sm < 35 {
                return Err(bad(format!("unsupported NVPTX architecture sm_{sm}")));
            }
            Ok((CubinAbi::V1, sm))
        }
        ELFABIVERSION_CUDA_V2 => {
            let sm = (e_flags >> 8) & 0xff;
            if sm < 35 {
                return Err(bad(format!("unsupported NVPTX architecture sm_{sm}")));
            }
            Ok((CubinAbi::V2, sm))
        }
        v => Err(bad(format!("invalid CUDA ABI version {v}"))),
    }
}

/// How far into a PTX file the header directives are looked for.
const PTX_HEADER_WINDOW: usize = 64 * 1024;

/// Whether the bytes look like PTX text: printable, with `.version`,
/// `.target sm_NN` and `.address_size 64` among the first directives.
fn ptx_arch(bytes: &[u8]) -> Result<CudaArch> {
    // A trailing NUL (some producers keep it) is fine; any other is not text.
    let text_len = match bytes.iter().position(|&c| c == 0) {
        Some(p) if p + 1 != bytes.len() => return Err(bad("not PTX: binary data")),
        Some(p) => p,
        None => bytes.len(),
    };
    let head = &bytes[..text_len.min(PTX_HEADER_WINDOW)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // The window may end inside a multi-byte character.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
        Err(_) => return Err(bad("not PTX: not UTF-8 text")),
    };
    let mut version = false;
    let mut address_64 = false;
    let mut target = None;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        let mut words = line.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty());
        match words.next() {
            Some(".version") => version = true,
            Some(".address_size") => address_64 = words.next() == Some("64"),
            Some(".target") => {
                target = words.find_map(|w| w.strip_prefix("sm_")).map(str::to_string);
            }
            Some(w) if w.starts_with('.') && version && target.is_some() => break,
            _ => {}
        }
    }
    if !version {
        return Err(bad("not PTX: no .version directive"));
    }
    let t = target.ok_or_else(|| bad("PTX has no .target sm_NN directive"))?;
    if !address_64 {
        return Err(bad("PTX is not 64-bit (.address_size 64 missing)"));
    }
    parse_arch_suffix(&t).ok_or_else(|| bad(format!("PTX targets unknown architecture sm_{t}")))
}

/// `90` → sm_90, `90a` → arch-specific, `100f` → family.
fn parse_arch_suffix(s: &str) -> Option<CudaArch> {
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let sm: u32 = digits.parse().ok()?;
    let variant = match &s[digits.len()..] {
        "" => ArchVariant::Plain,
        "a" => ArchVariant::Specific,
        "f" => ArchVariant::Family,
        _ => return None,
    };
    Some(CudaArch { sm, variant })
}

/// Identifies a CUDA image, or says why the bytes are not one.
pub fn identify(bytes: &[u8]) -> Result<CudaImage> {
    if bytes.starts_with(b"\x7fELF") {
        let id = elf_ident(bytes)?;
        if id.machine != machine::CUDA {
            return Err(bad(format!("ELF machine {} is not EM_CUDA (190)", id.machine)));
        }
        let (abi, sm) = decode_cubin(id.abi_version, id.flags)?;
        return Ok(CudaImage { kind: CudaImageKind::Cubin(abi), arch: CudaArch { sm, variant: ArchVariant::Plain } });
    }
    let arch = ptx_arch(bytes)?;
    Ok(CudaImage { kind: CudaImageKind::Ptx, arch })
}

/// Whether a device of compute capability `cc` can run the image.
///
/// Reference (CUDAPluginTy::isELFCompatible): a cubin runs iff
/// `major == SM / 10 && minor >= SM % 10`. PTX is compiled for the device by
/// the driver, so any newer device runs plain PTX; `a` PTX needs exactly
/// that device, `f` PTX the same major.
pub fn is_compatible(image: &CudaImage, cc: ComputeCapability) -> bool {
    let (major, minor) = (image.arch.sm / 10, image.arch.sm % 10);
    match (image.kind, image.arch.variant) {
        (CudaImageKind::Cubin(_), ArchVariant::Specific) | (CudaImageKind::Ptx, ArchVariant::Specific) => {
            cc.major == major && cc.minor == minor
        }
        (CudaImageKind::Cubin(_), _) | (CudaImageKind::Ptx, ArchVariant::Family) => cc.major == major && cc.minor >= minor,
        (CudaImageKind::Ptx, ArchVariant::Plain) => cc.sm() >= image.arch.sm,
    }
}

/// The message for an image no device can run.
pub fn incompatibility_message(image: &CudaImage, devices: &[ComputeCapability]) -> String {
    let list: Vec<String> = devices.iter().enumerate().map(|(i, cc)| format!("device {i} is {cc}")).collect();
    format!(
        "CUDA image for {} ({image}) is not compatible with any CUDA device: {}",
        image.arch,
        if list.is_empty() { "no devices".to_string() } else { list.join(", ") }
    )
}

/// The kernels and globals an image defines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageSymbols {
    /// Kernel entry points, in symbol-table (or text) order.
    pub kernels: Vec<String>,
    /// Global variables with their size in bytes (0 when unknown).
    pub globals: Vec<(String, u64)>,
}

impl ImageSymbols {
    pub fn global_size(&self, name: &str) -> Option<u64> {
        self.globals.iter().find(|g| g.0 == name).map(|g| g.1)
    }
}

/// `st_other` bit that marks a cubin function as a kernel entry (`STO_CUDA_ENTRY`).
const STO_CUDA_ENTRY: u8 = 0x10;

fn parse_elf(bytes: &[u8]) -> Result<object::read::elf::ElfFile64<'_, object::LittleEndian>> {
    object::read::elf::ElfFile64::<object::LittleEndian>::parse(bytes).map_err(|e| bad(format!("cubin ELF: {e}")))
}

/// Lists the kernels and globals of a cubin or PTX image.
pub fn symbols(bytes: &[u8]) -> Result<ImageSymbols> {
    let image = identify(bytes)?;
    match image.kind {
        CudaImageKind::Cubin(_) => cubin_symbols(bytes),
        CudaImageKind::Ptx => Ok(ptx_symbols(bytes)),
    }
}

fn cubin_symbols(bytes: &[u8]) -> Result<ImageSymbols> {
    use object::{Object, ObjectSymbol, SymbolFlags, SymbolKind};
    let file = parse_elf(bytes)?;
    let mut out = ImageSymbols::default();
    for s in file.symbols() {
        if s.is_undefined() || s.is_local() {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        if name.is_empty() {
            continue;
        }
        match s.kind() {
            SymbolKind::Text => {
                let entry = matches!(s.flags(), SymbolFlags::Elf { st_other, .. } if st_other.0 & STO_CUDA_ENTRY != 0);
                if entry {
                    out.kernels.push(name.to_string());
                }
            }
            SymbolKind::Data => out.globals.push((name.to_string(), s.size())),
            _ => {}
        }
    }
    Ok(out)
}

/// Size in bytes of a PTX scalar type (`.u32` → 4), if it is one (widths
/// 8 to 128 bits; anything else, e.g. `.b3333`, is not a type).
fn ptx_type_size(t: &str) -> Option<u64> {
    let t = t.strip_prefix('.')?;
    let bits: u64 = t.get(1..)?.parse().ok()?;
    (matches!(t.as_bytes()[0], b'b' | b'u' | b's' | b'f') && matches!(bits, 8 | 16 | 32 | 64 | 128)).then_some(bits / 8)
}

fn ptx_symbols(bytes: &[u8]) -> ImageSymbols {
    let text = String::from_utf8_lossy(bytes);
    let mut out = ImageSymbols::default();
    let mut depth = 0i32;
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if depth == 0 && !line.is_empty() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(i) = words.iter().position(|w| *w == ".entry") {
                if let Some(name) = words.get(i + 1) {
                    let name = name.split('(').next().unwrap_or("");
                    if !name.is_empty() && words[..i].iter().all(|w| *w != ".extern") {
                        out.kernels.push(name.to_string());
                    }
                }
            } else if let Some(i) = words.iter().position(|w| *w == ".global" || *w == ".const")
                && words[..i].iter().all(|w| *w != ".extern")
            {
                // `.visible .global .align 4 .b8 g_table[16] = {...};` (or `.const`)
                let mut rest = words[i + 1..].iter().copied();
                let mut elem = None;
                let mut name = None;
                while let Some(w) = rest.next() {
                    if w == ".align" {
                        rest.next();
                    } else if let Some(sz) = ptx_type_size(w) {
                        elem = Some(sz);
                    } else if w.starts_with('.') {
                        continue;
                    } else {
                        name = Some(w.trim_end_matches(';'));
                        break;
                    }
                }
                if let Some(n) = name {
                    let (ident, count) = match n.split_once('[') {
                        Some((id, dim)) => (id, dim.trim_end_matches(']').parse::<u64>().ok()),
                        None => (n, Some(1)),
                    };
                    // 0: unknown (as for a size the array does not give),
                    // also when the product does not fit (cargo fuzz found
                    // `[16]` of a 1.7e18-byte type overflowing here).
                    let size = match (elem, count) {
                        (Some(e), Some(c)) => e.checked_mul(c).unwrap_or(0),
                        _ => 0,
                    };
                    out.globals.push((ident.to_string(), size));
                }
            }
        }
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        depth = depth.max(0);
    }
    out
}

/// Reads every `<kernel>_kernel_environment` global of a cubin, keyed by
/// kernel name. Kernels without one run in bare mode. PTX images give an
/// empty map here: their environments are read from the device after JIT.
pub fn kernel_environments(bytes: &[u8]) -> Result<HashMap<String, KernelEnvironment>> {
    if !matches!(identify(bytes)?.kind, CudaImageKind::Cubin(_)) {
        return Ok(HashMap::new());
    }
    kernel_env::scan(&parse_elf(bytes)?, "cuda")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elf_header(abi: u8, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[7] = 0x33;
        h[8] = abi;
        h[16] = 2; // ET_EXEC
        h[18..20].copy_from_slice(&190u16.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h
    }

    #[test]
    fn both_header_generations() {
        // Values ptxas 12.9 and 13.0 write for sm_90 (c-tests/gpu/images/README.md).
        let v1 = identify(&elf_header(7, 0x5a055a)).unwrap();
        assert_eq!(v1.kind, CudaImageKind::Cubin(CubinAbi::V1));
        assert_eq!(v1.arch.sm, 90);
        let v2 = identify(&elf_header(8, 0x6005a04)).unwrap();
        assert_eq!(v2.kind, CudaImageKind::Cubin(CubinAbi::V2));
        assert_eq!(v2.arch.sm, 90);
        assert!(identify(&elf_header(7, 0x5a)).unwrap_err().to_string().contains("addressing mode"));
        assert!(identify(&elf_header(7, 0x41e)).unwrap_err().to_string().contains("sm_30"));
        assert!(identify(&elf_header(9, 0x5a055a)).unwrap_err().to_string().contains("ABI version 9"));
        let mut x86 = elf_header(0, 0);
        x86[18] = 62;
        x86[19] = 0;
        assert!(identify(&x86).is_err());
    }

    #[test]
    fn compatibility_rules() {
        let cubin = |sm| CudaImage { kind: CudaImageKind::Cubin(CubinAbi::V2), arch: CudaArch { sm, variant: ArchVariant::Plain } };
        let ptx = |sm, variant| CudaImage { kind: CudaImageKind::Ptx, arch: CudaArch { sm, variant } };
        let cc = |major, minor| ComputeCapability { major, minor };
        assert!(is_compatible(&cubin(90), cc(9, 0)));
        assert!(is_compatible(&cubin(80), cc(8, 6)));
        assert!(!is_compatible(&cubin(86), cc(8, 0)));
        assert!(!is_compatible(&cubin(80), cc(9, 0)));
        assert!(!is_compatible(&cubin(90), cc(10, 0)));
        assert!(is_compatible(&ptx(80, ArchVariant::Plain), cc(9, 0)));
        assert!(!is_compatible(&ptx(90, ArchVariant::Plain), cc(8, 9)));
        assert!(is_compatible(&ptx(90, ArchVariant::Specific), cc(9, 0)));
        assert!(!is_compatible(&ptx(90, ArchVariant::Specific), cc(10, 0)));
        assert!(is_compatible(&ptx(100, ArchVariant::Family), cc(10, 3)));
        assert!(!is_compatible(&ptx(100, ArchVariant::Family), cc(12, 0)));
        let m = incompatibility_message(&cubin(90), &[cc(8, 0)]);
        assert!(m.contains("sm_90") && m.contains("sm_80") && m.contains("8.0"), "{m}");
    }

    #[test]
    fn ptx_detection() {
        let ptx = b"//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n.param .u64 p\n)\n{\n ret;\n}\n.visible .global .align 4 .b8 tab[16] = {1, 0};\n.global .align 8 .u64 one;\n";
        let img = identify(ptx).unwrap();
        assert_eq!(img.kind, CudaImageKind::Ptx);
        assert_eq!(img.arch, CudaArch { sm: 90, variant: ArchVariant::Specific });
        let s = symbols(ptx).unwrap();
        assert_eq!(s.kernels, vec!["k"]);
        assert_eq!(s.globals, vec![("tab".to_string(), 16), ("one".to_string(), 8)]);
        // Sizes that do not fit, and widths that are no type, are unknown (0), not a panic.
        let odd = b".version 8.0\n.target sm_90\n.address_size 64\n.global .align 8 .u64 big[4611686018427387905];\n.global .align 4 .b13661046060852008283 wide[16] = {1};\n.global .b24 odd;\n";
        let s = symbols(odd).unwrap();
        assert_eq!(s.globals, vec![("big".to_string(), 0), ("wide".to_string(), 0), ("odd".to_string(), 0)]);
        assert!(identify(b".version 8.0\n.target sm_90\n.address_size 32\n").is_err());
        assert!(identify(b"hello world").is_err());
        assert!(identify(b".version 8.0\n.target sm_90\0garbage\0").is_err());
        assert!(identify(b"").is_err());
    }

    #[test]
    fn kernel_environment_layout() {
        // `target teams distribute parallel for reduction(+:s)` on NVPTX (abi-reference §7.2).
        let mut b = vec![0u8; 48];
        b[2] = 2;
        for (i, v) in [1i32, 128, 0, 0, 8, 1024].iter().enumerate() {
            b[4 + 4 * i..8 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        let env = KernelEnvironment::parse(&b).unwrap();
        assert_eq!(env.exec_mode, ExecMode::SPMD);
        assert_eq!((env.min_threads, env.max_threads, env.reduction_data_size, env.reduction_buffer_length), (1, 128, 8, 1024));
        assert!(env.needs_launch_environment());
        assert_eq!(env.reduction_buffer_bytes(), 8192);
        assert!(KernelEnvironment::parse(&b[..27]).is_err());
        assert_eq!(ExecMode(3).name(), "Generic-SPMD");
    }

    #[test]
    fn garbage_never_panics() {
        let base = elf_header(8, 0x6005a04);
        for n in 0..base.len() {
            let _ = identify(&base[..n]);
            let _ = symbols(&base[..n]);
            let _ = kernel_environments(&base[..n]);
        }
        // Every 16th bit under miri (cargo miri test): all of them take minutes there.
        for i in (0..base.len() * 8).step_by(if cfg!(miri) { 16 } else { 1 }) {
            let mut c = base.clone();
            c[i / 8] ^= 1 << (i % 8);
            let _ = symbols(&c);
            let _ = kernel_environments(&c);
        }
    }
}
