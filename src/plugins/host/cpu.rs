//! What the host plugin's devices are: the machine's CPU, as `/proc/cpuinfo`
//! and `sysconf` describe it (read once).

use crate::plugins::{DeviceProperties, DeviceType};
use parking_lot::Mutex;
use std::sync::OnceLock;

static CPU: OnceLock<DeviceProperties> = OnceLock::new();
/// Held while [`CPU`] is created, so a fork never copies its initialisation
/// half done (the plugin's fork participation takes it).
pub(super) static CPU_INIT: Mutex<()> = Mutex::new(());

/// The CPU's properties; every host device has the same.
pub fn properties() -> &'static DeviceProperties {
    if let Some(c) = CPU.get() {
        return c;
    }
    let _creating = CPU_INIT.lock();
    CPU.get_or_init(read)
}

fn read() -> DeviceProperties {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| text.lines().find_map(|l| l.split_once(':').filter(|(a, _)| a.trim() == k).map(|(_, b)| b.trim().to_owned()));
    let raw_vendor = field("vendor_id").unwrap_or_default();
    let (vendor, vendor_id) = match raw_vendor.as_str() {
        "AuthenticAMD" => ("AMD".to_owned(), 0x1022),
        "GenuineIntel" => ("Intel".to_owned(), 0x8086),
        other => (other.to_owned(), 0),
    };
    // SAFETY: sysconf has no memory-safety preconditions.
    let (pages, page, cores) =
        unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE), libc::sysconf(libc::_SC_NPROCESSORS_ONLN)) };
    let mhz = field("cpu MHz").and_then(|m| m.parse::<f64>().ok()).map_or(0, |m| m as u32);
    DeviceProperties {
        device_type: DeviceType::Cpu,
        name: field("model name").unwrap_or_else(|| "x86-64 CPU".into()),
        product: String::new(),
        vendor,
        vendor_id,
        driver_version: concat!("omptarget-rs ", env!("CARGO_PKG_VERSION")).into(),
        // A host kernel runs once, on one thread: one work item.
        max_group_size: 1,
        max_group_dims: [1; 3],
        max_groups: [1; 3],
        compute_units: cores.max(1) as u32,
        clock_mhz: mhz,
        memory_clock_mhz: 0,
        address_bits: 64,
        global_memory: (pages.max(0) as u64).saturating_mul(page.max(0) as u64),
        local_memory: 0,
        simd_width: 1,
        // 16-byte SSE2 vectors: char, short, int, long, float, double; no native half.
        vector_widths: [16, 8, 4, 2, 4, 2, 0],
    }
}
