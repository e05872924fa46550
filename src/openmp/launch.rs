//! Kernel launch (`__tgt_target_kernel`, abi-reference §4.6, §5.1, §6.11):
//! map the arguments, build the kernel's parameter list (implicit `dyn_ptr`
//! first for Version >= 3), launch, then unmap and free private copies.

use super::Runtime;
use super::async_info::AsyncInfo;
use super::data::{self, BeginState, MapArg};
use super::device::OmpDevice;
use crate::abi::MapType;
use crate::base::config::info;
use crate::base::diag;
use crate::base::error::Result;
use crate::plugins::{AllocKind, LaunchDims};

/// A launch request, already upgraded to the Version 3 view. The argument
/// list lives in the caller's frame (it is rewritten by the mapping steps).
#[derive(Debug)]
pub struct LaunchRequest<'a> {
    pub version: u32,
    pub args: &'a mut [MapArg],
    pub tripcount: u64,
    pub flags: u64,
    pub num_teams: [u32; 3],
    pub thread_limit: [u32; 3],
    pub dyn_cgroup_mem: u32,
}

/// What the launch did, for write-backs into the caller's struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchOutcome {
    /// Number of kernel parameters incl. `dyn_ptr` (LLVM writes it into `NumArgs`).
    pub kernel_params: u32,
}

/// 22.1's order: the motion bits win, so a `firstprivate` array
/// (`PRIVATE|TO`) is listed as `to`, a scalar (`LITERAL`) as `firstprivate`.
fn arg_kind(t: MapType, size: i64) -> &'static str {
    if t.any(MapType::ATTACH) {
        "attach"
    } else if t.has(MapType::TO | MapType::FROM) {
        "tofrom"
    } else if t.any(MapType::TO) {
        "to"
    } else if t.any(MapType::FROM) {
        "from"
    } else if t.any(MapType::PRIVATE) {
        "private"
    } else if t.any(MapType::LITERAL) {
        "firstprivate"
    } else if size != 0 {
        "alloc"
    } else {
        "use_address"
    }
}

/// LIBOMPTARGET_INFO data-transfer lines for a kernel's firstprivate copies
/// (corresponding-pointer initialisations included) as 22.1 prints them: it
/// copies an item larger than 1024 bytes, or one followed by a member entry,
/// on its own, and packs the others into one host buffer sent once after all
/// arguments, each aligned like its host address (at most 16) after the
/// previous one. Ours copies each item on its own; only the report follows
/// 22.1. Built only while the INFO bit is on.
struct PrivateCopyInfo {
    dev_id: usize,
    /// Alignment and size of the last packed item, and the packed size.
    last: Option<(u64, u64)>,
    packed: u64,
    /// Device address of the first packed item.
    first: Option<u64>,
}

impl PrivateCopyInfo {
    const PACK_LIMIT: u64 = 1024;
    const MAX_ALIGN: u64 = 16;

    fn new(dev_id: usize) -> Self {
        PrivateCopyInfo { dev_id, last: None, packed: 0, first: None }
    }

    /// One firstprivate item of `size` bytes at host `host`, copied to `tgt`.
    fn item(&mut self, dev: &OmpDevice, host: usize, tgt: u64, size: u64, alone: bool) {
        if alone || size > Self::PACK_LIMIT {
            let name = copy_name(dev, host);
            diag::info(info::DATA_TRANSFER, self.dev_id, || {
                format!(
                    "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={size}, Name={name}",
                    diag::ptr(host as u64),
                    diag::ptr(tgt)
                )
            });
            return;
        }
        let mut padding = 0;
        let mut align = Self::MAX_ALIGN;
        if let Some((last_align, last_size)) = self.last {
            align = last_align;
            let rest = last_size % align;
            if rest != 0 {
                align = rest;
            }
            let host_align = if host == 0 { Self::MAX_ALIGN } else { (1u64 << host.trailing_zeros().min(63)).min(Self::MAX_ALIGN) };
            let required = 1u64 << (63 - host_align.leading_zeros());
            if required > align {
                padding = required - align;
                align = required;
            }
        }
        self.last = Some((align, size));
        self.packed += padding + size;
        self.first.get_or_insert(tgt);
    }

    /// The packed buffer's copy, after all arguments. 22.1's buffer is a heap
    /// allocation and the report names the mapping nearest to it: a heap
    /// block of the packed size stands in for it here.
    fn finish(self, dev: &OmpDevice) {
        if let Some(tgt) = self.first {
            let size = self.packed;
            let buffer = vec![0u8; size as usize];
            let host = buffer.as_ptr() as usize;
            let name = copy_name(dev, host);
            diag::info(info::DATA_TRANSFER, self.dev_id, || {
                format!(
                    "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={size}, Name={name}",
                    diag::ptr(host as u64),
                    diag::ptr(tgt)
                )
            });
        }
    }
}

