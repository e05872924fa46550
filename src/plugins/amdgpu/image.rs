//! What an AMDGPU code object says about itself, read from its bytes alone
//! (no HSA runtime): the ELF checks of LLVM's `checkMachine`, the processor
//! and target-id features from `e_flags`, compatibility with an agent's ISA,
//! the kernels (`<name>.kd` descriptors) and globals it defines, the OpenMP
//! kernel environments, and the kernel metadata of the `amdhsa` msgpack note
//! (abi-reference §3.4, §5.5, §7.2, §10.4).
//!
//! Everything here is a pure function over untrusted bytes: offsets are
//! bounds-checked and malformed input is an error naming the problem, never
//! a panic.

use super::msgpack::{self, Value};
use crate::base::error::{OffloadError, Result};
use crate::base::image::{elf_ident, machine};
use crate::plugins::gpu::kernel_env::{self, KernelEnvironment};
use std::collections::HashMap;
use std::fmt;

/// `ELFOSABI_AMDGPU_HSA`.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `EI_ABIVERSION` of code object v4, v5 and v6.
pub const ELFABIVERSION_AMDGPU_HSA_V4: u8 = 2;
pub const ELFABIVERSION_AMDGPU_HSA_V5: u8 = 3;
pub const ELFABIVERSION_AMDGPU_HSA_V6: u8 = 4;
/// `EF_AMDGPU_MACH` and the range LLVM 22.1 accepts.
pub const EF_AMDGPU_MACH: u32 = 0xff;
pub const EF_AMDGPU_MACH_AMDGCN_GFX700: u32 = 0x22;
pub const EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC: u32 = 0x5f;
/// Target-id feature fields of code object v4+ `e_flags`.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `NT_AMDGPU_METADATA`, owner `AMDGPU`.
pub const NT_AMDGPU_METADATA: u32 = 32;

/// `EF_AMDGPU_MACH_*` → processor name (llvm/BinaryFormat/ELF.h), the
/// `amdgcn` part of the table.
const MACH_NAMES: &[(u32, &str)] = &[
    (0x20, "gfx600"),
    (0x21, "gfx601"),
    (0x22, "gfx700"),
    (0x23, "gfx701"),
    (0x24, "gfx702"),
    (0x25, "gfx703"),
    (0x26, "gfx704"),
    (0x28, "gfx801"),
    (0x29, "gfx802"),
    (0x2a, "gfx803"),
    (0x2b, "gfx810"),
    (0x2c, "gfx900"),
    (0x2d, "gfx902"),
    (0x2e, "gfx904"),
    (0x2f, "gfx906"),
    (0x30, "gfx908"),
    (0x31, "gfx909"),
    (0x32, "gfx90c"),
    (0x33, "gfx1010"),
    (0x34, "gfx1011"),
    (0x35, "gfx1012"),
    (0x36, "gfx1030"),
    (0x37, "gfx1031"),
    (0x38, "gfx1032"),
    (0x39, "gfx1033"),
    (0x3a, "gfx602"),
    (0x3b, "gfx705"),
    (0x3c, "gfx805"),
    (0x3d, "gfx1035"),
    (0x3e, "gfx1034"),
    (0x3f, "gfx90a"),
    (0x40, "gfx940"),
    (0x41, "gfx1100"),
    (0x42, "gfx1013"),
    (0x43, "gfx1150"),
    (0x44, "gfx1103"),
    (0x45, "gfx1036"),
    (0x46, "gfx1101"),
    (0x47, "gfx1102"),
    (0x48, "gfx1200"),
    (0x49, "gfx1250"),
    (0x4a, "gfx1151"),
    (0x4b, "gfx941"),
    (0x4c, "gfx942"),
    (0x4e, "gfx1201"),
    (0x4f, "gfx950"),
    (0x51, "gfx9-generic"),
    (0x52, "gfx10-1-generic"),
    (0x53, "gfx10-3-generic"),
    (0x54, "gfx11-generic"),
    (0x55, "gfx1152"),
    (0x57, "gfx1154"),
    (0x58, "gfx1153"),
    (0x59, "gfx12-generic"),
    (0x5a, "gfx1251"),
    (0x5b, "gfx12-5-generic"),
    (0x5c, "gfx1172"),
    (0x5d, "gfx1170"),
    (0x5e, "gfx1171"),
    (0x5f, "gfx9-4-generic"),
];

