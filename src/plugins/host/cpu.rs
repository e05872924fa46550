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
    // SAFETY: sysconf only reads a system setting by name: no pointers, no memory-safety preconditions.
    let sysconf = |name| unsafe { libc::sysconf(name) };
    let (pages, page, cores) = (sysconf(libc::_SC_PHYS_PAGES), sysconf(libc::_SC_PAGESIZE), sysconf(libc::_SC_NPROCESSORS_ONLN));
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
        memory_clock_mhz: memory_clock_mhz(),
        address_bits: 64,
        global_memory: (pages.max(0) as u64).saturating_mul(page.max(0) as u64),
        local_memory: 0,
        simd_width: 1,
        // 16-byte SSE2 vectors: char, short, int, long, float, double; no native half.
        vector_widths: [16, 8, 4, 2, 4, 2, 0],
    }
}

/// The memory clock in MHz from the firmware's SMBIOS memory-device records
/// (type 17, `/sys/firmware/dmi/entries/17-*/raw`): the configured speed
/// (or, before SMBIOS 2.7, the maximum) in MT/s of the fastest module, halved
/// (DDR moves two transfers per clock). 0 when the records are absent or not
/// readable (virtual machines, containers, unprivileged processes): the clock
/// is then unknown, and no value is made up.
fn memory_clock_mhz() -> u32 {
    let Ok(dir) = std::fs::read_dir("/sys/firmware/dmi/entries") else { return 0 };
    let mut best = 0u32;
    for entry in dir.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("17-") {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("raw")) else { continue };
        best = best.max(smbios_memory_speed(&raw));
    }
    best / 2
}

/// The speed in MT/s of one SMBIOS type-17 record (0: none stated).
fn smbios_memory_speed(raw: &[u8]) -> u32 {
    let word = |at: usize| raw.get(at..at + 2).map_or(0, |b| u32::from(u16::from_le_bytes([b[0], b[1]])));
    if raw.first() != Some(&17) {
        return 0;
    }
    let formatted_len = raw.get(1).copied().unwrap_or(0) as usize;
    // Configured speed at 0x20 (SMBIOS 2.7+), else the maximum at 0x15.
    let configured = if formatted_len > 0x21 { word(0x20) } else { 0 };
    let speed = if configured != 0 && configured != 0xffff {
        configured
    } else if formatted_len > 0x16 {
        word(0x15)
    } else {
        0
    };
    if speed == 0xffff { 0 } else { speed }
}

#[cfg(test)]
mod tests {
    use super::smbios_memory_speed;

    #[test]
    fn reads_the_speed_of_a_memory_device_record() {
        let mut rec = vec![0u8; 0x28];
        rec[0] = 17;
        rec[1] = 0x28;
        rec[0x15..0x17].copy_from_slice(&3200u16.to_le_bytes());
        assert_eq!(smbios_memory_speed(&rec), 3200);
        rec[0x20..0x22].copy_from_slice(&2933u16.to_le_bytes());
        assert_eq!(smbios_memory_speed(&rec), 2933);
        rec[1] = 0x17; // an older, shorter record: the maximum speed only
        assert_eq!(smbios_memory_speed(&rec), 3200);
        rec[0] = 16;
        assert_eq!(smbios_memory_speed(&rec), 0);
        assert_eq!(smbios_memory_speed(&[17]), 0);
    }
}