/// The name 22.1's copy report gives a copy it makes without a mapping at
/// hand: its `lookupMapping` keeps the left neighbour of the host range when
/// that contains the range's start, else the right neighbour if any, else
/// the left one; the report names that entry (`unknown` without one or
/// without a name). So a firstprivate copy is named after a nearby mapping.
pub(super) fn copy_name(dev: &OmpDevice, host: usize) -> String {
    let all = dev.table.snapshot();
    let right = all.partition_point(|e| e.host_begin <= host);
    let left = right.checked_sub(1).map(|i| &all[i]);
    let chosen = match left {
        Some(l) if host < l.host_end => Some(l),
        _ => all.get(right).or(left),
    };
    match chosen {
        Some(e) if e.name != 0 => {
            // SAFETY: mapping names are compiler-emitted static strings.
            unsafe { crate::abi::ptr::var_info(e.name) }.0
        }
        _ => "unknown".to_string(),
    }
}

/// Prints the INFO 0x1 argument list (the header is built only when on).
#[inline(always)] // The flag test in the caller: the closure is built only when on.
pub fn print_args(dev_id: usize, header: impl FnOnce() -> String, args: &[MapArg]) {
    if super::info_kernel_args() {
        print_args_on(dev_id, header, args);
    }
}

#[cold]
#[inline(never)]
fn print_args_on(dev_id: usize, header: impl FnOnce() -> String, args: &[MapArg]) {
    diag::info(info::KERNEL_ARGS, dev_id, header);
    for a in args {
        // SAFETY: names are compiler-emitted static strings (or 0).
        let (name, _) = unsafe { crate::abi::ptr::var_info(a.name) };
        let implicit = if a.ty.any(MapType::IMPLICIT) { "(implicit)" } else { "" };
        diag::info(info::KERNEL_ARGS, dev_id, || format!("{}({name})[{}] {implicit}", arg_kind(a.ty, a.size), a.size));
    }
}

impl Runtime {
    /// `target()`: run one target region on the context's device. Errors
    /// have been reported. On a plugin with queues the work is queued on `q`;
    /// the caller synchronises it (or hands it to the task for `nowait`).
    pub fn launch(&self, q: &mut AsyncInfo, region_id: usize, req: &mut LaunchRequest<'_>) -> Result<LaunchOutcome> {
        let dev = q.dev;
        let kernel = self.kernel(dev, region_id).inspect_err(|e| diag::report(&e.to_string()))?;
        let has_args = !req.args.is_empty();
        let mut params: smallvec::SmallVec<[u64; 16]> = smallvec::SmallVec::new();
        if req.version >= crate::abi::KERNEL_ARGS_MIN_VERSION_WITH_DYN_PTR && req.flags & crate::abi::KERNEL_FLAG_IS_CUDA == 0 {
            // No kernel environment with reductions on the host: LLVM passes ~0.
            params.push(u64::MAX);
        }
        if has_args && req.flags & crate::abi::KERNEL_FLAG_STRICT_BLOCKS != 0 {
            self.check_rustc_kernel_device(dev, req).inspect_err(|e| diag::report(&e.to_string()))?;
        }
        if has_args {
            let mut st = BeginState::for_args(req.args);
            data::data_begin(self, dev, req.args, false, &mut st, q).and_then(|_| data::process_attach(dev, &st, q)).inspect_err(|_| {
                diag::report("Call to targetDataBegin failed, abort target.");
                diag::report("Failed to process data before launching the kernel.");
            })?;
            // The INFO report of firstprivate copies in a copy of its own:
            // without it the argument loop carries no report state.
            let built = if crate::base::config().info_on(info::DATA_TRANSFER) {
                self.kernel_params::<true>(q, req, &mut params)
            } else {
                self.kernel_params::<false>(q, req, &mut params)
            };
            built.inspect_err(|_| diag::report("Failed to process data before launching the kernel."))?;
        }
        let dims =
            LaunchDims { teams: req.num_teams, threads: req.thread_limit, dyn_shared_bytes: req.dyn_cgroup_mem, tripcount: req.tripcount };
        let record = crate::device::record_memory::recording(dev.id);
        if record {
            // The snapshot needs the construct's copies on the device.
            q.drain()
                .and_then(|_| super::record_replay::before_launch(self, dev, region_id, kernel.name, &params, &dims))
                .inspect_err(|e| diag::report(&format!("Recording kernel {} failed: {e}", kernel.name)))?;
        }
        let launched = if crate::tools::ompt::hooks() {
            let report = crate::device::queue::LaunchReport {
                name: kernel.name,
                num_teams: req.num_teams,
                thread_limit: req.thread_limit,
                nargs: req.args.len(),
                tripcount: req.tripcount,
            };
            q.launch_reported(kernel.handle, &params, &dims, &report)
        } else {
            q.launch(kernel.handle, kernel.name, &params, &dims)
        };
        launched.inspect_err(|e| {
            diag::report(&e.to_string());
            diag::report("Executing target region abort target.");
        })?;
        if record {
            q.drain()
                .and_then(|_| super::record_replay::after_launch(dev, kernel.name))
                .inspect_err(|e| diag::report(&format!("Recording the output of kernel {} failed: {e}", kernel.name)))?;
        }
        if has_args {
            let mut post = data::EndQueue::new();
            data::data_end(dev, req.args, false, &mut post, q).and_then(|_| data::finish_end_queue(q, &mut post)).inspect_err(|_| {
                diag::report("Call to targetDataEnd failed, abort target.");
                diag::report("Failed to process data after launching the kernel.");
            })?;
        }
        // LLVM writes the number of parameters passed, `dyn_ptr` included.
        Ok(LaunchOutcome { kernel_params: params.len() as u32 })
    }