/// The processor name of an `EF_AMDGPU_MACH` value.
pub fn processor_name(mach: u32) -> Option<&'static str> {
    MACH_NAMES.iter().find(|m| m.0 == mach).map(|m| m.1)
}

/// A target-id feature setting (`xnack`, `sramecc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// The processor does not have the feature (code object field 0).
    Unsupported,
    /// Code runs either way (no sign in the target id).
    Any,
    /// `feature-`.
    Off,
    /// `feature+`.
    On,
}

impl Feature {
    fn from_field(bits: u32) -> Self {
        match bits {
            0 => Feature::Unsupported,
            1 => Feature::Any,
            2 => Feature::Off,
            _ => Feature::On,
        }
    }
    fn suffix(self, name: &str) -> String {
        match self {
            Feature::On => format!(":{name}+"),
            Feature::Off => format!(":{name}-"),
            Feature::Any | Feature::Unsupported => String::new(),
        }
    }
}

/// The identification of an AMDGPU code object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmdgpuImage {
    /// `e_flags & EF_AMDGPU_MACH`.
    pub mach: u32,
    /// `gfx90a`, `gfx9-4-generic`, or `unknown` for a reserved number.
    pub processor: &'static str,
    /// Code object version (4, 5 or 6).
    pub code_object_version: u32,
    pub xnack: Feature,
    pub sramecc: Feature,
    /// Generic version (`e_flags` bits 24–31) of generic processors.
    pub generic_version: u32,
}

impl AmdgpuImage {
    /// The target id (`gfx90a`, `gfx90a:sramecc+:xnack-`), features in
    /// LLVM's order.
    pub fn target_id(&self) -> String {
        format!("{}{}{}", self.processor, self.sramecc.suffix("sramecc"), self.xnack.suffix("xnack"))
    }
}

impl fmt::Display for AmdgpuImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} code object v{}", self.target_id(), self.code_object_version)
    }
}

fn bad(what: impl Into<String>) -> OffloadError {
    OffloadError::BadImage(what.into())
}

/// Decodes and checks the ELF header (`checkMachine`'s AMDGPU rules, with
/// LLVM's messages).
pub fn identify(bytes: &[u8]) -> Result<AmdgpuImage> {
    let e = elf_ident(bytes)?;
    if e.machine != machine::AMDGPU {
        return Err(bad(format!("not an AMDGPU code object (e_machine {})", e.machine)));
    }
    if e.os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(bad("invalid AMD OS/ABI, must be AMDGPU_HSA"));
    }
    // Reference (checkMachine): code object v5 or v6; v4 is refused by 22.1.
    let code_object_version = match e.abi_version {
        ELFABIVERSION_AMDGPU_HSA_V5 => 5,
        ELFABIVERSION_AMDGPU_HSA_V6 => 6,
        _ => return Err(bad("invalid AMD ABI version, must be version 5 or above")),
    };
    let mach = e.flags & EF_AMDGPU_MACH;
    if !(EF_AMDGPU_MACH_AMDGCN_GFX700..=EF_AMDGPU_MACH_AMDGCN_GFX9_4_GENERIC).contains(&mach) {
        return Err(bad("unsupported AMDGPU architecture"));
    }
    Ok(AmdgpuImage {
        mach,
        processor: processor_name(mach).unwrap_or("unknown"),
        code_object_version,
        xnack: Feature::from_field((e.flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
        sramecc: Feature::from_field((e.flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
        generic_version: e.flags >> 24,
    })
}

/// A target id an agent reports for one of its ISAs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetId {
    pub processor: String,
    /// `Any` when the id carries no sign for the feature.
    pub xnack: Feature,
    pub sramecc: Feature,
}

impl TargetId {
    /// Parses an ISA name as `hsa_isa_get_info_alt(HSA_ISA_INFO_NAME)` gives
    /// it (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`) or a bare target id.
    /// `None` for ISAs of other triples.
    pub fn parse(isa_name: &str) -> Option<TargetId> {
        let s = isa_name.trim_end_matches('\0');
        let s = match s.strip_prefix("amdgcn-amd-amdhsa") {
            Some(rest) => rest.trim_start_matches('-'),
            None if s.starts_with("gfx") => s,
            None => return None,
        };
        let mut parts = s.split(':');
        let processor = parts.next().filter(|p| !p.is_empty())?.to_string();
        let (mut xnack, mut sramecc) = (Feature::Any, Feature::Any);
        for p in parts {
            let (name, sign) = p.split_at(p.len().saturating_sub(1));
            let f = match sign {
                "+" => Feature::On,
                "-" => Feature::Off,
                _ => continue,
            };
            match name {
                "xnack" => xnack = f,
                "sramecc" => sramecc = f,
                _ => {}
            }
        }
        Some(TargetId { processor, xnack, sramecc })
    }
}

impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.processor, self.sramecc.suffix("sramecc"), self.xnack.suffix("xnack"))
    }
}

