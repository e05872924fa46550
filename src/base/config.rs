//! Configuration parsed once from the environment (abi-reference §8).
//! Variable names and value syntax follow LLVM 22.1 so users' habits carry over.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// Everything the runtime reads from the environment.
#[derive(Debug)]
pub struct Config {
    /// `LIBOMPTARGET_DEBUG`: readable trace on stderr (any value but 0/false/off/no).
    pub debug: bool,
    /// `LIBOMPTARGET_INFO` bit mask; `__tgt_set_info_flag` may change it.
    info: AtomicU32,
    /// `LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS`.
    pub attach_always: bool,
    /// `OMPTARGET_DUMP_OFFLOAD_ENTRIES`: device whose entries are dumped at load.
    pub dump_offload_entries: i64,
    /// `OMP_TARGET_OFFLOAD` as we parse it when libomp is absent.
    pub target_offload_env: Option<i32>,
    /// `OMP_DEFAULT_DEVICE` as we parse it when libomp is absent.
    pub default_device_env: Option<i32>,
    /// `OMPTARGET_RS_HOST_QUEUES=N` (test mode): the host plugin defers
    /// copies and launches to queues whose queries answer "not ready" N times.
    pub host_queues: Option<u32>,
}

/// INFO bits (`OMP_INFOTYPE_*`).
pub mod info {
    pub const KERNEL_ARGS: u32 = 0x01;
    pub const MAPPING_EXISTS: u32 = 0x02;
    pub const DUMP_TABLE: u32 = 0x04;
    pub const MAPPING_CHANGED: u32 = 0x08;
    pub const PLUGIN_KERNEL: u32 = 0x10;
    pub const DATA_TRANSFER: u32 = 0x20;
    pub const EMPTY_MAPPING: u32 = 0x40;
}

/// Reads a boolean the way LLVM does: true/yes/on/1 and false/no/off/0,
/// case-insensitive; anything else keeps the default.
pub fn parse_bool(v: Option<&str>, default: bool) -> bool {
    match v.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("true" | "yes" | "on" | "1") => true,
        Some("false" | "no" | "off" | "0") => false,
        _ => default,
    }
}

/// Reads an integer like C++ stream extraction: an optional sign and the
/// leading decimal digits; garbage gives `None`.
pub fn parse_int(v: &str) -> Option<i64> {
    let s = v.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    let n: i64 = digits[..end].parse().ok()?;
    Some(if neg { -n } else { n })
}

/// `OMP_TARGET_OFFLOAD` in libomp's encoding: 0 disabled, 1 default, 2 mandatory.
pub fn parse_target_offload(v: &str) -> Option<i32> {
    match v.trim().to_ascii_lowercase().as_str() {
        "disabled" => Some(0),
        "default" => Some(1),
        "mandatory" => Some(2),
        _ => None,
    }
}

impl Config {
    fn from_env() -> Self {
        let var = |n: &str| std::env::var(n).ok();
        let debug = var("LIBOMPTARGET_DEBUG").is_some_and(|v| {
            let v = v.trim().to_ascii_lowercase();
            !(v.is_empty() || v == "0" || v == "false" || v == "off" || v == "no")
        });
        // LLVM 22.1 parses LIBOMPTARGET_INFO with std::stoi and crashes on a
        // non-numeric value; we read it as 0 and say so.
        let info = match var("LIBOMPTARGET_INFO") {
            None => 0,
            Some(v) => parse_int(&v).map(|n| n as i32 as u32).unwrap_or_else(|| {
                // diag's MESSAGE format (diag reads this configuration, so it is not called here).
                super::cstream::c_line(
                    super::cstream::CStream::Stderr,
                    format_args!("omptarget message: ignoring LIBOMPTARGET_INFO='{v}': not a decimal number"),
                );
                0
            }),
        };
        crate::base::fast_path::set(crate::base::fast_path::DEBUG, debug);
        crate::base::fast_path::set(crate::base::fast_path::INFO, info != 0);
        // Recording starts at the first allocation (record_replay::alloc).
        crate::base::fast_path::set(crate::base::fast_path::RECORD, parse_bool(var("LIBOMPTARGET_RECORD").as_deref(), false));
        Config {
            debug,
            info: AtomicU32::new(info),
            attach_always: parse_bool(var("LIBOMPTARGET_TREAT_ATTACH_AUTO_AS_ALWAYS").as_deref(), false),
            dump_offload_entries: var("OMPTARGET_DUMP_OFFLOAD_ENTRIES").and_then(|v| parse_int(&v)).unwrap_or(-1),
            target_offload_env: var("OMP_TARGET_OFFLOAD").and_then(|v| parse_target_offload(&v)),
            default_device_env: var("OMP_DEFAULT_DEVICE").and_then(|v| parse_int(&v)).map(|n| n as i32),
            host_queues: var("OMPTARGET_RS_HOST_QUEUES").and_then(|v| parse_int(&v)).map(|n| n.clamp(0, 1 << 20) as u32),
        }
    }

    /// Current INFO mask.
    #[inline]
    pub fn info(&self) -> u32 {
        self.info.load(Ordering::Relaxed)
    }
    /// True when any of `bits` is enabled.
    #[inline]
    pub fn info_on(&self, bits: u32) -> bool {
        self.info() & bits != 0
    }
    /// `__tgt_set_info_flag`.
    pub fn set_info(&self, mask: u32) {
        self.info.store(mask, Ordering::Relaxed);
        crate::base::fast_path::set(crate::base::fast_path::INFO, mask != 0);
    }
}

static CONFIG: LazyLock<Config> = LazyLock::new(Config::from_env);

/// The process-wide configuration, read on first use.
#[inline]
pub fn config() -> &'static Config {
    &CONFIG
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parsing_rules() {
        assert!(parse_bool(Some("YES"), false));
        assert!(!parse_bool(Some("off"), true));
        assert!(parse_bool(Some("maybe"), true));
        assert_eq!(parse_int("16"), Some(16));
        assert_eq!(parse_int("0x10"), Some(0));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int("abc"), None);
        assert_eq!(parse_target_offload("MANDATORY"), Some(2));
    }
}
