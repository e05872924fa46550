//! User-facing output in LLVM 22.1's formats (abi-reference §4.7, §8.5) and
//! the one failure policy. Nothing else in the crate prints to the user or
//! ends the process.

use crate::base::config;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};

/// One of the C library's standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CStream {
    Stdout,
    Stderr,
}

unsafe extern "C" {
    // glibc's standard streams (`FILE *stdout`, `FILE *stderr`).
    static stdout: *mut libc::FILE;
    static stderr: *mut libc::FILE;
}

/// Writes `text` through the C library's `stdout` or `stderr` stream, as
/// LLVM 22.1 does (fprintf), so it lands in the program's order: after what
/// the program printed before and still holds in stdio's buffer (stdout to
/// a pipe or file is fully buffered), and buffered like it. Writing to the
/// file descriptor directly would overtake that text.
pub fn c_write(stream: CStream, text: &str) {
    if text.is_empty() {
        return;
    }
    // SAFETY: reading glibc's stream pointers, initialised before any constructor runs and never changed by us.
    let f = unsafe {
        match stream {
            CStream::Stdout => stdout,
            CStream::Stderr => stderr,
        }
    };
    if f.is_null() {
        return;
    }
    // SAFETY: `f` is a live stdio stream; `text` is valid for `len` bytes; fwrite locks the stream itself.
    unsafe { libc::fwrite(text.as_ptr().cast(), 1, text.len(), f) };
}

/// [`c_write`] of one formatted line (a newline is added).
pub fn c_line(stream: CStream, args: std::fmt::Arguments<'_>) {
    let mut line = String::with_capacity(128);
    let _ = line.write_fmt(args);
    line.push('\n');
    c_write(stream, &line);
}

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
