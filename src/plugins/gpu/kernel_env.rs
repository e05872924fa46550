//! The kernel environment of OpenMP device images (`KernelEnvironmentTy`,
//! abi-reference §5.2): the per-kernel `<kernel>_kernel_environment` global
//! both GPU plugins read to size and configure launches.

use crate::base::error::{OffloadError, Result};
use std::collections::HashMap;

fn bad(what: String) -> OffloadError {
    OffloadError::BadImage(what)
}

/// `OMPTgtExecModeFlags` (abi-reference §7.3). A newtype: the byte comes from
/// the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecMode(pub u8);

impl ExecMode {
    pub const BARE: ExecMode = ExecMode(0);
    pub const GENERIC: ExecMode = ExecMode(1);
    pub const SPMD: ExecMode = ExecMode(2);
    pub const GENERIC_SPMD: ExecMode = ExecMode(3);
    pub const SPMD_NO_LOOP: ExecMode = ExecMode(6);

    /// The name LLVM prints in its launch line.
    pub fn name(self) -> &'static str {
        match self {
            Self::BARE => "BARE",
            Self::GENERIC => "Generic",
            Self::SPMD => "SPMD",
            Self::GENERIC_SPMD => "Generic-SPMD",
            Self::SPMD_NO_LOOP => "SPMD-No-Loop",
            _ => "Unknown",
        }
    }
}

/// The configuration part of `KernelEnvironmentTy` (the first 28 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelEnvironment {
    pub use_generic_state_machine: u8,
    pub may_use_nested_parallelism: u8,
    pub exec_mode: ExecMode,
    pub min_threads: i32,
    pub max_threads: i32,
    pub min_teams: i32,
    pub max_teams: i32,
    pub reduction_data_size: i32,
    pub reduction_buffer_length: i32,
}

/// Bytes of `ConfigurationEnvironmentTy` at the start of a kernel environment.
pub const KERNEL_ENV_CONFIG_BYTES: usize = 28;
/// Size of the whole `KernelEnvironmentTy` (with the two pointers).
pub const KERNEL_ENV_BYTES: usize = 48;
/// Suffix of the per-kernel environment global.
pub const KERNEL_ENV_SUFFIX: &str = "_kernel_environment";

impl KernelEnvironment {
    /// Parses the first 28 bytes of a `KernelEnvironmentTy`.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < KERNEL_ENV_CONFIG_BYTES {
            return Err(bad(format!("kernel environment has {} bytes, needs {KERNEL_ENV_CONFIG_BYTES}", b.len())));
        }
        let i32_at = |o: usize| i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        Ok(KernelEnvironment {
            use_generic_state_machine: b[0],
            may_use_nested_parallelism: b[1],
            exec_mode: ExecMode(b[2]),
            min_threads: i32_at(4),
            max_threads: i32_at(8),
            min_teams: i32_at(12),
            max_teams: i32_at(16),
            reduction_data_size: i32_at(20),
            reduction_buffer_length: i32_at(24),
        })
    }

    /// Whether launches need a `KernelLaunchEnvironmentTy` with a reduction
    /// buffer (abi-reference §5.2).
    pub fn needs_launch_environment(&self) -> bool {
        self.reduction_data_size != 0 && self.reduction_buffer_length != 0
    }

    /// Bytes of the team-reduction buffer a launch allocates.
    pub fn reduction_buffer_bytes(&self) -> u64 {
        (self.reduction_data_size.max(0) as u64) * (self.reduction_buffer_length.max(0) as u64)
    }
}

/// Reads every `<kernel>_kernel_environment` global of an ELF image, keyed
/// by kernel name (the first definition of each wins). Kernels without one
/// run in bare mode. `plugin` names the plugin in debug lines.
pub fn scan<'a>(file: &impl object::Object<'a>, plugin: &str) -> Result<HashMap<String, KernelEnvironment>> {
    use object::{ObjectSection, ObjectSymbol, SymbolSection};
    let mut out = HashMap::new();
    for s in file.dynamic_symbols().chain(file.symbols()) {
        let Ok(name) = s.name() else { continue };
        let Some(kernel) = name.strip_suffix(KERNEL_ENV_SUFFIX) else { continue };
        if kernel.is_empty() || s.is_undefined() || out.contains_key(kernel) {
            continue;
        }
        let SymbolSection::Section(index) = s.section() else { continue };
        let Ok(section) = file.section_by_index(index) else { continue };
        let Ok(data) = section.data() else { continue };
        // Symbol values are section offsets in relocatable code objects
        // (sections at address 0); subtracting the section address also
        // covers linked images.
        let Some(off) = s.address().checked_sub(section.address()).and_then(|o| usize::try_from(o).ok()) else { continue };
        let Some(env_bytes) = off.checked_add(KERNEL_ENV_CONFIG_BYTES).and_then(|end| data.get(off..end)) else {
            crate::debug!("{plugin}: {name} lies outside its section's data; kernel {kernel} runs in bare mode");
            continue;
        };
        out.insert(kernel.to_string(), KernelEnvironment::parse(env_bytes)?);
    }
    Ok(out)
}
