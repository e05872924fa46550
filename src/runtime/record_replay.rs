//! Kernel record/replay (issue 15), compatible with LLVM 22.1's GPU plugins
//! and its `llvm-omp-kernel-replay` tool.
//!
//! **Recording** (`LIBOMPTARGET_RECORD=1`, or `__tgt_activate_record_replay`
//! with `is_record`): the first device allocation on a GPU device reserves
//! one block of `LIBOMPTARGET_RR_DEVMEM_SIZE` GiB (default 64) and every
//! later device allocation of that device is bump-allocated from it (16-byte
//! aligned; frees do nothing), so that one snapshot holds all the kernel's
//! data. Before each launch the runtime waits for the construct's copies and
//! writes, in the current directory, `<kernel>.json` (name, arguments,
//! teams/threads, trip count, device, block start and bytes used),
//! `<kernel>.image` (the device image), `<kernel>.globals` (empty: the
//! declare-target globals are not captured) and `<kernel>.memory` (the used
//! part of the block); with `LIBOMPTARGET_RR_SAVE_OUTPUT=1` also
//! `<kernel>.original.output` after the kernel.
//!
//! **Replay** (`__tgt_activate_record_replay` without `is_record`, then
//! `__tgt_target_kernel_replay`, as the tool calls them): a block of the
//! recorded size is allocated; where it cannot be placed at the recorded
//! address (the CUDA driver API gives no fixed addresses without VA
//! management), the offset is handed back for the tool to move the pointer
//! arguments, with 22.1's warning. Pointers stored inside the recorded memory
//! are not moved, as in 22.1's fallback. The memory is restored, the kernel
//! launched with the recorded arguments and, with `save_output`, the block
//! written to `<kernel>.replay.output` (the tool's `--verify` compares it).

use super::device::Device;
use crate::env::config::{info, parse_bool, parse_int};
use crate::env::diag;
use crate::error::{OffloadError, Result};
use crate::plugins::{AllocKind, LaunchDims};
use parking_lot::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Record,
    Replay,
    /// Initialisation failed: the device allocates normally.
    Off,
}

#[derive(Debug)]
struct Block {
    device: usize,
    mode: Mode,
    start: u64,
    total: u64,
    used: u64,
    save_output: bool,
}

/// Set once any block exists (or failed): the allocation hook's fast path.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static BLOCKS: Mutex<Vec<Block>> = Mutex::new(Vec::new());

/// Takes the recorded-blocks lock before `fork` (runtime/fork.rs).
pub(super) fn lock_for_fork(held: &mut super::fork::ForkLocks) -> bool {
    held.mutex(&BLOCKS)
}

/// `LIBOMPTARGET_RECORD` with its size (bytes) and `LIBOMPTARGET_RR_SAVE_OUTPUT`.
#[inline]
fn record_env() -> Option<(u64, bool)> {
    static ENV: OnceLock<Option<(u64, bool)>> = OnceLock::new();
    *ENV.get_or_init(|| {
        if !parse_bool(std::env::var("LIBOMPTARGET_RECORD").ok().as_deref(), false) {
            return None;
        }
        let gib = std::env::var("LIBOMPTARGET_RR_DEVMEM_SIZE").ok().and_then(|v| parse_int(&v)).filter(|&g| g > 0).unwrap_or(64);
        let save = parse_bool(std::env::var("LIBOMPTARGET_RR_SAVE_OUTPUT").ok().as_deref(), false);
        Some(((gib as u64) << 30, save))
    })
}

/// Record/replay applies to the GPU plugins, as in 22.1.
fn gpu(dev: &Device) -> bool {
    dev.plugin.name() != "x86_64"
}

/// Reserves a block on `dev`; reports and returns the error if it cannot.
fn reserve(dev: &Device, mode: Mode, total: u64, save_output: bool, blocks: &mut Vec<Block>) -> Result<u64> {
    ACTIVE.store(true, Ordering::Release);
    match dev.plugin.alloc(dev.plugin_device, total, AllocKind::Default) {
        Ok(start) => {
            diag::plugin_info(info::PLUGIN_KERNEL, dev.id, || format!("Allocated {total} bytes at {} for replay.", diag::ptr(start)));
            diag::plugin_info(info::PLUGIN_KERNEL, dev.id, || {
                format!(
                    "Record Replay Initialized ({}) as starting address, {total} Memory Size and set on status {}",
                    diag::ptr(start),
                    if mode == Mode::Record { "Recording" } else { "Replaying" }
                )
            });
            blocks.push(Block { device: dev.id, mode, start, total, used: 0, save_output });
            Ok(start)
        }
        Err(e) => {
            diag::report(&format!("WARNING RR did not initialize RR-properly with {total} bytes(Error: {e})"));
            blocks.push(Block { device: dev.id, mode: Mode::Off, start: 0, total: 0, used: 0, save_output: false });
            Err(e)
        }
    }
}

