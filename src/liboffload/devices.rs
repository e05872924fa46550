//! Device discovery (the first `olInit`) and the device and platform info
//! queries.
//!
//! Order of `olIterateDevices`: the devices of our plugins in plugin order
//! (the host plugin's CPU devices, then CUDA, then AMDGPU: the order OpenMP
//! numbers them), then the virtual host device, as 22.1 lists it last.

use super::error::{OlResult, err, errc};
use super::handles::{DeviceKind, OlDevice, OlPlatform, Topology};
use super::info::Value;
use super::types::{DEVICE_TYPE_NAMES, DeviceInfo, PLATFORM_BACKEND_NAMES, PlatformInfo};
use crate::openmp;
use std::collections::HashMap;

const VERSION: &str = "v0.0.1";
const HOST_BACKEND: u32 = 4;

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

/// Parses a plugin's `__tgt_print_device_info` text (`Key: value` lines).
fn parse_props(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_owned(), v.trim().to_owned()))
        })
        .collect()
}

pub fn discover() -> Topology {
    let mut platforms = Vec::new();
    let mut devices = Vec::new();
    for plugin_devices in openmp::get().all_plugin_devices() {
        let Some(first) = plugin_devices.first() else { continue };
        let (backend, name, vendor) = match first.plugin.name() {
            "cuda" => (1, "CUDA", "NVIDIA Corporation"),
            "amdgpu" => (2, "AMDGPU", "AMD"),
            // The host plugin: a real CPU platform (22.1 has no CPU backend
            // value; HOST is the closest, the device type says CPU).
            _ => (HOST_BACKEND, "x86_64", "omptarget-rs"),
        };
        let platform = leak(OlPlatform { backend, name: name.into(), vendor: vendor.into(), version: VERSION.into() });
        platforms.push(platform);
        for d in plugin_devices {
            let props = parse_props(&d.plugin.device_info(d.plugin_device));
            devices.push(leak(OlDevice { platform, kind: DeviceKind::Plugin(d), props }));
        }
    }
    let host =
        leak(OlPlatform { backend: HOST_BACKEND, name: "Host".into(), vendor: "Unknown platform vendor".into(), version: VERSION.into() });
    platforms.push(host);
    devices.push(leak(OlDevice { platform: host, kind: DeviceKind::Host, props: HashMap::new() }));
    Topology { platforms, devices }
}

/// What /proc/cpuinfo says about the CPU (read once).
struct Cpu {
    model: String,
    vendor: String,
    vendor_id: u32,
    mhz: u32,
    memory: u64,
}

static CPU: std::sync::OnceLock<Cpu> = std::sync::OnceLock::new();
/// Held while [`CPU`] is created (see `handles::topology` for why).
static CPU_INIT: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

/// Fork safety: the CPU-description creation lock.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&CPU_INIT)
}

fn cpu() -> &'static Cpu {
    if let Some(c) = CPU.get() {
        return c;
    }
    let _creating = CPU_INIT.lock();
    CPU.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |k: &str| text.lines().find_map(|l| l.split_once(':').filter(|(a, _)| a.trim() == k).map(|(_, b)| b.trim().to_owned()));
        let raw_vendor = field("vendor_id").unwrap_or_default();
        let (vendor, vendor_id) = match raw_vendor.as_str() {
            "AuthenticAMD" => ("AMD".to_owned(), 0x1022),
            "GenuineIntel" => ("Intel".to_owned(), 0x8086),
            other => (other.to_owned(), 0),
        };
        // SAFETY: sysconf has no memory-safety preconditions.
        let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        Cpu {
            model: field("model name").unwrap_or_else(|| "x86-64 CPU".into()),
            vendor,
            vendor_id,
            mhz: field("cpu MHz").and_then(|m| m.parse::<f64>().ok()).map_or(0, |m| m as u32),
            memory: (pages.max(0) as u64).saturating_mul(page.max(0) as u64),
        }
    })
}

/// All FP capabilities but soft float (what 22.1 reports for the host).
const FP_ALL: u32 = 127;

fn unsupported<T>(dev: &OlDevice, prop: DeviceInfo) -> OlResult<T> {
    err(errc::UNSUPPORTED, format!("{} is not known for a {} device", prop.name().unwrap_or("this property"), dev.platform.name))
}

