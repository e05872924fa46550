//! The `omp_*` / `llvm_omp_*` device API (abi-reference §9) over typed
//! arguments. Device numbers: `0..N` are devices, `N` is the initial (host)
//! device, and so is OpenMP 5.2's `omp_initial_device` (-1, which LLVM 22.1
//! rejects as out of range); anything else is LLVM's fatal "invalid value"
//! error.

use super::Runtime;
use super::device::OmpDevice;
use super::mapping::{INF, Lookup, MapEntry};
use crate::base::diag;
use crate::base::error::{OffloadError, Result};
use crate::device::memory::{self, Origin};
use crate::plugins::AllocKind;

/// Where a device number points.
pub enum Target<'a> {
    Host,
    Device(&'a OmpDevice),
}

impl Runtime {
    /// Resolves an API device number; aborts for numbers out of range.
    pub fn api_target(&self, device_num: i64) -> Target<'_> {
        if self.is_api_host(device_num) { Target::Host } else { Target::Device(self.device_or_fatal(device_num)) }
    }

    /// Whether a device routine's number names the host: the initial device
    /// number, or `omp_initial_device` (OpenMP 5.2 §18.8, beyond LLVM 22.1).
    fn is_api_host(&self, device_num: i64) -> bool {
        device_num == self.num_devices() as i64 || device_num == i64::from(crate::abi::OMP_INITIAL_DEVICE)
    }

    /// `omp_target_alloc` and the `llvm_omp_target_alloc_*` forms.
    pub fn target_alloc(&self, size: usize, device_num: i64, kind: AllocKind) -> usize {
        if size == 0 {
            return 0;
        }
        match self.api_target(device_num) {
            // SAFETY: malloc with a non-zero size; NULL is a valid result.
            Target::Host => unsafe { libc::malloc(size) as usize },
            Target::Device(d) => memory::allocate(d, size as u64, kind, Origin::OpenMp).map(|p| p as usize).unwrap_or(0),
        }
    }

    /// `omp_target_free` and the `llvm_omp_target_free_*` forms.
    pub fn target_free(&self, ptr: usize, device_num: i64, kind: AllocKind) {
        if ptr == 0 {
            return;
        }
        match self.api_target(device_num) {
            // SAFETY: the program frees memory omp_target_alloc returned for the host device.
            Target::Host => unsafe { libc::free(ptr as *mut libc::c_void) },
            Target::Device(d) => {
                // The allocation table knows every block `omp_target_alloc`
                // and `olMemAlloc` made, on whichever device: a pointer it
                // does not know (freed already) is never freed again.
                let _ = kind;
                if memory::deallocate(ptr as u64).is_err() {
                    diag::fatal(
                        d.id as i64,
                        "Failed to deallocate device ptr. Set OFFLOAD_TRACK_ALLOCATION_TRACES=1 to track allocations.",
                    );
                }
            }
        }
    }

    /// `omp_target_is_present`.
    pub fn target_is_present(&self, ptr: usize, device_num: i64) -> bool {
        if ptr == 0 {
            return false;
        }
        match self.api_target(device_num) {
            Target::Host => true,
            // With nothing to print (INFO's "Mapping exists" line) a plain
            // look-up answers: no reference to the entry is taken.
            Target::Device(d) if super::data::quiet() => d.table.contains(ptr, 1),
            Target::Device(d) => super::data::get_tgt_ptr_begin(d, ptr, 1, false, false, true, false).entry.is_some(),
        }
    }

    /// `omp_target_is_accessible`.
    pub fn target_is_accessible(&self, ptr: usize, size: usize, device_num: i64) -> bool {
        match self.api_target(device_num) {
            Target::Host => true,
            Target::Device(d) => d.plugin.is_accessible(d.plugin_device, ptr, size as u64),
        }
    }

    /// `omp_target_memcpy`: returns 0 or -1.
    #[allow(clippy::too_many_arguments)] // The OpenMP signature.
    pub fn target_memcpy(&self, dst: usize, src: usize, len: usize, dst_off: usize, src_off: usize, dst_dev: i64, src_dev: i64) -> i32 {
        if len == 0 {
            return 0;
        }
        if dst == 0 || src == 0 {
            diag::report("Call to omp_target_memcpy with invalid arguments");
            return -1;
        }
        let (d, s) = (dst.wrapping_add(dst_off), src.wrapping_add(src_off));
        let r = self.copy(d, s, len as u64, self.api_target(dst_dev), self.api_target(src_dev));
        match r {
            Ok(()) => 0,
            Err(e) => {
                diag::report(&e.to_string());
                -1
            }
        }
    }

    fn copy(&self, dst: usize, src: usize, len: u64, to: Target, from: Target) -> Result<()> {
        match (to, from) {
            (Target::Host, Target::Host) => {
                // SAFETY: both are host buffers of `len` bytes by the API contract.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len as usize) };
                Ok(())
            }
            (Target::Device(d), Target::Host) => {
                if !crate::base::fast_path::allowed() {
                    report_api_copy(d, true, src, dst as u64, len);
                }
                // SAFETY: `src` is a host buffer of `len` bytes by the API contract.
                unsafe { d.submit(dst as u64, src, len) }
            }
            (Target::Host, Target::Device(s)) => {
                if !crate::base::fast_path::allowed() {
                    report_api_copy(s, false, dst, src as u64, len);
                }
                // SAFETY: `dst` is a host buffer of `len` bytes by the API contract.
                unsafe { s.retrieve(dst, src as u64, len) }
            }
            (Target::Device(d), Target::Device(s)) => {
                if std::ptr::addr_eq(d.plugin, s.plugin) {
                    let tool = crate::tools::ompt::on();
                    if tool {
                        crate::tools::ompt::exchange(true, s.id, src as u64, d.id, dst as u64, len);
                    }
                    let r = s.plugin.exchange(s.plugin_device, src as u64, d.plugin_device, dst as u64, len);
                    if tool {
                        crate::tools::ompt::exchange(false, s.id, src as u64, d.id, dst as u64, len);
                    }
                    r
                } else {
                    let mut buf = vec![0u8; len as usize];
                    // SAFETY: `buf` is a live buffer of `len` bytes.
                    unsafe { s.retrieve(buf.as_mut_ptr() as usize, src as u64, len)? };
                    // SAFETY: as above.
                    unsafe { d.submit(dst as u64, buf.as_ptr() as usize, len) }
                }
            }
        }
    }

    /// `omp_target_memcpy_rect`.
    #[allow(clippy::too_many_arguments)] // The OpenMP signature.
    pub fn target_memcpy_rect(
        &self,
        dst: usize,
        src: usize,
        elem: usize,
        volume: &[usize],
        dst_offsets: &[usize],
        src_offsets: &[usize],
        dst_dims: &[usize],
        src_dims: &[usize],
        dst_dev: i64,
        src_dev: i64,
    ) -> i32 {
        let n = volume.len();
        if n == 1 {
            return self.target_memcpy(dst, src, elem * volume[0], elem * dst_offsets[0], elem * src_offsets[0], dst_dev, src_dev);
        }
        let dst_slice: usize = dst_dims[1..].iter().product::<usize>() * elem;
        let src_slice: usize = src_dims[1..].iter().product::<usize>() * elem;
        for i in 0..volume[0] {
            let rc = self.target_memcpy_rect(
                dst.wrapping_add(dst_slice * (dst_offsets[0] + i)),
                src.wrapping_add(src_slice * (src_offsets[0] + i)),
                elem,
                &volume[1..],
                &dst_offsets[1..],
                &src_offsets[1..],
                &dst_dims[1..],
                &src_dims[1..],
                dst_dev,
                src_dev,
            );
            if rc != 0 {
                return rc;
            }
        }
        0
    }

    /// `omp_target_memset`.
    pub fn target_memset(&self, ptr: usize, value: i32, len: usize, device_num: i64) {
        if ptr == 0 || len == 0 {
            return;
        }
        match self.api_target(device_num) {
            // SAFETY: a host buffer of `len` bytes by the API contract.
            Target::Host => unsafe { std::ptr::write_bytes(ptr as *mut u8, value as u8, len) },
            Target::Device(d) => {
                if let Err(e) = d.plugin.memset(d.plugin_device, ptr as u64, value as u8, len as u64) {
                    diag::report(&e.to_string());
                }
            }
        }
    }

    /// `omp_target_associate_ptr`.
    pub fn associate_ptr(&self, host: usize, dev_ptr: usize, size: usize, dev_off: usize, device_num: i64) -> i32 {
        if host == 0 || dev_ptr == 0 {
            diag::report("Call to omp_target_associate_ptr with invalid arguments");
            return -1;
        }
        let Target::Device(d) = self.api_target(device_num) else {
            diag::report("omp_target_associate_ptr: no association possible on the host");
            return -1;
        };
        let tgt = dev_ptr.wrapping_add(dev_off) as u64;
        // 22.1 reports the association on the device before it looks the
        // host pointer up: failing re-associations are reported too.
        let tool = crate::tools::ompt::on();
        if tool {
            crate::tools::ompt::associate(true, true, d.id as i64, host, tgt as usize, size as u64);
        }
        let rc = Self::associate_in(d, host, tgt, size);
        if tool {
            crate::tools::ompt::associate(false, true, d.id as i64, host, tgt as usize, size as u64);
        }
        rc
    }

    fn associate_in(d: &OmpDevice, host: usize, tgt: u64, size: usize) -> i32 {
        match d.table.lookup(host, size as u64) {
            Lookup::Contained(e) | Lookup::Extends(e) => {
                if e.host_begin == host && e.tgt_begin == tgt {
                    return 0;
                }
                diag::report("Not allowed to re-associate a different device ptr+offset with the same host ptr");
                crate::debug!(
                    "existing entry: host [{:#x}, {:#x}) -> device {:#x}, DynRefCount={}",
                    e.host_begin,
                    e.host_end,
                    e.tgt_begin,
                    e.dyn_count()
                );
                -1
            }
            Lookup::NotFound => {
                d.table.insert(MapEntry::new_permanent(host, size as u64, tgt, 0));
                0
            }
        }
    }

    /// `omp_target_disassociate_ptr`.
    pub fn disassociate_ptr(&self, host: usize, device_num: i64) -> i32 {
        let Target::Device(d) = self.api_target(device_num) else {
            diag::report("omp_target_disassociate_ptr: no association possible on the host");
            return -1;
        };
        // 22.1 reports the disassociation before its checks (failing ones too);
        // no device pointer and no size.
        let tool = crate::tools::ompt::on();
        if tool {
            crate::tools::ompt::associate(true, false, d.id as i64, host, 0, 0);
        }
        let rc = Self::disassociate_in(d, host);
        if tool {
            crate::tools::ompt::associate(false, false, d.id as i64, host, 0, 0);
        }
        rc
    }

    fn disassociate_in(d: &OmpDevice, host: usize) -> i32 {
        let Lookup::Contained(e) = d.table.lookup(host, 0) else {
            diag::report("Association not found");
            return -1;
        };
        if e.host_begin != host {
            diag::report("Association not found");
            return -1;
        }
        if e.hold_count() != 0 {
            diag::report("Trying to disassociate a pointer with a non-zero hold reference count");
            return -1;
        }
        if e.dyn_count() != INF {
            diag::report("Trying to disassociate a pointer which was not mapped via omp_target_associate_ptr");
            return -1;
        }
        d.table.remove(&e);
        0
    }

    /// `omp_get_mapped_ptr`.
    pub fn get_mapped_ptr(&self, ptr: usize, device_num: i64) -> usize {
        if ptr == 0 {
            diag::report("Call to omp_get_mapped_ptr with nullptr.");
            return 0;
        }
        if self.is_api_host(device_num) {
            return ptr;
        }
        if device_num > self.num_devices() as i64 {
            return 0;
        }
        let d = self.device_or_fatal(device_num);
        if !super::data::quiet() {
            // 22.1's look-up prints its "Mapping exists" INFO line here too.
            let r = super::data::get_tgt_ptr_begin(d, ptr, 1, false, false, true, false);
            return if r.entry.is_some() { r.tgt as usize } else { 0 };
        }
        match d.table.lookup(ptr, 1) {
            Lookup::Contained(e) => e.tgt_of(ptr) as usize,
            _ => 0,
        }
    }

    /// `omp_get_uid_from_device`.
    pub fn uid_of(&self, device_num: i64) -> String {
        match self.api_target(device_num) {
            Target::Host => "HOST".into(),
            Target::Device(d) => d.plugin.uid(d.plugin_device),
        }
    }

    /// `omp_get_device_from_uid`.
    pub fn device_of_uid(&self, uid: &str) -> i32 {
        if uid == "HOST" {
            return self.num_devices() as i32;
        }
        self.devices
            .all()
            .iter()
            .find(|d| d.plugin.uid(d.plugin_device) == uid)
            .map(|d| d.id as i32)
            .unwrap_or(crate::abi::OMP_INVALID_DEVICE)
    }

    /// `__tgt_print_device_info`.
    pub fn print_device_info(&self, device_num: i64) -> Result<()> {
        match self.api_target(device_num) {
            Target::Host => Err(OffloadError::NoSuchDevice { device: device_num, available: self.num_devices() }),
            Target::Device(d) => {
                crate::base::diag::c_write(crate::base::diag::CStream::Stdout, &d.plugin.device_info(d.plugin_device));
                Ok(())
            }
        }
    }
}