/// The allocation hook: `Some` address from the block when `dev` records or
/// replays. Inlined to one flag test (and the environment's cached answer)
/// on every allocation; the rest is out of line.
#[inline]
pub(super) fn alloc(dev: &Device, size: u64, kind: AllocKind) -> Option<u64> {
    if !ACTIVE.load(Ordering::Acquire) && record_env().is_none() {
        return None;
    }
    alloc_slow(dev, size, kind)
}

#[cold]
#[inline(never)]
fn alloc_slow(dev: &Device, size: u64, kind: AllocKind) -> Option<u64> {
    if !matches!(kind, AllocKind::Default | AllocKind::Device) || !gpu(dev) {
        return None;
    }
    let mut blocks = BLOCKS.lock();
    if !blocks.iter().any(|b| b.device == dev.id) {
        let (total, save) = record_env()?;
        reserve(dev, Mode::Record, total, save, &mut blocks).ok()?;
    }
    let b = blocks.iter_mut().find(|b| b.device == dev.id && b.mode != Mode::Off)?;
    let aligned = size.checked_add(15)? & !15;
    if b.used + aligned > b.total {
        crate::debug!(
            "record/replay: block of device {} full ({} of {} bytes); {size} bytes allocated outside it",
            dev.id,
            b.used,
            b.total
        );
        return None;
    }
    let p = b.start + b.used;
    b.used += aligned;
    Some(p)
}

/// Whether `ptr` lies in the block of device `id` (its frees do nothing).
#[inline]
pub(super) fn owns(id: usize, ptr: u64) -> bool {
    ACTIVE.load(Ordering::Acquire) && owns_slow(id, ptr)
}

#[cold]
#[inline(never)]
fn owns_slow(id: usize, ptr: u64) -> bool {
    BLOCKS.lock().iter().any(|b| b.device == id && b.mode != Mode::Off && ptr >= b.start && ptr < b.start + b.total)
}

/// Whether launches on device `id` are recorded.
#[inline]
pub(super) fn recording(id: usize) -> bool {
    ACTIVE.load(Ordering::Acquire) && recording_slow(id)
}

#[cold]
#[inline(never)]
fn recording_slow(id: usize) -> bool {
    BLOCKS.lock().iter().any(|b| b.device == id && b.mode == Mode::Record)
}

/// `__tgt_activate_record_replay`: reserves the block; returns the offset
/// the caller must subtract from pointer arguments (0 when the block lies at
/// `vaddr` or no address was asked for).
pub fn activate(dev: &Device, memory_size: u64, vaddr: u64, is_record: bool, save_output: bool) -> Result<u64> {
    if !gpu(dev) {
        return Err(OffloadError::InvalidArgument(format!(
            "kernel record/replay needs a GPU device; device {} is {}",
            dev.id,
            dev.plugin.name()
        )));
    }
    let mut blocks = BLOCKS.lock();
    if blocks.iter().any(|b| b.device == dev.id && b.mode != Mode::Off) {
        return Err(OffloadError::InvalidArgument(format!("record/replay is already active on device {}", dev.id)));
    }
    blocks.retain(|b| b.device != dev.id);
    let total = memory_size.max(16).checked_add(15).map(|s| s & !15).unwrap_or(memory_size);
    let mode = if is_record { Mode::Record } else { Mode::Replay };
    let start = reserve(dev, mode, total, save_output, &mut blocks)?;
    if vaddr != 0 && vaddr != start {
        let offset = vaddr.wrapping_sub(start);
        diag::report(&format!(
            "WARNING Failed to allocate replay memory at required location {}, got {}, trying to offset argument pointers by {}",
            diag::ptr(vaddr),
            diag::ptr(start),
            offset as i64
        ));
        return Ok(offset);
    }
    Ok(0)
}

