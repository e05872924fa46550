//! Registration and lifecycle: `__tgt_register_lib`, `__tgt_unregister_lib`,
//! `__tgt_init_all_rtls`, `__tgt_rtl_init`, `__tgt_rtl_deinit`,
//! `__tgt_register_requires` (abi-reference §1.3.1, §2).

use super::boundary::void_entry;
use crate::abi::ptr::{self, ProgramBytes};
use crate::abi::{__tgt_bin_desc, __tgt_device_image};
use crate::base::error::{OffloadError, Result};
use crate::base::image;
use crate::openmp::{self, entries, registry::DeviceImage};

/// Reads a descriptor into entries and images without keeping raw pointers
/// other than the image ranges the ABI keeps valid until unregistration.
///
/// # Safety
/// `desc` must point to a valid `__tgt_bin_desc` whose tables and images stay
/// valid until it is unregistered.
unsafe fn read_descriptor(desc: *const __tgt_bin_desc) -> Result<(Vec<entries::Entry>, Vec<DeviceImage>)> {
    if desc.is_null() {
        return Err(OffloadError::InvalidArgument("descriptor is NULL".into()));
    }
    if !(desc as usize).is_multiple_of(align_of::<__tgt_bin_desc>()) {
        return Err(OffloadError::InvalidArgument(format!("descriptor at {desc:p} is misaligned")));
    }
    // SAFETY: non-NULL, aligned; validity is the caller's contract.
    let d = unsafe { *desc };
    // SAFETY: the entry table is [HostEntriesBegin, HostEntriesEnd) of the descriptor.
    let table = unsafe { ptr::byte_range(d.HostEntriesBegin as *const u8, d.HostEntriesEnd as *const u8, "host offload-entry table")? };
    if !(table.as_ptr() as usize).is_multiple_of(8) && !table.is_empty() {
        return Err(OffloadError::BadImage("host offload-entry table is not 8-byte aligned".into()));
    }
    let (layout, entries) = entries::parse_entries(table, |p| {
        if p == 0 {
            return Err(OffloadError::BadImage("symbol name is NULL".into()));
        }
        // SAFETY: a non-NULL SymbolName of a compiler-emitted entry is a C string.
        Ok(unsafe { ptr::c_string(p as *const core::ffi::c_char) }.unwrap_or_default())
    })?;
    crate::debug!("descriptor {desc:p}: {} entries ({layout:?} layout)", entries.len());
    let n = usize::try_from(d.NumDeviceImages)
        .map_err(|_| OffloadError::BadImage(format!("NumDeviceImages is negative ({})", d.NumDeviceImages)))?;
    // SAFETY: DeviceImages holds NumDeviceImages records (checked for NULL/alignment).
    let raw_images: &[__tgt_device_image] = unsafe { ptr::slice(d.DeviceImages, n, "device image array")? };
    let mut images = Vec::with_capacity(n);
    for (i, img) in raw_images.iter().enumerate() {
        // SAFETY: the image range stays valid until unregistration (ABI contract).
        let outer = unsafe { ProgramBytes::new(img.ImageStart as *const u8, img.ImageEnd as *const u8, "device image")? };
        let container = match image::parse_offload_binary(outer.as_slice()) {
            Ok(c) => c,
            Err(e) => {
                crate::base::diag::report(&format!("device image {i} of descriptor {desc:p} ignored: {e}"));
                continue;
            }
        };
        crate::debug!(
            "image {i}: {} bytes{}",
            outer.as_slice().len(),
            container.as_ref().map(|c| format!(", OffloadBinary triple '{}' arch '{}'", c.triple, c.arch)).unwrap_or_default()
        );
        images.push(DeviceImage { outer, container });
    }
    Ok((entries, images))
}

/// Registers a library's device images and offload entries.
///
/// # Safety
/// `desc` is NULL or points to a `__tgt_bin_desc` whose tables and images
/// stay valid until `__tgt_unregister_lib(desc)`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_register_lib(desc: *mut __tgt_bin_desc) {
    void_entry("__tgt_register_lib", || {
        // SAFETY: forwarded from this function's contract.
        let (entries, images) = unsafe { read_descriptor(desc)? };
        let rt = openmp::get();
        if entries.is_empty() && images.is_empty() {
            // The all-zero descriptor rustc registers around kernel calls:
            // only a runtime reference.
            rt.init();
            return Ok(());
        }
        rt.register_lib(desc as usize, entries, images)
    })
}

/// Forgets a registered library and drops its runtime reference.
///
/// # Safety
/// `desc` is any pointer; it is only used as a key.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tgt_unregister_lib(desc: *mut __tgt_bin_desc) {
    void_entry("__tgt_unregister_lib", || {
        openmp::get().unregister_lib(desc as usize);
        Ok(())
    })
}

/// Initialises every plugin and device now.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_init_all_rtls() {
    void_entry("__tgt_init_all_rtls", || {
        openmp::get().init_all();
        Ok(())
    })
}

/// One more runtime reference.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_rtl_init() {
    void_entry("__tgt_rtl_init", || {
        openmp::get().init();
        Ok(())
    })
}

/// One runtime reference less.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_rtl_deinit() {
    void_entry("__tgt_rtl_deinit", || {
        openmp::get().deinit();
        Ok(())
    })
}

/// Obsolete in LLVM 22.1: requirements arrive in `.requires` entries.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_register_requires(flags: i64) {
    let _ = flags;
    crate::base::diag::message(
        "The void __tgt_register_requires(int64_t) function has been removed. Old OpenMP requirements will not be handled",
    );
}
