//! Offload-entry tables (abi-reference §2.2–§2.3): the current 56-byte layout
//! and the legacy 32-byte one, told apart the way LLVM 22.1 does (a table that
//! is empty or whose first qword is zero uses the current layout).
//!
//! [`parse_entries`] is a pure function over the table's bytes; symbol names
//! are pointers into the caller's memory and are resolved by a callback so
//! that parsing itself never dereferences anything.

use crate::abi::{OFK_OPENMP, OMP_REGISTER_REQUIRES};
use crate::base::error::{OffloadError, Result};

const NEW_SIZE: usize = 56;
const LEGACY_SIZE: usize = 32;
/// The `Reserved` value of the kernel entry `llvm-omp-kernel-replay` builds.
const REPLAY_TOOL_RESERVED: u64 = 0xffff_ffff;

/// Which layout a table used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryLayout {
    Current,
    Legacy,
}

/// One offload entry, layout-independent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: u16,
    pub version: u16,
    pub flags: u32,
    /// Host address: region id of a kernel, or the host variable.
    pub addr: usize,
    pub name: String,
    pub size: u64,
    pub data: u64,
}

impl Entry {
    /// OpenMP entries are the only ones this runtime processes.
    pub fn is_openmp(&self) -> bool {
        self.kind == OFK_OPENMP
    }
    /// The `.requires` entry carrying requirement flags in `data`.
    pub fn is_requires(&self) -> bool {
        self.flags == OMP_REGISTER_REQUIRES
    }
    /// A kernel: size 0 with a region-id address.
    pub fn is_kernel(&self) -> bool {
        self.size == 0 && self.addr != 0 && !self.is_requires()
    }
    /// A global variable (or indirect function/link pointer).
    pub fn is_global(&self) -> bool {
        self.size != 0
    }
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("invariant: 8-byte slice"))
}

/// Parses an entry table.
///
/// `name_at` turns a symbol-name pointer into a string (it returns an error for
/// NULL). The table's byte length must be a whole number of entries of the
/// detected layout.
pub fn parse_entries(table: &[u8], mut name_at: impl FnMut(usize) -> Result<String>) -> Result<(EntryLayout, Vec<Entry>)> {
    if table.is_empty() {
        return Ok((EntryLayout::Current, Vec::new()));
    }
    // `llvm-omp-kernel-replay` (22.1) fills `Reserved` of its 56-byte entry
    // with `~0U`: that value is no legacy entry's host address.
    let legacy = table.len() >= 8 && !matches!(u64_at(table, 0), 0 | REPLAY_TOOL_RESERVED);
    let (layout, size) = if legacy { (EntryLayout::Legacy, LEGACY_SIZE) } else { (EntryLayout::Current, NEW_SIZE) };
    if !table.len().is_multiple_of(size) {
        return Err(OffloadError::BadImage(format!(
            "offload entry table is {} bytes, not a multiple of the {size}-byte {} entry",
            table.len(),
            if legacy { "legacy" } else { "current" }
        )));
    }
    let mut out = Vec::with_capacity(table.len() / size);
    for (i, rec) in table.chunks_exact(size).enumerate() {
        let entry = if legacy {
            let flags = u32::from_le_bytes(rec[24..28].try_into().expect("invariant: 4 bytes"));
            let data = i32::from_le_bytes(rec[28..32].try_into().expect("invariant: 4 bytes"));
            Entry {
                kind: OFK_OPENMP,
                version: 1,
                flags,
                addr: u64_at(rec, 0) as usize,
                name: name_at(u64_at(rec, 8) as usize).map_err(|e| at_entry(i, e))?,
                size: u64_at(rec, 16),
                data: data as u32 as u64,
            }
        } else {
            if !matches!(u64_at(rec, 0), 0 | REPLAY_TOOL_RESERVED) {
                return Err(OffloadError::BadImage(format!(
                    "offload entry {i}: reserved field is {:#x}, expected 0 (mixed entry layouts?)",
                    u64_at(rec, 0)
                )));
            }
            // The replay tool's entry leaves Version and Kind 0: it is an OpenMP kernel.
            let tool = u64_at(rec, 0) == REPLAY_TOOL_RESERVED;
            Entry {
                version: if tool { 1 } else { u16::from_le_bytes([rec[8], rec[9]]) },
                kind: if tool { OFK_OPENMP } else { u16::from_le_bytes([rec[10], rec[11]]) },
                flags: u32::from_le_bytes(rec[12..16].try_into().expect("invariant: 4 bytes")),
                addr: u64_at(rec, 16) as usize,
                name: name_at(u64_at(rec, 24) as usize).map_err(|e| at_entry(i, e))?,
                size: u64_at(rec, 32),
                data: u64_at(rec, 40),
            }
        };
        out.push(entry);
    }
    Ok((layout, out))
}

fn at_entry(i: usize, e: OffloadError) -> OffloadError {
    OffloadError::BadImage(format!("offload entry {i}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(p: usize) -> Result<String> {
        if p == 0 { Err(OffloadError::BadImage("symbol name is NULL".into())) } else { Ok(format!("sym{p}")) }
    }

    fn new_entry(addr: u64, name: u64, size: u64, flags: u32) -> Vec<u8> {
        let mut b = vec![0u8; 8];
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&flags.to_le_bytes());
        for v in [addr, name, size, 0, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }

    #[test]
    fn current_layout() {
        let mut t = new_entry(0x1000, 7, 0, 0);
        t.extend(new_entry(0x2000, 8, 4, 0));
        let (layout, e) = parse_entries(&t, names).unwrap();
        assert_eq!(layout, EntryLayout::Current);
        assert!(e[0].is_kernel() && e[1].is_global());
        assert_eq!(e[1].name, "sym8");
    }

    #[test]
    fn legacy_layout_is_upgraded() {
        let mut t = Vec::new();
        for v in [0x1000u64, 9, 0] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        t.extend_from_slice(&0u32.to_le_bytes());
        t.extend_from_slice(&(-1i32).to_le_bytes());
        let (layout, e) = parse_entries(&t, names).unwrap();
        assert_eq!(layout, EntryLayout::Legacy);
        assert_eq!((e[0].kind, e[0].addr, e[0].data), (OFK_OPENMP, 0x1000, 0xffff_ffff));
    }

    #[test]
    fn inconsistent_tables_are_errors() {
        let t = new_entry(0x1000, 7, 0, 0);
        assert!(parse_entries(&t[..50], names).is_err());
        assert!(parse_entries(&new_entry(0x1000, 0, 0, 0), names).unwrap_err().to_string().contains("entry 0"));
        for n in 0..t.len() {
            let _ = parse_entries(&t[..n], names);
        }
    }
}
