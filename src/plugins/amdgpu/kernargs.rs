//! The kernarg segment of one launch (abi-reference §5.5): the explicit
//! arguments (8 bytes each, as libomptarget passes them) followed by the
//! implicit ("hidden") arguments of code object v5+. Pure: builds the bytes
//! the plugin copies into a kernarg-pool buffer.
//!
//! With the kernel's metadata each hidden argument goes where the metadata
//! puts it (for a launch that passes exactly the declared arguments that is
//! `alignTo(explicit size, 8)` plus LLVM's `AMDGPUImplicitArgsTy` offsets, so
//! the result equals LLVM 22.1's); without metadata the fields are written at
//! LLVM's fixed offsets after `alignTo(passed bytes, 8)`. Hidden arguments
//! 22.1 does not provide (hostcall and printf buffers, heap, queue pointers,
//! global offsets, remainders) are zero, as in 22.1.

use super::image::KernelMeta;
use crate::base::error::{OffloadError, Result};

/// Offsets in LLVM's `AMDGPUImplicitArgsTy` (256 bytes).
pub mod implicit {
    pub const BLOCK_COUNT_X: usize = 0;
    pub const BLOCK_COUNT_Y: usize = 4;
    pub const BLOCK_COUNT_Z: usize = 8;
    pub const GROUP_SIZE_X: usize = 12;
    pub const GROUP_SIZE_Y: usize = 14;
    pub const GROUP_SIZE_Z: usize = 16;
    pub const GRID_DIMS: usize = 64;
    pub const DYNAMIC_LDS_SIZE: usize = 120;
    pub const SIZE: usize = 256;
}

/// The AQL `setup` dimensions and `hidden_grid_dims` value.
///
/// Reference (AMDGPUQueueTy::pushKernelLaunch): 3 if z has more than one
/// work-item, else 2 if y has, else 1.
pub fn grid_dims(blocks: [u32; 3], threads: [u32; 3]) -> u16 {
    if u64::from(blocks[2]) * u64::from(threads[2]) > 1 { 3 } else { 1 + u16::from(u64::from(blocks[1]) * u64::from(threads[1]) != 1) }
}

/// One launch's geometry as the hidden arguments see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub blocks: [u32; 3],
    pub threads: [u32; 3],
    /// `KernelArgs.DynCGroupMem` (what 22.1 writes to `DynamicLdsSize`).
    pub dynamic_lds: u32,
}

/// The value a hidden argument gets, if the runtime provides it.
fn hidden_value(kind: &str, g: &Geometry) -> Option<u64> {
    let v = match kind {
        "hidden_block_count_x" => g.blocks[0].into(),
        "hidden_block_count_y" => g.blocks[1].into(),
        "hidden_block_count_z" => g.blocks[2].into(),
        "hidden_group_size_x" => g.threads[0].into(),
        "hidden_group_size_y" => g.threads[1].into(),
        "hidden_group_size_z" => g.threads[2].into(),
        "hidden_grid_dims" => grid_dims(g.blocks, g.threads).into(),
        "hidden_dynamic_lds_size" => g.dynamic_lds.into(),
        _ => return None,
    };
    Some(v)
}

fn put(buf: &mut [u8], off: usize, size: usize, value: u64) {
    if let Some(dst) = off.checked_add(size).and_then(|end| buf.get_mut(off..end)) {
        let bytes = value.to_le_bytes();
        dst.copy_from_slice(&bytes[..size.min(8)]);
    }
}

