//! Kernel record/replay, compatible with LLVM 22.1's GPU plugins
//! and its `llvm-omp-kernel-replay` tool.
//!
//! **Recording** (`LIBOMPTARGET_RECORD=1`, or `__tgt_activate_record_replay`
//! with `is_record`): the first device allocation on a GPU device reserves
//! one block of `LIBOMPTARGET_RR_DEVMEM_SIZE` GiB (default 64) and every
//! later device allocation of that device is bump-allocated from it (16-byte
//! aligned; frees do nothing), so that one snapshot holds all the kernel's
//! data. Before each launch the runtime waits for the construct's copies and
//! writes, in the current directory, `<kernel>.json` (name, arguments,
//! teams/threads, trip count, device, block start and bytes used; 22.1's
//! keys, whose `NumTeamsClause`/`ThreadLimitClause` hold only x, plus
//! `NumTeamsClause3D`/`ThreadLimitClause3D` with all three dimensions),
//! `<kernel>.image` (the device image), `<kernel>.globals` (the device
//! values of the declare-target globals of every image loaded on the
//! device, in 22.1's format: per global its NUL-terminated name, its size as
//! a 32-bit integer and its bytes) and `<kernel>.memory` (the used part of
//! the block); with `LIBOMPTARGET_RR_SAVE_OUTPUT=1` also
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
//! Two things the tool's call cannot carry are read from the recording in
//! the current directory (where the tool reads `<kernel>.image` and
//! `.memory` too): the globals of `<kernel>.globals` are written back to
//! the image's globals first (22.1 records them but restores nothing), and
//! when the teams/threads passed equal the x of `<kernel>.json`'s 3-D
//! arrays (no `--num-teams`/`--num-threads` override), the kernel runs with
//! the recorded y and z too (22.1 launches x only).

use super::device::OmpDevice;
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::device::record_memory::{block, dump_memory, write};
use crate::plugins::{AllocKind, LaunchDims};

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
    dev: &OmpDevice,
    region_id: usize,
    name: &str,
    params: &[u64],
    dims: &LaunchDims,
) -> Result<()> {
    let Some((start, used, _)) = block(dev.id) else { return Ok(()) };
    let args: Vec<String> = params.iter().map(|&p| (p as i64).to_string()).collect();
    let offsets: Vec<&str> = params.iter().map(|_| "0").collect();
    let dims3 = |d: [u32; 3]| d.map(|v| v.to_string()).join(",");
    let json = format!(
        "{{\"ArgOffsets\":[{}],\"ArgPtrs\":[{}],\"BumpAllocVAStart\":{},\"DeviceId\":{},\"DeviceMemorySize\":{used},\"LoopTripCount\":{},\"Name\":{},\"NumArgs\":{},\"NumTeamsClause\":{},\"NumTeamsClause3D\":[{}],\"ThreadLimitClause\":{},\"ThreadLimitClause3D\":[{}]}}",
        offsets.join(","),
        args.join(","),
        start as i64,
        dev.id,
        dims.tripcount,
        json_string(name),
        params.len(),
        dims.teams[0],
        dims3(dims.teams),
        dims.threads[0],
        dims3(dims.threads)
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
    write(&format!("{name}.globals"), &globals(rt, dev)?)?;
    dump_memory(dev, &format!("{name}.memory"))
}

/// Declare-target globals of the libraries loaded on `dev`, in registration
/// order: (image handle, name, size) of every global entry with a size
/// (the indirect-call vtables excepted, which are not globals of the image).
fn global_entries(rt: &super::Runtime, dev: &OmpDevice) -> Vec<(crate::plugins::ImageHandle, String, u64)> {
    let reg = rt.registry.read();
    let loaded = dev.loaded_libs.lock();
    reg.libs
        .iter()
        .filter_map(|l| Some((*loaded.get(&l.key)?, l)))
        .flat_map(|(h, l)| {
            l.entries
                .iter()
                .filter(|e| e.is_global() && e.size > 0 && e.flags & crate::abi::OMP_DECLARE_TARGET_INDIRECT_VTABLE == 0)
                .map(move |e| (h, e.name.clone(), e.size))
        })
        .collect()
}

/// The `.globals` file: per global its name, NUL, its size (u32, native
/// order) and its device bytes (22.1's `dumpGlobals`).
fn globals(rt: &super::Runtime, dev: &OmpDevice) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (handle, name, size) in global_entries(rt, dev) {
        let Ok(size32) = u32::try_from(size) else {
            diag::report(&format!("record/replay: global {name} has {size} bytes, more than the .globals format holds; not recorded"));
            continue;
        };
        let tgt = dev.plugin.get_global(dev.plugin_device, handle, &name, size)?;
        let mut bytes = vec![0u8; size as usize];
        // SAFETY: `bytes` holds `size` writable bytes; `tgt` is the global's device address of that size.
        unsafe { dev.plugin.retrieve(dev.plugin_device, bytes.as_mut_ptr() as usize, tgt, size)? };
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(&size32.to_ne_bytes());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// Parses a `.globals` file into (name, bytes); `None` when it is malformed.
fn parse_globals(mut b: &[u8]) -> Option<Vec<(String, &[u8])>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let nul = b.iter().position(|&c| c == 0)?;
        let name = std::str::from_utf8(&b[..nul]).ok()?.to_string();
        b = &b[nul + 1..];
        let size = u32::from_ne_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let bytes = b.get(4..4 + size)?;
        b = &b[4 + size..];
        out.push((name, bytes));
    }
    Some(out)
}

