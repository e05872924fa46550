//! Entry points for the coverage-guided fuzz targets in `tests/fuzz`: one
//! function per parser of untrusted bytes, each running the real
//! parser the way the runtime does and checking what a parser must
//! guarantee (ranges inside the input, counts that fit it). A parser may
//! reject any input; it must never panic, read out of bounds, or allocate
//! without bound. Not part of the library's interface.

use crate::base::image::{check_elf_layout, elf_ident, elf_symbol_size, parse_offload_binary};
use crate::openmp::entries::parse_entries;
use crate::plugins::amdgpu::{image as amdgpu, kernargs, msgpack};
use crate::plugins::cuda::image as cuda;

/// The OffloadBinary container (`__tgt_device_image` contents and
/// `olCreateProgram` data): an accepted container's image range is inside it.
pub fn offload_binary(data: &[u8]) {
    if let Ok(Some(ob)) = parse_offload_binary(data) {
        assert!(ob.image.start <= ob.image.end && ob.image.end <= data.len(), "image range outside the input");
    }
}

/// ELF identification, the layout check every plugin runs before loading,
/// the host plugin's shared-object check before `dlopen`, and the
/// symbol-size lookup (`olGetSymbol`, globals). An image the shared-object
/// check accepts has passed the layout check too.
pub fn elf(data: &[u8]) {
    let _ = elf_ident(data);
    let layout = check_elf_layout(data);
    if crate::base::elf::check_shared_object(data).is_ok() {
        assert!(layout.is_ok(), "shared object accepted with a broken layout");
    }
    let _ = elf_symbol_size(data, "main");
}

/// An offload-entry table (`__tgt_offload_entry[]`, current or legacy
/// layout). A name pointer stands for a readable string when it is even and
/// non-NULL; NULL and odd pointers are unreadable and must be rejected, not
/// dereferenced.
pub fn entries(data: &[u8]) {
    let names = |p: usize| {
        if p != 0 && p.is_multiple_of(2) {
            Ok(format!("sym{p:x}"))
        } else {
            Err(crate::base::error::OffloadError::BadImage(format!("bad name pointer {p:#x}")))
        }
    };
    if let Ok((_, entries)) = parse_entries(data, names) {
        assert!(entries.len() * 32 <= data.len(), "more entries than the table holds");
    }
}

/// What the CUDA plugin reads from a cubin/PTX/fatbin before the driver
/// gets it: kind and architecture, symbols, kernel environments.
pub fn cuda_image(data: &[u8]) {
    if let Some((&abi, rest)) = data.split_first()
        && rest.len() >= 4
    {
        let _ = cuda::decode_cubin(abi, u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]));
    }
    let _ = cuda::KernelEnvironment::parse(data);
    let _ = check_elf_layout(data);
    if cuda::identify(data).is_ok() {
        let _ = cuda::symbols(data);
        let _ = cuda::kernel_environments(data);
    }
}

/// A CUDA fatbinary: the container walk, LZ4 decompression of its entries
/// and the choice of an entry for a few compute capabilities. Accepted
/// entries' payloads lie inside the input. Inputs with Zstandard entries
/// are only walked (that decoder is the system's libzstd, not ours).
pub fn cuda_fatbin(data: &[u8]) {
    use crate::plugins::cuda::fatbin;
    let Ok(entries) = fatbin::parse(data) else { return };
    let range = data.as_ptr_range();
    let mut zstd = false;
    for e in &entries {
        let p = e.payload.as_ptr_range();
        assert!(range.start <= p.start && p.end <= range.end, "payload outside the input");
        match e.compression {
            fatbin::Compression::Lz4 => {
                if let Ok(c) = fatbin::contents(e) {
                    assert_eq!(c.len() as u64, e.uncompressed_size, "LZ4 output of another size than declared");
                }
            }
            fatbin::Compression::Zstd => zstd = true,
            fatbin::Compression::None => {}
        }
    }
    if !zstd {
        for (major, minor) in [(8, 0), (8, 6), (9, 0), (10, 0)] {
            let _ = fatbin::select(data, cuda::ComputeCapability { major, minor });
        }
    }
}

