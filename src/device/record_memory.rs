//! The device memory of kernel record/replay: while a GPU device records or
//! replays, its allocations are bump-allocated from one block (16-byte
//! aligned; frees do nothing), so that one snapshot holds all the kernel's
//! data. The files and the launch side are OpenMP's
//! (`crate::openmp::record_replay`).

use super::Device;
use crate::base::config::{info, parse_bool, parse_int};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::plugins::AllocKind;
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

/// Fork participation: the recorded-blocks lock.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&BLOCKS)
}

/// Before `fork`: the settings are read now if they were not (no child
/// inherits their one-time initialisation half done).
pub(crate) fn before_fork() {
    record_env();
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
    crate::base::fast_path::set(crate::base::fast_path::RECORD, true);
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
pub(crate) fn alloc(dev: &Device, size: u64, kind: AllocKind) -> Option<u64> {
    if cfg!(feature = "bench-no-hooks") || (!ACTIVE.load(Ordering::Acquire) && record_env().is_none()) {
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
pub(crate) fn owns(id: usize, ptr: u64) -> bool {
    !cfg!(feature = "bench-no-hooks") && ACTIVE.load(Ordering::Acquire) && owns_slow(id, ptr)
}

#[cold]
#[inline(never)]
fn owns_slow(id: usize, ptr: u64) -> bool {
    BLOCKS.lock().iter().any(|b| b.device == id && b.mode != Mode::Off && ptr >= b.start && ptr < b.start + b.total)
}

/// Whether launches on device `id` are recorded.
#[inline]
pub fn recording(id: usize) -> bool {
    !cfg!(feature = "bench-no-hooks") && ACTIVE.load(Ordering::Acquire) && recording_slow(id)
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
pub fn block(id: usize) -> Option<(u64, u64, bool)> {
    BLOCKS.lock().iter().find(|b| b.device == id && b.mode != Mode::Off).map(|b| (b.start, b.used, b.save_output))
}

pub fn write(path: &str, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| OffloadError::Internal(format!("record/replay: writing {path}: {e}")))
}

/// Writes the used part of the block to `path`.
pub fn dump_memory(dev: &Device, path: &str) -> Result<()> {
    let Some((start, used, _)) = block(dev.id) else { return Ok(()) };
    let mut buf = vec![0u8; used as usize];
    if used > 0 {
        // SAFETY: `buf` holds `used` writable bytes.
        unsafe { dev.plugin.retrieve(dev.plugin_device, buf.as_mut_ptr() as usize, start, used)? };
    }
    write(path, &buf)
}