    /// rustc's sequence (`Flags` bit 6) maps its data with the begin and end
    /// mappers on device -1 (the default device) and gives the kernel only
    /// `TARGET_PARAM` for its pointers. When the kernel goes to another
    /// device, such an argument is not mapped there: 22.1 would allocate
    /// fresh device memory for it (nothing copied in, nothing back), so the
    /// kernel computes on uninitialised memory and its results are lost, on
    /// GPUs and on the host plugin's devices alike (each has memory of its
    /// own). That is an error here, naming the argument and the devices.
    /// Only for bit 6: clang never sets it, and OpenMP's `map(alloc:)` on
    /// another device keeps its meaning.
    #[cold]
    fn check_rustc_kernel_device(&self, dev: &OmpDevice, req: &LaunchRequest<'_>) -> Result<()> {
        use super::mapping::Lookup;
        let motion = MapType::TO | MapType::FROM | MapType::LITERAL | MapType::PRIVATE;
        for (i, a) in req.args.iter().enumerate() {
            if !a.ty.any(MapType::TARGET_PARAM) || a.ty.any(motion) || a.size <= 0 || a.begin == 0 {
                continue;
            }
            let size = a.size as u64;
            if !matches!(dev.table.lookup(a.begin, size), Lookup::NotFound) {
                continue;
            }
            let Some(other) = (0..self.num_devices())
                .filter(|&o| o != dev.id)
                .find(|&o| self.devices.get(o).is_some_and(|d| !matches!(d.table.lookup(a.begin, size), Lookup::NotFound)))
            else {
                continue;
            };
            return Err(crate::base::error::OffloadError::InvalidArgument(format!(
                "kernel argument {i} (host {:#x}, {size} bytes) is mapped on device {other}, where the data mappers put it, \
                 but the kernel runs on device {}: it would compute on uninitialised memory there and its results would be lost; \
                 pass the kernel's device to __tgt_target_data_begin_mapper/end_mapper too",
                a.begin, dev.id
            )));
        }
        Ok(())
    }