/// 22.1's INFO line for a copy between the host and a device made by the
/// memory API (`omp_target_memcpy`): its data path has no mapping at hand,
/// so the line names the mapping its look-up of the host range lands on
/// ([`super::launch::copy_name`]).
#[cold]
#[inline(never)]
fn report_api_copy(dev: &OmpDevice, to_device: bool, host: usize, tgt: u64, len: u64) {
    diag::info(crate::base::config::info::DATA_TRANSFER, dev.id, || {
        let name = super::launch::copy_name(dev, host);
        if to_device {
            format!(
                "Copying data from host to device, HstPtr={}, TgtPtr={}, Size={len}, Name={name}",
                diag::ptr(host as u64),
                diag::ptr(tgt)
            )
        } else {
            format!(
                "Copying data from device to host, TgtPtr={}, HstPtr={}, Size={len}, Name={name}",
                diag::ptr(tgt),
                diag::ptr(host as u64)
            )
        }
    });
}

/// `omp_target_alloc` on a device that is ready, with nothing traced or
/// recorded ([`crate::base::fast_path`]): the plugin's plain allocation, which is
/// what the general path ends in. 0, having done nothing, for anything
/// else (size 0, the initial device, a device still to be set up, a plugin
/// without the path, a failed allocation): the general path answers.
#[inline(always)]
pub fn alloc_fast(size: usize, device_num: i64) -> usize {
    match fast_device(device_num) {
        Some(dev) if size != 0 => match dev.plugin.alloc_plain(dev.plugin_device, size as u64) {
            Some(p) => {
                if !memory::record_plain(p, size as u64, dev.id) {
                    memory::record(memory::Allocation {
                        base: p,
                        size: size as u64,
                        device: dev.id,
                        kind: AllocKind::Default,
                        origin: memory::Origin::OpenMp,
                    });
                }
                p as usize
            }
            None => 0,
        },
        _ => 0,
    }
}