/// Whether an image runs on an agent ISA.
///
/// Reference (offloading::amdgpu::isImageCompatibleWithEnv): the processor
/// names must be equal; an image pinned to `xnack-`/`xnack+` needs the same
/// sign in the target id, likewise `sramecc`; `any` and unsupported match
/// anything. A generic image matches only an agent that lists that generic ISA.
pub fn is_compatible(image: &AmdgpuImage, env: &TargetId) -> bool {
    if image.processor != env.processor {
        return false;
    }
    let feature_ok = |img: Feature, env: Feature| match img {
        Feature::On | Feature::Off => img == env,
        Feature::Any | Feature::Unsupported => true,
    };
    feature_ok(image.xnack, env.xnack) && feature_ok(image.sramecc, env.sramecc)
}

/// The message for an image no device can run; `devices` lists each
/// device's ISA target ids.
pub fn incompatibility_message(image: &AmdgpuImage, devices: &[Vec<TargetId>]) -> String {
    let list: Vec<String> = devices
        .iter()
        .enumerate()
        .map(|(i, isas)| {
            let ids: Vec<String> = isas.iter().map(ToString::to_string).collect();
            format!("device {i} is {}", if ids.is_empty() { "an agent without ISAs".to_string() } else { ids.join(" or ") })
        })
        .collect();
    format!(
        "AMDGPU image for {} ({image}) is not compatible with any AMDGPU device: {}",
        image.target_id(),
        if list.is_empty() { "no devices".to_string() } else { list.join(", ") }
    )
}

fn parse_elf(bytes: &[u8]) -> Result<object::read::elf::ElfFile64<'_, object::LittleEndian>> {
    object::read::elf::ElfFile64::<object::LittleEndian>::parse(bytes).map_err(|e| bad(format!("AMDGPU code object ELF: {e}")))
}

/// The kernels and globals a code object defines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageSymbols {
    /// Kernel names (their `<name>.kd` descriptors), in symbol-table order.
    pub kernels: Vec<String>,
    /// Global variables with their size in bytes.
    pub globals: Vec<(String, u64)>,
}

impl ImageSymbols {
    pub fn global_size(&self, name: &str) -> Option<u64> {
        self.globals.iter().find(|g| g.0 == name).map(|g| g.1)
    }
}

/// Suffix of a kernel descriptor symbol.
pub const KERNEL_DESCRIPTOR_SUFFIX: &str = ".kd";