    /// Builds one parameter per `TARGET_PARAM` entry (§5.1).
    /// `REPORT`: INFO's data-transfer lines for the firstprivate copies.
    fn kernel_params<const REPORT: bool>(
        &self,
        q: &mut AsyncInfo,
        req: &LaunchRequest<'_>,
        params: &mut smallvec::SmallVec<[u64; 16]>,
    ) -> Result<()> {
        let dev = q.dev;
        // The parameter value produced for each entry (device base address).
        // Only lambda captures read the values of other entries: the list is
        // built (and its inline array written) only for constructs with one.
        let lambda = |t: MapType| {
            !t.any(MapType::TARGET_PARAM) && t.has(MapType::PTR_AND_OBJ | MapType::LITERAL | MapType::IMPLICIT) && t.member_of().is_some()
        };
        let mut value_of: smallvec::SmallVec<[Option<u64>; 16]> =
            if req.args.iter().any(|a| lambda(a.ty)) { smallvec::smallvec![None; req.args.len()] } else { smallvec::SmallVec::new() };
        // Read once for the whole list, not per argument.
        let info_exists = crate::base::config().info_on(info::MAPPING_EXISTS);
        let mut copies = REPORT.then(|| PrivateCopyInfo::new(dev.id));
        for (i, a) in req.args.iter().enumerate() {
            let t = a.ty;
            if !t.any(MapType::TARGET_PARAM) {
                if t.has(MapType::PTR_AND_OBJ | MapType::LITERAL | MapType::IMPLICIT)
                    && let Some(parent) = t.member_of()
                {
                    patch_lambda_capture(q, req, i, parent, &value_of)?;
                }
                continue;
            }
            let value = if t.any(MapType::LITERAL) {
                a.base as u64
            } else if t.any(MapType::PRIVATE) {
                let size = a.size.max(0) as u64;
                let offset = a.base.wrapping_sub(a.begin) as u64;
                let p = dev.alloc_for(size.max(1), AllocKind::Default, a.begin)?;
                // Freed once the kernel (or the context's queue) completed.
                q.free_after_launch(p);
                if let Some(c) = copies.as_mut()
                    && t.any(MapType::TO | MapType::ATTACH)
                {
                    // 22.1 allocates an item followed by a member entry on its own.
                    let alone = req.args.get(i + 1).is_some_and(|n| n.ty.member_of().is_some());
                    let host = if t.any(MapType::ATTACH) { a.base } else { a.begin };
                    c.item(dev, host, p, size, alone);
                }
                if t.any(MapType::ATTACH) {
                    // Corresponding-pointer initialisation: the device pointee base.
                    let host_base = read_ptr(a.base);
                    let value = match dev.table.lookup(a.begin, 0) {
                        super::mapping::Lookup::Contained(e) => e.tgt_of(a.begin).wrapping_sub(a.begin.wrapping_sub(host_base) as u64),
                        _ => host_base as u64,
                    };
                    q.write_u64(p, value)?;
                    p
                } else {
                    if t.any(MapType::TO) && size > 0 {
                        // SAFETY: a firstprivate list item of `size` bytes the program keeps valid.
                        unsafe { q.submit(p, a.begin, size)? };
                    }
                    p.wrapping_add(offset)
                }
            } else {
                let offset = if t.any(MapType::PTR_AND_OBJ) {
                    read_ptr(a.base).wrapping_sub(a.begin) as u64
                } else {
                    a.base.wrapping_sub(a.begin) as u64
                };
                // The begin step already found the entry; look it up again
                // only when LLVM's INFO line for that lookup is wanted.
                match a.resolved {
                    Some(tgt) if !info_exists => tgt.wrapping_add(offset),
                    _ => {
                        let r = data::get_tgt_ptr_begin(dev, a.begin, a.size.max(0) as u64, false, false, false, false);
                        r.tgt.wrapping_add(offset)
                    }
                }
            };
            if let Some(v) = value_of.get_mut(i) {
                *v = Some(value);
            }
            params.push(value);
        }
        if let Some(c) = copies {
            c.finish(dev);
        }
        Ok(())
    }
}

/// Lambda capture (`PTR_AND_OBJ|LITERAL|IMPLICIT` with MEMBER_OF): write the
/// device address of the captured variable into the device copy of the
/// lambda object (the parent's kernel argument), at the capture's offset.
/// An unmapped capture is left alone, as in LLVM.
fn patch_lambda_capture(q: &mut AsyncInfo, req: &LaunchRequest<'_>, i: usize, parent: usize, value_of: &[Option<u64>]) -> Result<()> {
    let (Some(a), Some(p), Some(Some(parent_dev))) = (req.args.get(i), req.args.get(parent), value_of.get(parent)) else {
        return Ok(());
    };
    let slot = parent_dev.wrapping_add(a.base.wrapping_sub(p.begin) as u64);
    let r = data::get_tgt_ptr_begin(q.dev, a.begin, a.size.max(0) as u64, false, false, false, false);
    let Some(entry) = r.entry.as_ref() else {
        crate::debug!("lambda capture at {:#x} is not mapped; left as is", a.begin);
        return Ok(());
    };
    // 22.1 sends the device address through its data path: INFO reports it.
    diag::info(info::DATA_TRANSFER, q.dev.id, || {
        let name = if entry.name == 0 {
            "unknown".to_string()
        } else {
            // SAFETY: mapping names are compiler-emitted static strings.
            unsafe { crate::abi::ptr::var_info(entry.name) }.0
        };
        format!(
            "Copying data from host to device, HstPtr={}, TgtPtr={}, Size=8, Name={name}",
            diag::ptr(&r.tgt as *const u64 as u64),
            diag::ptr(slot)
        )
    });
    q.write_u64(slot, r.tgt)
}

fn read_ptr(addr: usize) -> usize {
    if addr == 0 || !addr.is_multiple_of(align_of::<usize>()) {
        return 0;
    }
    // SAFETY: `addr` is the address of a pointer variable named by a PTR_AND_OBJ / ATTACH entry, valid for the construct.
    unsafe { (addr as *const usize).read() }
}