/// The device an allocation fast path may serve: ready, with nothing
/// traced or recorded ([`crate::base::fast_path`]).
#[inline(always)]
fn fast_device(device_num: i64) -> Option<&'static OmpDevice> {
    if !crate::base::fast_path::allowed() {
        return None;
    }
    super::get().device_ready(device_num)
}

/// `omp_target_free` of a block the allocation table records as an
/// OpenMP allocation of default memory on `device_num`, with nothing traced
/// or recorded and no liboffload queue busy (`fast_path::QUEUED_WORK`): the block leaves the table and goes to the plugin's plain
/// free, which is what the general path ends in. False, having done
/// nothing, for anything else (NULL, another device or kind, a block
/// allocated through ol*, a pointer the table does not know): the general
/// path answers.
#[inline(always)]
pub fn free_fast(ptr: usize, device_num: i64) -> bool {
    if !crate::base::fast_path::allowed() || ptr == 0 {
        return false;
    }
    // A negative device number becomes an id no table entry carries (the
    // entries' device field is far narrower), so `take_plain` refuses it.
    let id = device_num as usize;
    let Some(size) = memory::take_plain(ptr as u64, id) else { return false };
    // The table names only exposed devices.
    if let Some(dev) = crate::device::get(id)
        && dev.plugin.free_plain(dev.plugin_device, ptr as u64, size)
    {
        return true;
    }
    memory::put_back(memory::Allocation { base: ptr as u64, size, device: id, kind: AllocKind::Default, origin: memory::Origin::OpenMp });
    false
}