/// Lists the kernels (`.kd` descriptors) and globals of a code object, from
/// its dynamic symbol table (what the HSA loader sees), or the static one if
/// the object has no dynamic symbols.
pub fn symbols(bytes: &[u8]) -> Result<ImageSymbols> {
    use object::{Object, ObjectSymbol, SymbolKind};
    identify(bytes)?;
    let file = parse_elf(bytes)?;
    let mut out = ImageSymbols::default();
    let dynamic: Vec<_> = file.dynamic_symbols().collect();
    let syms = if dynamic.is_empty() { file.symbols().collect() } else { dynamic };
    for s in syms {
        if s.is_undefined() || s.is_local() || s.kind() != SymbolKind::Data {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        if name.is_empty() {
            continue;
        }
        match name.strip_suffix(KERNEL_DESCRIPTOR_SUFFIX) {
            Some(kernel) if !kernel.is_empty() => out.kernels.push(kernel.to_string()),
            _ => out.globals.push((name.to_string(), s.size())),
        }
    }
    Ok(out)
}

/// Reads every `<kernel>_kernel_environment` global, keyed by kernel name.
/// Kernels without one run in bare mode.
pub fn kernel_environments(bytes: &[u8]) -> Result<HashMap<String, KernelEnvironment>> {
    identify(bytes)?;
    kernel_env::scan(&parse_elf(bytes)?, "amdgpu")
}

/// One argument of a kernel, from the metadata's `.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    pub offset: u32,
    pub size: u32,
    /// `.value_kind`: `by_value`, `global_buffer`, `hidden_block_count_x`, ...
    pub value_kind: String,
}

impl KernelArg {
    /// Hidden (implicit) arguments are filled by the runtime.
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
}

/// One kernel's entry of `amdhsa.kernels`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KernelMeta {
    pub name: String,
    /// `.symbol` (`<name>.kd`).
    pub symbol: String,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_align: u32,
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub wavefront_size: u32,
    pub max_flat_workgroup_size: u32,
    pub sgpr_count: u32,
    pub vgpr_count: u32,
    pub agpr_count: u32,
    pub sgpr_spill_count: u32,
    pub vgpr_spill_count: u32,
    pub uses_dynamic_stack: bool,
    pub args: Vec<KernelArg>,
}

impl KernelMeta {
    /// Bytes of the explicit arguments (end of the last non-hidden one).
    pub fn explicit_size(&self) -> u32 {
        self.args.iter().filter(|a| !a.is_hidden()).map(|a| a.offset.saturating_add(a.size)).max().unwrap_or(0)
    }
    /// The hidden arguments, in offset order.
    pub fn hidden_args(&self) -> Vec<&KernelArg> {
        let mut v: Vec<&KernelArg> = self.args.iter().filter(|a| a.is_hidden()).collect();
        v.sort_by_key(|a| a.offset);
        v
    }
}

/// The `amdhsa` metadata of a code object.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodeObjectMetadata {
    /// `amdhsa.version` (`[1, 2]` for code object v5).
    pub version: Vec<u64>,
    /// `amdhsa.target` (`amdgcn-amd-amdhsa--gfx90a`).
    pub target: String,
    pub kernels: Vec<KernelMeta>,
}

impl CodeObjectMetadata {
    pub fn kernel(&self, name: &str) -> Option<&KernelMeta> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Iterates the notes of an ELF note section or segment: (owner, type, desc).
fn notes(data: &[u8]) -> Vec<(&[u8], u32, &[u8])> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let rd = |o: usize| data.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    while let (Some(namesz), Some(descsz), Some(ty)) = (rd(pos), rd(pos + 4), rd(pos + 8)) {
        let name_at = pos + 12;
        let Some(desc_at) = name_at.checked_add((namesz as usize).next_multiple_of(4)) else { break };
        let Some(end) = desc_at.checked_add((descsz as usize).next_multiple_of(4)) else { break };
        let (Some(name), Some(desc)) = (data.get(name_at..name_at + namesz as usize), data.get(desc_at..desc_at + descsz as usize)) else {
            break;
        };
        let owner = name.strip_suffix(&[0]).unwrap_or(name);
        out.push((owner, ty, desc));
        pos = end;
    }
    out
}