/// What the AMDGPU plugin reads from a code object: identification,
/// symbols, kernel environments, the `amdhsa` metadata note (msgpack), and
/// the kernarg segment of a launch of each kernel it describes.
pub fn amdgpu_image(data: &[u8]) {
    let _ = check_elf_layout(data);
    if amdgpu::identify(data).is_err() {
        return;
    }
    let _ = amdgpu::symbols(data);
    let _ = amdgpu::kernel_environments(data);
    if let Ok(meta) = amdgpu::metadata(data) {
        let g = kernargs::Geometry { blocks: [2, 1, 1], threads: [64, 1, 1], dynamic_lds: 0 };
        for k in meta.kernels.iter().take(8) {
            for n in [0usize, 1, 3] {
                let args = vec![0x1000u64; n];
                let _ = kernargs::build(&k.name, k.kernarg_segment_size, Some(k), &args, &g);
            }
        }
    }
}

/// The msgpack decoder of AMDGPU metadata notes, on raw bytes.
pub fn amdgpu_msgpack(data: &[u8]) {
    let _ = msgpack::decode(data);
}

/// The checks `olCreateProgram` / `olIsValidBinary` and image registration
/// run on an image before a plugin's loader gets it: the container
/// unwrapped, then each plugin's compatibility test and pre-load checks.
pub fn program_image(data: &[u8]) {
    let inner = match parse_offload_binary(data) {
        Ok(Some(ob)) => &data[ob.image],
        Ok(None) => data,
        Err(_) => return,
    };
    if elf_ident(inner).is_ok_and(|e| e.machine == crate::base::image::machine::X86_64) {
        let _ = check_elf_layout(inner);
        let _ = crate::base::elf::check_shared_object(inner);
    }
    cuda_image(inner);
    amdgpu_image(inner);
}

/// Kernel-arguments structs of every version, as `__tgt_target_kernel`
/// reads them. The fuzz input is the struct's 104 bytes followed by the
/// argument arrays' contents; the pointer fields are replaced by pointers
/// into those arrays (or NULL, or a misaligned pointer, as the field's low
/// bits say), since a struct's arrays are the program's memory, not bytes.
pub fn kernel_args(data: &[u8]) {
    crate::openmp::constructs::fuzz_kernel_args(data);
}

/// The mapper component vector (`rt_mapper_handle`) as a program may hand
/// it over: its three pointers are checked, then components are pushed
/// (growing it as libstdc++ does) and it is freed. The fuzz input gives the
/// vector's length and capacity, which may be inconsistent, and the pushes.
pub fn mapper_components(data: &[u8]) {
    use crate::abi::mapper::{MapComponent, MapperComponents};
    let [cap, len, mode, pushes, ..] = *data else { return };
    let size = core::mem::size_of::<MapComponent>();
    let cap = usize::from(cap % 16);
    let storage = if cap == 0 {
        core::ptr::null_mut()
    } else {
        // SAFETY: the vectors' allocator (operator new or malloc) with a non-zero size; freed below or by `release`.
        unsafe { crate::abi::mapper::allocator().0(cap * size) as *mut u8 }
    };
    if cap != 0 && storage.is_null() {
        return;
    }
    // Finish and capacity end as byte offsets inside the block, so that an
    // accepted vector never points outside memory the harness owns; `mode`
    // makes them misaligned, reversed or a NULL begin with a non-NULL end.
    let mut fin = usize::from(len % 16).min(cap) * size;
    let mut end = cap * size;
    match mode % 5 {
        1 => fin = fin.saturating_sub(1),
        2 => core::mem::swap(&mut fin, &mut end),
        3 => end = end.saturating_sub(8),
        _ => {}
    }
    let base = if mode % 5 == 4 { core::ptr::null_mut() } else { storage };
    let mut v = [base, base.wrapping_add(fin), base.wrapping_add(end)];
    let handle = v.as_mut_ptr() as *mut core::ffi::c_void;
    // `handle` points to 24 aligned, writable bytes owned here; an accepted
    // vector's elements lie in `storage` (length and capacity are offsets
    // inside it), which came from the allocator `release` frees with.
    // SAFETY: so the handle is a live std::vector header, as from_handle requires.
    let accepted = match unsafe { MapperComponents::from_handle(handle) } {
        Ok(c) => {
            // The elements the program "pushed" before: initialise them.
            let old = c.len();
            if old > 0 {
                // SAFETY: `old` elements lie inside `storage` (see above).
                unsafe { core::ptr::write_bytes(storage, 0, old * size) };
            }
            for i in 0..usize::from(pushes % 40) {
                let comp = MapComponent { base: i as *mut _, begin: i as *mut _, size: i as i64, ty: 0, name: core::ptr::null_mut() };
                c.push(comp).expect("push into a checked vector");
            }
            assert_eq!(c.len(), old + usize::from(pushes % 40));
            assert_eq!(c.as_slice().len(), c.len());
            c.release();
            true
        }
        Err(_) => false,
    };
    if !accepted && !storage.is_null() {
        // SAFETY: the block allocated above, not taken by a vector.
        unsafe { crate::abi::mapper::allocator().1(storage.cast()) };
    }
}