/// Writes the recorded globals (`<kernel>.globals`, if there is one) back
/// into the image of `region_id` on `dev`.
fn restore_globals(rt: &super::Runtime, dev: &OmpDevice, region_id: usize, kernel: &str) -> Result<()> {
    let path = format!("{kernel}.globals");
    let Ok(file) = std::fs::read(&path) else { return Ok(()) };
    let Some(globals) = parse_globals(&file) else {
        return Err(OffloadError::InvalidArgument(format!(
            "record/replay: {path} is not a globals file (a truncated or foreign recording?)"
        )));
    };
    let handle = {
        let reg = rt.registry.read();
        let lib = reg.libs.iter().find(|l| l.entries.iter().any(|e| e.is_kernel() && e.addr == region_id));
        lib.and_then(|l| dev.loaded_libs.lock().get(&l.key).copied())
    };
    let Some(handle) = handle else { return Ok(()) };
    for (name, bytes) in globals {
        match dev.plugin.get_global(dev.plugin_device, handle, &name, bytes.len() as u64) {
            // SAFETY: `bytes` is a live slice; `tgt` is the global's device address of that size.
            Ok(tgt) => unsafe { dev.plugin.submit(dev.plugin_device, tgt, bytes.as_ptr() as usize, bytes.len() as u64)? },
            Err(e) => diag::report(&format!("record/replay: global {name} of {path} not restored: {e}")),
        }
    }
    Ok(())
}

/// The 3-D teams and threads recorded in `<kernel>.json`, if its x values
/// are `teams_x` and `threads_x` (the replay was not given other numbers).
fn recorded_dims(kernel: &str, teams_x: u32, threads_x: u32) -> Option<([u32; 3], [u32; 3])> {
    let json = std::fs::read_to_string(format!("{kernel}.json")).ok()?;
    let array = |key: &str| -> Option<[u32; 3]> {
        let at = json.find(&format!("\"{key}\":["))? + key.len() + 4;
        let end = at + json[at..].find(']')?;
        let v: Vec<u32> = json[at..end].split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
        v.try_into().ok()
    };
    let (teams, threads) = (array("NumTeamsClause3D")?, array("ThreadLimitClause3D")?);
    (teams[0] == teams_x && threads[0] == threads_x).then_some((teams, threads))
}

/// After a recorded launch completed.
pub(super) fn after_launch(dev: &OmpDevice, name: &str) -> Result<()> {
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
    dev: &OmpDevice,
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
    restore_globals(rt, dev, region_id, kernel.name)?;
    let (teams, threads) = recorded_dims(kernel.name, num_teams, thread_limit).unwrap_or(([num_teams, 1, 1], [thread_limit, 1, 1]));
    let dims = LaunchDims { teams: teams.map(|v| v.max(1)), threads: threads.map(|v| v.max(1)), dyn_shared_bytes: 0, tripcount };
    dev.plugin.launch(dev.plugin_device, kernel.handle, kernel.name, args, &dims)?;
    if let Some((_, _, true)) = block(dev.id) {
        dump_memory(dev, &format!("{}.replay.output", kernel.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globals_files_round_trip_and_malformed_ones_are_refused() {
        let mut f = Vec::new();
        for (name, bytes) in [("g_value", &[1u8, 2, 3, 4][..]), ("g_table", &[9u8; 16][..])] {
            f.extend_from_slice(name.as_bytes());
            f.push(0);
            f.extend_from_slice(&(bytes.len() as u32).to_ne_bytes());
            f.extend_from_slice(bytes);
        }
        let g = parse_globals(&f).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].0.as_str(), g[0].1), ("g_value", &[1u8, 2, 3, 4][..]));
        assert_eq!((g[1].0.as_str(), g[1].1.len()), ("g_table", 16));
        assert_eq!(parse_globals(&[]).unwrap().len(), 0);
        for cut in 1..f.len() {
            if cut != 16 {
                assert!(parse_globals(&f[..cut]).is_none(), "truncated at {cut}");
            }
        }
    }
}