/// The block of device `id`: (start, bytes used, save output).
fn block(id: usize) -> Option<(u64, u64, bool)> {
    BLOCKS.lock().iter().find(|b| b.device == id && b.mode != Mode::Off).map(|b| (b.start, b.used, b.save_output))
}

fn write(path: &str, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| OffloadError::Internal(format!("record/replay: writing {path}: {e}")))
}

/// Writes the used part of the block to `path`.
fn dump_memory(dev: &Device, path: &str) -> Result<()> {
    let Some((start, used, _)) = block(dev.id) else { return Ok(()) };
    let mut buf = vec![0u8; used as usize];
    if used > 0 {
        // SAFETY: `buf` holds `used` writable bytes.
        unsafe { dev.plugin.retrieve(dev.plugin_device, buf.as_mut_ptr() as usize, start, used)? };
    }
    write(path, &buf)
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Before a recorded launch (the construct's copies have completed).
pub(super) fn before_launch(
    rt: &super::Runtime,
    dev: &Device,
    region_id: usize,
    name: &str,
    params: &[u64],
    dims: &LaunchDims,
) -> Result<()> {
    let Some((start, used, _)) = block(dev.id) else { return Ok(()) };
    let args: Vec<String> = params.iter().map(|&p| (p as i64).to_string()).collect();
    let offsets: Vec<&str> = params.iter().map(|_| "0").collect();
    let json = format!(
        "{{\"ArgOffsets\":[{}],\"ArgPtrs\":[{}],\"BumpAllocVAStart\":{},\"DeviceId\":{},\"DeviceMemorySize\":{used},\"LoopTripCount\":{},\"Name\":{},\"NumArgs\":{},\"NumTeamsClause\":{},\"ThreadLimitClause\":{}}}",
        offsets.join(","),
        args.join(","),
        start as i64,
        dev.id,
        dims.tripcount,
        json_string(name),
        params.len(),
        dims.teams[0],
        dims.threads[0]
    );
    write(&format!("{name}.json"), json.as_bytes())?;
    let image = {
        let reg = rt.registry.read();
        reg.libs.iter().find(|l| l.entries.iter().any(|e| e.is_kernel() && e.addr == region_id)).and_then(|l| {
            let i = *l.device_images.get(&dev.id)?;
            Some(l.images.get(i)?.bytes().to_vec())
        })
    };
    match image {
        Some(bytes) => write(&format!("{name}.image"), &bytes)?,
        None => diag::report(&format!("record/replay: no device image found for kernel {name}")),
    }
    write(&format!("{name}.globals"), &[])?;
    dump_memory(dev, &format!("{name}.memory"))
}

/// After a recorded launch completed.
pub(super) fn after_launch(dev: &Device, name: &str) -> Result<()> {
    match block(dev.id) {
        Some((_, _, true)) => dump_memory(dev, &format!("{name}.original.output")),
        _ => Ok(()),
    }
}

/// `__tgt_target_kernel_replay`: restores the memory into the block,
/// launches the kernel with the recorded arguments and waits.
#[allow(clippy::too_many_arguments)] // The entry point's arguments.
pub fn replay(
    rt: &super::Runtime,
    dev: &Device,
    region_id: usize,
    memory: &[u8],
    args: &[u64],
    num_teams: u32,
    thread_limit: u32,
    tripcount: u64,
) -> Result<()> {
    let kernel = rt.kernel(dev, region_id)?;
    if block(dev.id).is_none() {
        return Err(OffloadError::InvalidArgument(format!("kernel replay on device {} without __tgt_activate_record_replay", dev.id)));
    }
    let p = dev.alloc(memory.len().max(1) as u64, AllocKind::Default)?;
    if !memory.is_empty() {
        // SAFETY: `memory` is a live slice of that many bytes.
        unsafe { dev.submit(p, memory.as_ptr() as usize, memory.len() as u64)? };
    }
    let dims = LaunchDims { teams: [num_teams.max(1), 1, 1], threads: [thread_limit.max(1), 1, 1], dyn_shared_bytes: 0, tripcount };
    dev.plugin.launch(dev.plugin_device, kernel.handle, kernel.name, args, &dims)?;
    if let Some((_, _, true)) = block(dev.id) {
        dump_memory(dev, &format!("{}.replay.output", kernel.name))?;
    }
    Ok(())
}