fn field_u32(k: &Value, key: &str) -> u32 {
    k.get(key).and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

/// Reads the `NT_AMDGPU_METADATA` note (owner `AMDGPU`) and decodes the
/// kernels' entries. Errors when the note is absent or malformed.
pub fn metadata(bytes: &[u8]) -> Result<CodeObjectMetadata> {
    use object::{Object, ObjectSection, SectionKind};
    identify(bytes)?;
    let file = parse_elf(bytes)?;
    let mut desc = None;
    'sections: for s in file.sections() {
        if s.kind() != SectionKind::Note {
            continue;
        }
        let Ok(data) = s.data() else { continue };
        for (owner, ty, d) in notes(data) {
            if owner == b"AMDGPU" && ty == NT_AMDGPU_METADATA {
                desc = Some(d);
                break 'sections;
            }
        }
    }
    let desc = desc.ok_or_else(|| bad("AMDGPU code object has no NT_AMDGPU_METADATA note"))?;
    let root = msgpack::decode(desc).map_err(|e| bad(format!("AMDGPU metadata: {e}")))?;
    let version =
        root.get("amdhsa.version").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default();
    let target = root.get("amdhsa.target").and_then(Value::as_str).unwrap_or("").to_string();
    let list = root.get("amdhsa.kernels").and_then(Value::as_array).ok_or_else(|| bad("AMDGPU metadata has no amdhsa.kernels list"))?;
    let mut kernels = Vec::with_capacity(list.len());
    for k in list {
        let name = k.get(".name").and_then(Value::as_str).ok_or_else(|| bad("AMDGPU metadata: a kernel has no .name"))?.to_string();
        let mut args = Vec::new();
        for a in k.get(".args").and_then(Value::as_array).unwrap_or(&[]) {
            let value_kind = a.get(".value_kind").and_then(Value::as_str).unwrap_or("").to_string();
            let (Some(offset), Some(size)) = (a.get(".offset").and_then(Value::as_u64), a.get(".size").and_then(Value::as_u64)) else {
                return Err(bad(format!("AMDGPU metadata: an argument of kernel {name} has no .offset or .size")));
            };
            let (Ok(offset), Ok(size)) = (u32::try_from(offset), u32::try_from(size)) else {
                return Err(bad(format!("AMDGPU metadata: an argument of kernel {name} is out of range")));
            };
            args.push(KernelArg { offset, size, value_kind });
        }
        kernels.push(KernelMeta {
            symbol: k.get(".symbol").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| format!("{name}.kd")),
            kernarg_segment_size: field_u32(k, ".kernarg_segment_size"),
            kernarg_segment_align: field_u32(k, ".kernarg_segment_align"),
            group_segment_fixed_size: field_u32(k, ".group_segment_fixed_size"),
            private_segment_fixed_size: field_u32(k, ".private_segment_fixed_size"),
            wavefront_size: field_u32(k, ".wavefront_size"),
            max_flat_workgroup_size: field_u32(k, ".max_flat_workgroup_size"),
            sgpr_count: field_u32(k, ".sgpr_count"),
            vgpr_count: field_u32(k, ".vgpr_count"),
            agpr_count: field_u32(k, ".agpr_count"),
            sgpr_spill_count: field_u32(k, ".sgpr_spill_count"),
            vgpr_spill_count: field_u32(k, ".vgpr_spill_count"),
            uses_dynamic_stack: k.get(".uses_dynamic_stack").and_then(Value::as_bool).unwrap_or(false),
            name,
            args,
        });
    }
    Ok(CodeObjectMetadata { version, target, kernels })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn elf_header(os_abi: u8, abi: u8, flags: u32) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[7] = os_abi;
        h[8] = abi;
        h[16] = 3; // ET_DYN
        h[18..20].copy_from_slice(&224u16.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h
    }

    #[test]
    fn header_checks_and_decoding() {
        // Values clang 22 writes (c-tests/gpu/images/README.md).
        let a = identify(&elf_header(64, 4, 0x53f)).unwrap();
        assert_eq!((a.processor, a.code_object_version, a.xnack, a.sramecc), ("gfx90a", 6, Feature::Any, Feature::Any));
        assert_eq!(a.target_id(), "gfx90a");
        let b = identify(&elf_header(64, 3, 0x54c)).unwrap();
        assert_eq!((b.processor, b.code_object_version), ("gfx942", 5));
        let c = identify(&elf_header(64, 4, 0x23f | 0x800)).unwrap();
        assert_eq!((c.xnack, c.sramecc), (Feature::Off, Feature::Off));
        assert_eq!(c.target_id(), "gfx90a:sramecc-:xnack-");
        assert_eq!(identify(&elf_header(64, 4, 0x33f | 0xc00)).unwrap().target_id(), "gfx90a:sramecc+:xnack+");
        let g = identify(&elf_header(64, 4, 0x0100_055f)).unwrap();
        assert_eq!((g.processor, g.generic_version), ("gfx9-4-generic", 1));
        let msg = |h: Vec<u8>| identify(&h).unwrap_err().to_string();
        assert!(msg(elf_header(0, 4, 0x53f)).contains("invalid AMD OS/ABI"));
        assert!(msg(elf_header(64, 2, 0x53f)).contains("version 5 or above"), "code object v4 is refused by 22.1");
        assert!(msg(elf_header(64, 5, 0x53f)).contains("version 5 or above"));
        assert!(msg(elf_header(64, 4, 0x21)).contains("unsupported AMDGPU architecture"), "gfx601 is below GFX700");
        assert!(msg(elf_header(64, 4, 0x62)).contains("unsupported AMDGPU architecture"));
        let mut x86 = elf_header(0, 0, 0);
        x86[18] = 62;
        x86[19] = 0;
        assert!(identify(&x86).is_err());
    }

    #[test]
    fn target_ids_and_compatibility() {
        let t = TargetId::parse("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-\0").unwrap();
        assert_eq!(t, TargetId { processor: "gfx90a".into(), xnack: Feature::Off, sramecc: Feature::On });
        assert_eq!(t.to_string(), "gfx90a:sramecc+:xnack-");
        assert_eq!(TargetId::parse("gfx942").unwrap().xnack, Feature::Any);
        assert!(TargetId::parse("x86_64-unknown-linux").is_none());
        let any = identify(&elf_header(64, 4, 0x53f)).unwrap();
        let xnack_on = identify(&elf_header(64, 4, 0x73f)).unwrap();
        let sramecc_off = identify(&elf_header(64, 4, 0x93f)).unwrap();
        assert!(is_compatible(&any, &t));
        assert!(!is_compatible(&xnack_on, &t), "xnack+ image on an xnack- agent");
        assert!(is_compatible(&xnack_on, &TargetId::parse("gfx90a:xnack+").unwrap()));
        assert!(!is_compatible(&sramecc_off, &t));
        assert!(!is_compatible(&xnack_on, &TargetId::parse("gfx90a").unwrap()), "a pinned feature needs the sign");
        assert!(!is_compatible(&any, &TargetId::parse("gfx942:sramecc+:xnack-").unwrap()));
        let generic = identify(&elf_header(64, 4, 0x0100_055f)).unwrap();
        assert!(!is_compatible(&generic, &TargetId::parse("gfx942:sramecc+:xnack-").unwrap()));
        assert!(is_compatible(&generic, &TargetId::parse("gfx9-4-generic:sramecc+:xnack-").unwrap()));
        let m = incompatibility_message(&xnack_on, &[vec![t.clone()]]);
        assert!(m.contains("gfx90a:xnack+") && m.contains("device 0 is gfx90a:sramecc+:xnack-"), "{m}");
    }

    #[test]
    fn notes_are_bounds_checked() {
        let mut n = Vec::new();
        n.extend_from_slice(&7u32.to_le_bytes());
        n.extend_from_slice(&3u32.to_le_bytes());
        n.extend_from_slice(&32u32.to_le_bytes());
        n.extend_from_slice(b"AMDGPU\0\0");
        n.extend_from_slice(&[0x80, 0, 0, 0]);
        assert_eq!(notes(&n), vec![(&b"AMDGPU"[..], 32, &[0x80u8, 0, 0][..])]);
        for len in 0..n.len() {
            let _ = notes(&n[..len]);
        }
        let mut huge = n.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(notes(&huge).is_empty());
    }

    #[test]
    fn garbage_never_panics() {
        let base = elf_header(64, 4, 0x53f);
        for n in 0..base.len() {
            let _ = identify(&base[..n]);
            let _ = symbols(&base[..n]);
            let _ = metadata(&base[..n]);
            let _ = kernel_environments(&base[..n]);
        }
        // Every 16th bit under miri (cargo miri test): all of them take minutes there.
        for i in (0..base.len() * 8).step_by(if cfg!(miri) { 16 } else { 1 }) {
            let mut c = base.clone();
            c[i / 8] ^= 1 << (i % 8);
            let _ = symbols(&c);
            let _ = metadata(&c);
            let _ = kernel_environments(&c);
        }
    }
}
