//! User-facing output in LLVM 22.1's formats (abi-reference §4.7, §8.5) and
//! the one failure policy. Nothing else in the crate prints to the user or
//! ends the process.

use crate::base::config;
use std::sync::atomic::{AtomicU8, Ordering};

pub use super::cstream::{CStream, c_line, c_write};

/// `LIBOMPTARGET_DEBUG` trace line. Costs one load and branch when off.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => {
        if $crate::base::config().debug {
            $crate::base::diag::debug_line(format_args!($($arg)*));
        }
    };
}

#[doc(hidden)]
pub fn debug_line(args: std::fmt::Arguments<'_>) {
    c_line(CStream::Stderr, format_args!("omptarget-rs debug: {args}"));
}

/// `omptarget message: ...` (MESSAGE).
pub fn message(text: &str) {
    c_line(CStream::Stderr, format_args!("omptarget message: {text}"));
}

/// `omptarget error: ...` (REPORT / FAILURE_MESSAGE).
pub fn report(text: &str) {
    c_line(CStream::Stderr, format_args!("omptarget error: {text}"));
}

/// `"PluginInterface" error: ...` (a plugin's REPORT).
pub fn plugin_error(text: &str) {
    c_line(CStream::Stderr, format_args!("\"PluginInterface\" error: {text}"));
}

/// `omptarget device <d> info: ...` when `bits` are enabled in LIBOMPTARGET_INFO.
#[inline]
pub fn info(bits: u32, device: usize, text: impl FnOnce() -> String) {
    if config().info_on(bits) {
        info_line(device, text);
    }
}

/// The printing half of [`info`], out of line: callers on hot paths keep
/// only the flag test, small enough to be inlined.
#[cold]
#[inline(never)]
fn info_line(device: usize, text: impl FnOnce() -> String) {
    c_line(CStream::Stderr, format_args!("omptarget device {device} info: {}", text()));
}

/// `"PluginInterface" device <d> info: ...` for plugin-level INFO lines.
#[inline]
pub fn plugin_info(bits: u32, device: usize, text: impl FnOnce() -> String) {
    if config().info_on(bits) {
        plugin_info_line(device, text);
    }
}

#[cold]
#[inline(never)]
fn plugin_info_line(device: usize, text: impl FnOnce() -> String) {
    c_line(CStream::Stderr, format_args!("\"PluginInterface\" device {device} info: {}", text()));
}

/// `omptarget fatal error <code>: ...` then `abort()`, optionally prefixed by
/// the source location.
pub fn fatal(code: i64, text: &str) -> ! {
    c_line(CStream::Stderr, format_args!("omptarget fatal error {code}: {text}"));
    std::process::abort()
}

/// The fatal error LLVM raises for a device number out of range.
pub fn fatal_bad_device(device: i64, available: usize) -> ! {
    fatal(device, &format!("\"invalid value\" device number '{device}' out of range, only {available} devices available"))
}

/// The offload policy (`OffloadPolicy`): computed once on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Disabled,
    Mandatory,
}

const UNSET: u8 = 0;
static POLICY: AtomicU8 = AtomicU8::new(UNSET);

/// The policy, computing it on first use from libomp's `OMP_TARGET_OFFLOAD`
/// value (0 disabled, 1 default, 2 mandatory) and the device count: the
/// default becomes mandatory when at least one device exists.
#[inline]
pub fn policy(target_offload: impl FnOnce() -> i32, num_devices: impl FnOnce() -> usize) -> Policy {
    if let Some(p) = policy_if_known() {
        return p;
    }
    policy_first(target_offload, num_devices)
}

/// The policy if it was computed already.
#[inline]
pub fn policy_if_known() -> Option<Policy> {
    match POLICY.load(Ordering::Acquire) {
        1 => Some(Policy::Disabled),
        2 => Some(Policy::Mandatory),
        _ => None,
    }
}

#[cold]
fn policy_first(target_offload: impl FnOnce() -> i32, num_devices: impl FnOnce() -> usize) -> Policy {
    let p = match target_offload() {
        0 => Policy::Disabled,
        2 => Policy::Mandatory,
        _ if num_devices() > 0 => Policy::Mandatory,
        _ => Policy::Disabled,
    };
    POLICY.store(if p == Policy::Disabled { 1 } else { 2 }, Ordering::Release);
    // The configuration is read before the fast-path word can become zero.
    let _ = config();
    crate::base::fast_path::set(crate::base::fast_path::POLICY, p != Policy::Mandatory);
    p
}

/// Formats a pointer the way LLVM's `DPxMOD` does: `0x` + 16 hex digits.
pub fn ptr(p: impl Into<u64>) -> String {
    format!("0x{:016x}", p.into())
}