/// Builds the kernarg segment of a launch of `name`.
///
/// `segment_size` is the kernel's `KERNARG_SEGMENT_SIZE` (from its `.kd`
/// symbol), `meta` its metadata entry if the image has one, `args` the
/// 8-byte argument slots the runtime passes.
pub fn build(name: &str, segment_size: u32, meta: Option<&KernelMeta>, args: &[u64], g: &Geometry) -> Result<Vec<u8>> {
    let passed = args.len() * 8;
    let mismatch = |declared: usize| OffloadError::Driver {
        plugin: "amdgpu",
        call: "the kernel launch",
        message: format!("mismatch in kernel arguments for '{name}': {passed} bytes passed, the kernel declares {declared}"),
    };
    let Some(meta) = meta else {
        // Reference (AMDGPUKernelTy::launchImpl): the buffer has the
        // segment size; implicit arguments at alignTo(passed, 8), cut to
        // what fits.
        let size = (segment_size as usize).max(passed);
        let mut buf = vec![0u8; size];
        for (i, a) in args.iter().enumerate() {
            buf[i * 8..i * 8 + 8].copy_from_slice(&a.to_le_bytes());
        }
        let base = passed.next_multiple_of(8);
        use implicit::*;
        let fields: [(usize, usize, &str); 8] = [
            (BLOCK_COUNT_X, 4, "hidden_block_count_x"),
            (BLOCK_COUNT_Y, 4, "hidden_block_count_y"),
            (BLOCK_COUNT_Z, 4, "hidden_block_count_z"),
            (GROUP_SIZE_X, 2, "hidden_group_size_x"),
            (GROUP_SIZE_Y, 2, "hidden_group_size_y"),
            (GROUP_SIZE_Z, 2, "hidden_group_size_z"),
            (GRID_DIMS, 2, "hidden_grid_dims"),
            (DYNAMIC_LDS_SIZE, 4, "hidden_dynamic_lds_size"),
        ];
        for (off, sz, kind) in fields {
            if base + off + sz <= size {
                put(&mut buf, base + off, sz, hidden_value(kind, g).unwrap_or(0));
            }
        }
        return Ok(buf);
    };
    let declared = meta.explicit_size() as usize;
    if passed < declared {
        return Err(mismatch(declared));
    }
    if passed > declared {
        crate::debug!("amdgpu: {name}: launch passes {passed} argument bytes, the kernel declares {declared}; the extra ones are dropped");
    }
    let end_of_args = meta.args.iter().map(|a| a.offset as usize + a.size as usize).max().unwrap_or(0);
    let size = (segment_size as usize).max(meta.kernarg_segment_size as usize).max(end_of_args).max(declared);
    let mut buf = vec![0u8; size];
    for (i, a) in args.iter().enumerate().take(declared.div_ceil(8)) {
        let off = i * 8;
        let n = 8.min(declared - off);
        buf[off..off + n].copy_from_slice(&a.to_le_bytes()[..n]);
    }
    for h in meta.hidden_args() {
        let (off, sz) = (h.offset as usize, h.size as usize);
        if sz > 8 {
            return Err(OffloadError::BadImage(format!("AMDGPU metadata: hidden argument {} of '{name}' has {sz} bytes", h.value_kind)));
        }
        match hidden_value(&h.value_kind, g) {
            Some(v) => put(&mut buf, off, sz, v),
            None => {
                if matches!(h.value_kind.as_str(), "hidden_hostcall_buffer" | "hidden_printf_buffer" | "hidden_heap_v1") {
                    crate::debug!("amdgpu: {name} asks for {}: not provided (zero), as in LLVM 22.1", h.value_kind);
                }
            }
        }
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::amdgpu::image::KernelArg;

    fn arg(offset: u32, size: u32, kind: &str) -> KernelArg {
        KernelArg { offset, size, value_kind: kind.into() }
    }

    /// saxpy of c-tests/gpu/images for gfx90a (reports/amdgpu.gfx90a.txt).
    fn saxpy() -> KernelMeta {
        let mut args: Vec<KernelArg> = (0..5).map(|i| arg(i * 8, 8, if i < 3 { "global_buffer" } else { "by_value" })).collect();
        for (o, s, k) in [
            (40, 4, "hidden_block_count_x"),
            (44, 4, "hidden_block_count_y"),
            (48, 4, "hidden_block_count_z"),
            (52, 2, "hidden_group_size_x"),
            (54, 2, "hidden_group_size_y"),
            (56, 2, "hidden_group_size_z"),
            (58, 2, "hidden_remainder_x"),
            (80, 8, "hidden_global_offset_x"),
            (104, 2, "hidden_grid_dims"),
            (160, 4, "hidden_dynamic_lds_size"),
        ] {
            args.push(arg(o, s, k));
        }
        KernelMeta { name: "saxpy".into(), kernarg_segment_size: 296, kernarg_segment_align: 8, args, ..Default::default() }
    }

    fn u32_at(b: &[u8], o: usize) -> u32 {
        u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
    }
    fn u16_at(b: &[u8], o: usize) -> u16 {
        u16::from_le_bytes(b[o..o + 2].try_into().unwrap())
    }

    #[test]
    fn grid_dims_as_llvm() {
        assert_eq!(grid_dims([64, 1, 1], [128, 1, 1]), 1);
        assert_eq!(grid_dims([1, 2, 1], [1, 1, 1]), 2);
        assert_eq!(grid_dims([1, 1, 1], [1, 2, 1]), 2);
        assert_eq!(grid_dims([3, 2, 2], [8, 4, 2]), 3);
        assert_eq!(grid_dims([1, 1, 1], [1, 1, 1]), 1);
    }

    #[test]
    fn metadata_layout() {
        let g = Geometry { blocks: [64, 1, 1], threads: [128, 1, 1], dynamic_lds: 16 };
        let args = [u64::MAX, 0x1000, 0x2000, 0x4000_0000, 100_000];
        let b = build("saxpy", 296, Some(&saxpy()), &args, &g).unwrap();
        assert_eq!(b.len(), 296);
        for (i, a) in args.iter().enumerate() {
            assert_eq!(u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap()), *a);
        }
        assert_eq!((u32_at(&b, 40), u32_at(&b, 44), u32_at(&b, 48)), (64, 1, 1));
        assert_eq!((u16_at(&b, 52), u16_at(&b, 54), u16_at(&b, 56)), (128, 1, 1));
        assert_eq!(u16_at(&b, 58), 0, "remainders are zero");
        assert_eq!(u16_at(&b, 104), 1);
        assert_eq!(u32_at(&b, 160), 16);
        // The metadata offsets are LLVM's struct offsets after alignTo(40, 8).
        assert_eq!(40 + implicit::GRID_DIMS, 104);
        assert_eq!(40 + implicit::DYNAMIC_LDS_SIZE, 160);
        // Too few arguments is an error; too many are cut to the declaration.
        let e = build("saxpy", 296, Some(&saxpy()), &args[..4], &g).unwrap_err().to_string();
        assert!(e.contains("32 bytes passed, the kernel declares 40"), "{e}");
        let more = [1, 2, 3, 4, 5, 6];
        let b = build("saxpy", 296, Some(&saxpy()), &more, &g).unwrap();
        assert_eq!(u32_at(&b, 40), 64, "the sixth slot does not overwrite the hidden arguments");
    }

    #[test]
    fn fixed_layout_without_metadata() {
        let g = Geometry { blocks: [3, 2, 2], threads: [8, 4, 2], dynamic_lds: 0 };
        let b = build("k", 24 + 256, None, &[7, 8, 9], &g).unwrap();
        assert_eq!((u32_at(&b, 24), u32_at(&b, 28), u32_at(&b, 32)), (3, 2, 2));
        assert_eq!((u16_at(&b, 36), u16_at(&b, 38), u16_at(&b, 40)), (8, 4, 2));
        assert_eq!(u16_at(&b, 24 + 64), 3);
        // A segment that ends before the implicit block keeps only what fits.
        let b = build("k", 32, None, &[7, 8, 9], &g).unwrap();
        assert_eq!(b.len(), 32);
        assert_eq!(u32_at(&b, 24), 3);
        assert_eq!(u32_at(&b, 28), 2);
        // Bare segments (no implicit arguments at all).
        assert_eq!(build("k", 0, None, &[1], &g).unwrap().len(), 8);
    }
}