/// Random sequences of `ol*` calls on the CPU devices, with live, stale and
/// made-up handles, sizes and pointers (the call-sequence fuzz target).
/// Host-side memory is always the harness's own buffers (the header makes
/// the caller guarantee host pointers); everything on the device side may
/// be anything. No call may crash, hang or corrupt memory; every live
/// object is released at the end so executions do not accumulate state.
/// `OMPTARGET_RS_FUZZ_PROGRAM` names a CPU-device program (c-tests/offload's
/// kernel.c built as a shared object); without it no program is loaded.
pub fn ol_calls(data: &[u8]) {
    use crate::c_api::liboffload as ol;
    use crate::liboffload::types::*;
    use core::ffi::c_void;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static PROGRAM: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();
    static CALLED: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn count(_: *mut c_void) {
        CALLED.fetch_add(1, Ordering::Relaxed);
    }
    unsafe extern "C" fn each(d: DeviceH, u: *mut c_void) -> bool {
        let mut ty = 0u32;
        // SAFETY: `d` is a device handle the iteration passes; `ty` holds the 4-byte answer.
        let known = unsafe { crate::c_api::liboffload::olGetDeviceInfo(d, DeviceInfo(0), 4, (&raw mut ty).cast()) }.is_null();
        // SAFETY: `u` is the pair `ol_calls` passes, used only in this call.
        let (devices, host) = unsafe { &mut *(u as *mut (Vec<usize>, usize)) };
        match known && ty == 4 {
            true => *host = d as usize,
            false => devices.push(d as usize),
        }
        true
    }
    let program = PROGRAM.get_or_init(|| std::env::var("OMPTARGET_RS_FUZZ_PROGRAM").ok().and_then(|p| std::fs::read(p).ok()));

    let mut bytes = data.iter().copied();
    let mut next = move || bytes.next();
    // SAFETY: every host pointer passed below is one of this function's buffers with at least the size passed (the header's contract for host memory); handles and device pointers may be anything (the API checks them); launched kernels take no parameters; queued work that reads `host` completes (olSyncQueue / olShutDown) before it is dropped.
    unsafe {
        if !ol::olInit().is_null() {
            return;
        }
        // The devices that own memory, and the virtual host device (host memory).
        let mut found: (Vec<usize>, usize) = (Vec::new(), 0);
        ol::olIterateDevices(Some(each), (&raw mut found).cast());
        let (devices, hostdev) = (found.0, found.1 as DeviceH);
        let mut host = vec![0u8; 1 << 16];
        let pattern = [0x5au8; 64];
        // Argument bytes for launches: large enough for every size the API
        // accepts (32 KiB), so a launch it takes never reads past the buffer;
        // the larger sizes it must refuse before reading anything.
        let args = vec![0u8; 1 << 16];
        // Live and stale objects; a stale one stays in its list (`false`).
        let mut allocs: Vec<(usize, bool)> = Vec::new();
        let mut queues: Vec<(usize, bool)> = Vec::new();
        let mut events: Vec<(usize, bool)> = Vec::new();
        let mut programs: Vec<(usize, bool)> = Vec::new();
        // Symbol handles with whether they may be launched without arguments.
        let mut symbols: Vec<(usize, bool)> = Vec::new();
        let pick = |v: &[(usize, bool)], b: Option<u8>| -> usize {
            match b {
                Some(b) if !v.is_empty() && b < 200 => v[b as usize % v.len()].0,
                Some(b) if b < 230 => 0,
                Some(b) => 0x1000 + b as usize * 8,
                None => 0,
            }
        };
        let size_of = |b: Option<u8>| -> usize {
            match b.unwrap_or(0) {
                s @ 0..=200 => s as usize,
                201..=240 => 4096,
                241..=250 => 1 << 16,
                251 => 1 << 40,
                252 => usize::MAX,
                253 => (1usize << 62) + 1,
                _ => 65,
            }
        };
        let device = |b: Option<u8>| -> DeviceH {
            match b {
                Some(b) if !devices.is_empty() && b < 240 => devices[b as usize % devices.len()] as DeviceH,
                Some(b) => (0x2000 + b as usize * 16) as DeviceH,
                None => std::ptr::null(),
            }
        };
        for _ in 0..64 {
            let Some(op) = next() else { break };
            match op % 20 {
                0 => {
                    let mut p = std::ptr::null_mut();
                    let ty = AllocType(u32::from(next().unwrap_or(1) % 4));
                    if ol::olMemAlloc(device(next()), ty, size_of(next()).min(1 << 20), &mut p).is_null() {
                        allocs.push((p as usize, true));
                    }
                }
                1 => {
                    let p = pick(&allocs, next());
                    if ol::olMemFree(p as *mut c_void).is_null() {
                        allocs.iter_mut().filter(|a| a.0 == p).for_each(|a| a.1 = false);
                    }
                }
                2 | 3 => {
                    // One side the host buffer, the other a device pointer (any).
                    let (q, dev, n) = (pick(&queues, next()), device(next()), size_of(next()).min(host.len()));
                    let d = pick(&allocs, next()).wrapping_add(next().unwrap_or(0) as usize);
                    let r = if op % 20 == 2 {
                        ol::olMemcpy(q as QueueH, d as *mut c_void, dev, host.as_ptr().cast(), hostdev, n)
                    } else {
                        ol::olMemcpy(q as QueueH, host.as_mut_ptr().cast(), hostdev, d as *const c_void, dev, n)
                    };
                    let _ = r;
                    // The host buffer stays valid: queued copies finish before it is dropped (below).
                }
                4 => {
                    let d = pick(&allocs, next()).wrapping_add(next().unwrap_or(0) as usize);
                    let psize = (next().unwrap_or(1) as usize % 64).max(1);
                    let fill = psize * (next().unwrap_or(1) as usize);
                    let _ = ol::olMemFill(pick(&queues, next()) as QueueH, d as *mut c_void, psize, pattern.as_ptr().cast(), fill);
                }
                5 => {
                    let mut q = std::ptr::null();
                    if ol::olCreateQueue(device(next()), &mut q).is_null() {
                        queues.push((q as usize, true));
                    }
                }
                6 => {
                    let q = pick(&queues, next());
                    if ol::olDestroyQueue(q as QueueH).is_null() {
                        queues.iter_mut().filter(|x| x.0 == q).for_each(|x| x.1 = false);
                    }
                }
                7 => {
                    let _ = ol::olSyncQueue(pick(&queues, next()) as QueueH);
                }
                8 => {
                    let mut e = std::ptr::null();
                    if ol::olCreateEvent(pick(&queues, next()) as QueueH, &mut e).is_null() {
                        events.push((e as usize, true));
                    }
                }
                9 => {
                    let e = pick(&events, next());
                    if ol::olDestroyEvent(e as EventH).is_null() {
                        events.iter_mut().filter(|x| x.0 == e).for_each(|x| x.1 = false);
                    }
                }
                10 => {
                    let _ = ol::olSyncEvent(pick(&events, next()) as EventH);
                }
                11 => {
                    let list: Vec<EventH> = (0..next().unwrap_or(0) % 4).map(|_| pick(&events, next()) as EventH).collect();
                    let _ = ol::olWaitEvents(pick(&queues, next()) as QueueH, list.as_ptr(), list.len());
                }
                12 => {
                    let _ = ol::olLaunchHostFunction(pick(&queues, next()) as QueueH, Some(count), std::ptr::null_mut());
                }
                13 => {
                    let (mut v, mut s) = ([0u8; 64], 0usize);
                    let (q, prop) = (pick(&queues, next()) as QueueH, QueueInfo(u32::from(next().unwrap_or(0) % 3)));
                    let _ = ol::olGetQueueInfo(q, prop, size_of(next()).min(64), v.as_mut_ptr().cast());
                    let _ = ol::olGetQueueInfoSize(q, prop, &mut s);
                    let (e, eprop) = (pick(&events, next()) as EventH, EventInfo(u32::from(next().unwrap_or(0) % 3)));
                    let _ = ol::olGetEventInfo(e, eprop, size_of(next()).min(64), v.as_mut_ptr().cast());
                }
                14 => {
                    let mut v = [0u8; 64];
                    let p = pick(&allocs, next()).wrapping_add(next().unwrap_or(0) as usize);
                    let _ = ol::olGetMemInfo(p as *const c_void, MemInfo(u32::from(next().unwrap_or(0) % 5)), 64, v.as_mut_ptr().cast());
                }
                15 => {
                    if let Some(image) = program.as_ref() {
                        let mut p = std::ptr::null();
                        let n = match next() {
                            Some(b) if b > 240 => b as usize,
                            _ => image.len(),
                        };
                        if ol::olCreateProgram(device(next()), image.as_ptr().cast(), n.min(image.len()), &mut p).is_null() {
                            programs.push((p as usize, true));
                        }
                    }
                }
                16 => {
                    let p = pick(&programs, next());
                    if ol::olDestroyProgram(p as ProgramH).is_null() {
                        programs.iter_mut().filter(|x| x.0 == p).for_each(|x| x.1 = false);
                    }
                }
                17 => {
                    const NAMES: [&core::ffi::CStr; 8] = [c"empty", c"bump", c"counter", c"table", c"vadd", c"exit", c"environ", c"nope"];
                    let i = next().unwrap_or(0) as usize % NAMES.len();
                    let mut s = std::ptr::null();
                    let kind = SymbolKind(u32::from(next().unwrap_or(0) % 3));
                    if ol::olGetSymbol(pick(&programs, next()) as ProgramH, NAMES[i].as_ptr(), kind, &mut s).is_null() {
                        // Only `empty` and `bump` take no parameter.
                        symbols.push((s as usize, i < 2));
                    }
                }
                18 => {
                    // Only the kernels that take no pointer may run (a kernel
                    // trusts its arguments); any symbol handle, stale or not.
                    let (k, safe) = match next() {
                        Some(b) if !symbols.is_empty() && b < 220 => symbols[b as usize % symbols.len()],
                        Some(b) => (0x3000 + b as usize, true),
                        None => (0, true),
                    };
                    let dims = |b: Option<u8>| Dimensions { x: u32::from(b.unwrap_or(1) % 3), y: 1, z: 1 };
                    let ls = LaunchSizeArgs {
                        dimensions: next().unwrap_or(1) as usize % 5,
                        num_groups: dims(next()),
                        group_size: dims(next()),
                        dyn_shared_memory: 0,
                    };
                    // A kernel that takes pointers runs only with more than
                    // 256 zero bytes: `vadd`'s count is then 0. Sizes past the
                    // buffer exceed the API's limit and must be refused unread.
                    let n = size_of(next());
                    if safe && n <= 256 {
                        let _ = ol::olLaunchKernel(pick(&queues, next()) as QueueH, device(next()), k as SymbolH, std::ptr::null(), 0, &ls);
                    } else if n > 256 {
                        let _ =
                            ol::olLaunchKernel(pick(&queues, next()) as QueueH, device(next()), k as SymbolH, args.as_ptr().cast(), n, &ls);
                    }
                }
                _ => {
                    let (mut v, mut s) = ([0u8; 256], 0usize);
                    let (d, prop) = (device(next()), DeviceInfo(u32::from(next().unwrap_or(0) % 32)));
                    let _ = ol::olGetDeviceInfo(d, prop, size_of(next()).min(256), v.as_mut_ptr().cast());
                    let _ = ol::olGetDeviceInfoSize(d, prop, &mut s);
                }
            }
        }
        // Release everything (live queues finish their work first, so no
        // queued copy outlives `host`).
        for (q, live) in queues {
            if live {
                let _ = ol::olSyncQueue(q as QueueH);
                let _ = ol::olDestroyQueue(q as QueueH);
            }
        }
        for (e, live) in events {
            if live {
                let _ = ol::olDestroyEvent(e as EventH);
            }
        }
        for (p, live) in programs {
            if live {
                let _ = ol::olDestroyProgram(p as ProgramH);
            }
        }
        for (a, live) in allocs {
            if live {
                let _ = ol::olMemFree(a as *mut c_void);
            }
        }
        // Destroyed queues may still run work that reads `host`.
        let _ = ol::olShutDown();
        drop(host);
    }
}