/// The value of a device property.
pub fn device_info(dev: &'static OlDevice, prop: DeviceInfo) -> OlResult<Value> {
    use Value::*;
    let name = prop.name().ok_or(()).or_else(|_| err(errc::INVALID_ENUMERATION, format!("getDeviceInfo enum '{}' is invalid", prop.0)))?;
    let dims = |v: u32| Dims([v, v, v]);
    let DeviceKind::Plugin(rt) = &dev.kind else {
        // The virtual host device, with 22.1's values.
        return Ok(match prop.0 {
            0 => Enum(4, DEVICE_TYPE_NAMES),
            1 => Ptr(dev.platform as *const OlPlatform as usize),
            2 | 3 => Str("Virtual Host Device".into()),
            4 => Str("HOST".into()),
            5 => Str("Unknown".into()),
            6 => Str(concat!("omptarget-rs ", env!("CARGO_PKG_VERSION")).into()),
            7 => U32(1),
            8 => dims(1),
            9 => U32(u32::MAX),
            10 => dims(u32::MAX),
            11 => U32(0),
            12 => U32(1),
            13 | 14 => U32(64),
            15 => U32(64),
            16..=18 => U64(0),
            19 | 20 => U32(FP_ALL),
            21 => U32(0),
            22..=27 => U32(1),
            28 => U32(0),
            _ => unreachable!("{name} handled above"),
        });
    };
    if rt.plugin.name() == "x86_64" {
        let c = cpu();
        // Kernels run once, on the calling thread: one work item.
        return Ok(match prop.0 {
            0 => Enum(3, DEVICE_TYPE_NAMES),
            1 => Ptr(dev.platform as *const OlPlatform as usize),
            2 | 3 => Str(c.model.clone()),
            4 => Str(rt.plugin.uid(rt.plugin_device)),
            5 => Str(c.vendor.clone()),
            6 => Str(concat!("omptarget-rs ", env!("CARGO_PKG_VERSION")).into()),
            7 => U32(1),
            8 => dims(1),
            9 => U32(1),
            10 => dims(1),
            11 => U32(c.vendor_id),
            12 => U32(1),
            13 => U32(c.mhz),
            14 => U32(0),
            15 => U32(64),
            16 | 17 => U64(c.memory),
            18 => U64(0),
            19 | 20 => U32(FP_ALL),
            21 => U32(0),
            // 16-byte SSE2 vectors.
            22 => U32(16),
            23 => U32(8),
            24 | 26 => U32(4),
            25 | 27 => U32(2),
            28 => U32(0),
            _ => unreachable!("{name} handled above"),
        });
    }
    // GPUs: what the plugin's device description says; what it does not
    // query is the architecture's fixed limit, or 0 for "unknown" (clock rates).
    let prop_u64 =
        |keys: &[&str]| keys.iter().find_map(|k| dev.props.get(*k)).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    let cuda = rt.plugin.name() == "cuda";
    let group = prop_u64(&["Maximum Threads per Block", "Workgroup Max Size"]).unwrap_or(1024).min(u64::from(u32::MAX)) as u32;
    let grid = prop_u64(&["Maximum Grid Dimensions", "Max Teams"]).unwrap_or(u64::from(u32::MAX)).min(u64::from(u32::MAX)) as u32;
    let memory = prop_u64(&["Global Memory Size"]).unwrap_or(0);
    let group_dims = if cuda { [group, group, group.min(64)] } else { [group; 3] };
    Ok(match prop.0 {
        0 => Enum(2, DEVICE_TYPE_NAMES),
        1 => Ptr(dev.platform as *const OlPlatform as usize),
        2 | 3 => Str(dev
            .props
            .get("Device Name")
            .or(dev.props.get("Product Name"))
            .cloned()
            .unwrap_or_else(|| format!("{} device", dev.platform.name))),
        4 => Str(rt.plugin.uid(rt.plugin_device)),
        5 => Str(dev.platform.vendor.clone()),
        6 => {
            Str(dev.props.get("CUDA Driver Version").or(dev.props.get("HSA Runtime Version")).cloned().unwrap_or_else(|| "unknown".into()))
        }
        7 => U32(group),
        8 => Dims(group_dims),
        9 => U32(group.saturating_mul(grid)),
        10 => Dims(group_dims.map(|g| g.saturating_mul(grid))),
        11 => U32(if cuda { 0x10de } else { 0x1002 }),
        12 => U32(prop_u64(&["Number of Multiprocessors", "Compute Units"]).unwrap_or(0) as u32),
        13 | 14 => U32(0),
        15 => U32(64),
        16 | 17 => U64(memory),
        // Static shared memory per block (CUDA's default limit) / LDS per work group.
        18 => U64(if cuda { 48 << 10 } else { 64 << 10 }),
        19 | 20 => U32(FP_ALL),
        21 => U32(FP_ALL),
        22..=28 => U32(1),
        _ => return unsupported(dev, prop),
    })
}

/// The value of a platform property.
pub fn platform_info(p: &'static OlPlatform, prop: PlatformInfo) -> OlResult<Value> {
    Ok(match prop.0 {
        0 => Value::Str(p.name.clone()),
        1 => Value::Str(p.vendor.clone()),
        2 => Value::Str(p.version.clone()),
        3 => Value::Enum(p.backend, PLATFORM_BACKEND_NAMES),
        v => return err(errc::INVALID_ENUMERATION, format!("getPlatformInfo enum '{v}' is invalid")),
    })
}