/// The fuzz entry points on a few inputs each, so that `cargo miri test`
/// checks the unsafe code of the kernel-arguments reader and the mapper
/// vector (c-tests/reliability/miri.sh) and normal test runs keep the harnesses working.
#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel-arguments struct of `version` with `n` arguments, its pointer
    /// fields' low bits set to `mode` (0: the arrays, 1: NULL, 2: misaligned).
    fn kernel_args_input(version: u32, n: u32, mode: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&version.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes());
        for _ in 0..6 {
            b.extend_from_slice(&mode.to_le_bytes());
        }
        b.extend_from_slice(&1000u64.to_le_bytes());
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        for v in [4u32, 0, 1, 128, 0, 1, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.resize(104, 0);
        for i in 0..u64::from(n.min(16)) * 4 {
            b.extend_from_slice(&(0x1000 + i * 8).to_le_bytes());
        }
        b
    }

    #[test]
    fn kernel_args_harness() {
        for version in [0, 1, 2, 3, 4] {
            for n in [0, 1, 3, 9] {
                for mode in [0, 1, 2] {
                    kernel_args(&kernel_args_input(version, n, mode));
                }
            }
        }
        kernel_args(&kernel_args_input(3, u32::MAX, 0));
        kernel_args(&[]);
        kernel_args(&[3, 0, 0, 0, 1]);
    }

    #[test]
    fn mapper_components_harness() {
        for cap in [0u8, 1, 4, 8] {
            for len in [0u8, 1, 4, 9] {
                for mode in 0..5 {
                    for pushes in [0u8, 1, 5] {
                        mapper_components(&[cap, len, mode, pushes]);
                    }
                }
            }
        }
        mapper_components(&[1, 2]);
    }

    #[test]
    fn entries_harness() {
        let mut current = Vec::new();
        for k in 0..3u64 {
            current.extend_from_slice(&0u64.to_le_bytes());
            current.extend_from_slice(&1u16.to_le_bytes());
            current.extend_from_slice(&1u16.to_le_bytes());
            current.extend_from_slice(&0u32.to_le_bytes());
            for v in [0x1000 + 8 * k, 0x2000 + 8 * k, 4, 0, 0] {
                current.extend_from_slice(&v.to_le_bytes());
            }
        }
        entries(&current);
        for cut in [0, 1, 8, 55, 57, current.len() - 1] {
            entries(&current[..cut]);
        }
        let mut legacy = Vec::new();
        for v in [0x1000u64, 0x2001, 4, 0] {
            legacy.extend_from_slice(&v.to_le_bytes());
        }
        entries(&legacy);
    }

    #[test]
    fn image_harnesses_on_small_inputs() {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        let container = crate::base::image::tests::wrap(&elf, "x86_64-unknown-linux-gnu", "");
        for input in [&[][..], &elf[..], &elf[..20], &container[..], &container[..container.len() / 2]] {
            offload_binary(input);
            self::elf(input);
            cuda_image(input);
            amdgpu_image(input);
            program_image(input);
        }
        // msgpack: {"amdhsa.version": [1, 2]}, then truncations and a huge length.
        let note = b"\x81\xaeamdhsa.version\x92\x01\x02";
        for cut in 0..=note.len() {
            amdgpu_msgpack(&note[..cut]);
        }
        amdgpu_msgpack(b"\xdd\xff\xff\xff\xff");
        amdgpu_msgpack(b"\xdf\xff\xff\xff\xff");
    }
}
