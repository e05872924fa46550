//! Device discovery (the first `olInit`) and the device and platform info
//! queries, read from the device layer's typed device properties.
//!
//! Order of `olIterateDevices`: the devices of every plugin in plugin order
//! (the host plugin's CPU devices, then CUDA, then AMDGPU: the order OpenMP
//! numbers them), then the virtual host device, as 22.1 lists it last. 22.1
//! has no backend value for CPU devices: their platform's backend is
//! `UNKNOWN` (their device type says CPU), so the one device of backend
//! `HOST`, and of type `HOST`, is the virtual host device that copies name
//! as the host end.

use super::error::{OlResult, err, errc};
use super::handles::{DeviceKind, OlDevice, OlPlatform, Topology};
use super::info::Value;
use super::types::{DEVICE_TYPE_NAMES, DeviceInfo, PLATFORM_BACKEND_NAMES, PlatformInfo};
use crate::plugins::DeviceType;
use parking_lot::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

static TOPOLOGY: OnceLock<Topology> = OnceLock::new();
/// Held while [`TOPOLOGY`] is created. The fork handlers take it, so a
/// child never inherits the `OnceLock` in the middle of its initialisation
/// (its `get_or_init` would then wait forever for a thread it does not have).
static TOPOLOGY_INIT: Mutex<()> = Mutex::new(());

/// Platforms and devices of the current generation's device model (21 and
/// 22.1 share theirs, created by the first call; 23's is made by each first
/// `olInit`, see [`select_host_model`]).
pub fn topology() -> &'static Topology {
    if super::generation::current().host_plugin_is_host() {
        let t = HOST_MODEL.load(Ordering::Acquire);
        // SAFETY: a non-NULL value is a leaked `Topology` stored by `select_host_model`, never freed.
        return if t.is_null() { &EMPTY } else { unsafe { &*t } };
    }
    if let Some(t) = TOPOLOGY.get() {
        return t;
    }
    let _creating = TOPOLOGY_INIT.lock();
    TOPOLOGY.get_or_init(discover)
}

/// 23's device model in force (NULL before its first `olInit`).
static HOST_MODEL: AtomicPtr<Topology> = AtomicPtr::new(std::ptr::null_mut());
static EMPTY: Topology = Topology { platforms: Vec::new(), devices: Vec::new() };
/// 23's platforms and devices ever made, by plugin index and device
/// number: a device keeps its handle across `olShutDown` and `olInit`.
static HOST_MODEL_OBJECTS: Mutex<Vec<(usize, &'static OlPlatform, Vec<&'static OlDevice>)>> = Mutex::new(Vec::new());

/// The backend of a plugin in 23's model (the host plugin is `HOST`).
fn host_model_backend(plugin: &str) -> (u32, &'static str, &'static str) {
    match plugin {
        "cuda" => (1, "CUDA", "NVIDIA Corporation"),
        "amdgpu" => (2, "AMDGPU", "AMD"),
        "remote" => (UNKNOWN_BACKEND, "remote", "omptarget-rs"),
        _ => (HOST_BACKEND, "x86_64", "omptarget-rs"),
    }
}

/// Makes 23's device model: a platform per plugin whose backend is in
/// `requested` (all when empty), the host plugin's always, with the host
/// plugin's CPU devices as host devices (backend HOST, type HOST) and no
/// virtual host device. Plugins not asked for are not started.
pub fn select_host_model(requested: &[u32]) {
    let _creating = TOPOLOGY_INIT.lock();
    let reg = crate::device::registry();
    let mut objects = HOST_MODEL_OBJECTS.lock();
    let mut topo = Topology { platforms: Vec::new(), devices: Vec::new() };
    for (pi, plugin) in reg.plugins().iter().enumerate() {
        let (backend, name, vendor) = host_model_backend(plugin.name());
        if !(requested.is_empty() || backend == HOST_BACKEND || requested.contains(&backend)) {
            continue;
        }
        let devs: Vec<&'static crate::device::Device> = reg.expose_all(pi).into_iter().filter_map(|id| reg.get(id)).collect();
        if devs.is_empty() {
            continue;
        }
        let at = match objects.iter().position(|(p, _, _)| *p == pi) {
            Some(i) => i,
            None => {
                let platform =
                    leak(OlPlatform { backend, plugin: plugin.name(), name: name.into(), vendor: vendor.into(), version: VERSION.into() });
                objects.push((pi, platform, Vec::new()));
                objects.len() - 1
            }
        };
        let (_, platform, known) = &mut objects[at];
        topo.platforms.push(*platform);
        for d in devs {
            let handle = match known.iter().find(|o| o.real().is_some_and(|r| r.id == d.id)) {
                Some(h) => *h,
                None => {
                    let h = leak(OlDevice { platform, kind: DeviceKind::Device(d) });
                    known.push(h);
                    h
                }
            };
            topo.devices.push(handle);
        }
    }
    // One model per selection ever made (kept: handles of an earlier model
    // may still be in a caller's hands); the same selection reuses its model.
    let mut models = HOST_MODELS.lock();
    let same = |m: &&&'static Topology| {
        m.devices.len() == topo.devices.len() && m.devices.iter().zip(&topo.devices).all(|(a, b)| std::ptr::eq(*a, *b))
    };
    let model = match models.iter().find(same) {
        Some(m) => *m,
        None => {
            let m = leak(topo);
            models.push(m);
            m
        }
    };
    HOST_MODEL.store(model as *const Topology as *mut Topology, Ordering::Release);
}

/// Every device model of 23 made so far.
static HOST_MODELS: Mutex<Vec<&'static Topology>> = Mutex::new(Vec::new());

/// A device handle from C.
pub fn device(h: *const OlDevice) -> OlResult<&'static OlDevice> {
    match topology().devices.iter().find(|d| std::ptr::eq(**d, h)) {
        Some(d) => Ok(d),
        None => err(errc::INVALID_DEVICE, format!("{h:p} is not a device handle")),
    }
}

/// The `ol*` device of a device-layer device.
pub fn device_of(dev: &crate::device::Device) -> Option<&'static OlDevice> {
    topology().devices.iter().copied().find(|d| d.real().is_some_and(|r| r.id == dev.id))
}

/// A platform handle from C.
pub fn platform(h: *const OlPlatform) -> OlResult<&'static OlPlatform> {
    match topology().platforms.iter().find(|p| std::ptr::eq(**p, h)) {
        Some(p) => Ok(p),
        None => err(errc::INVALID_PLATFORM, format!("{h:p} is not a platform handle")),
    }
}

const VERSION: &str = "v0.0.1";
const UNKNOWN_BACKEND: u32 = 0;
/// `OL_PLATFORM_BACKEND_HOST`: copies treat a device of this backend as host memory.
pub const HOST_BACKEND: u32 = 4;

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

fn discover() -> Topology {
    let mut platforms = Vec::new();
    let mut devices = Vec::new();
    for plugin_devices in crate::device::registry().expose_every_device() {
        let Some(first) = plugin_devices.first() else { continue };
        let (backend, name, vendor) = match first.plugin.name() {
            "cuda" => (1, "CUDA", "NVIDIA Corporation"),
            "amdgpu" => (2, "AMDGPU", "AMD"),
            "remote" => (UNKNOWN_BACKEND, "remote", "omptarget-rs"),
            _ => (UNKNOWN_BACKEND, "x86_64", "omptarget-rs"),
        };
        let platform =
            leak(OlPlatform { backend, plugin: first.plugin.name(), name: name.into(), vendor: vendor.into(), version: VERSION.into() });
        platforms.push(platform);
        for d in plugin_devices {
            devices.push(leak(OlDevice { platform, kind: DeviceKind::Device(d) }));
        }
    }
    let host = leak(OlPlatform {
        backend: HOST_BACKEND,
        plugin: "",
        name: "Host".into(),
        vendor: "Unknown platform vendor".into(),
        version: VERSION.into(),
    });
    platforms.push(host);
    devices.push(leak(OlDevice { platform: host, kind: DeviceKind::Host }));
    Topology { platforms, devices }
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
    let DeviceKind::Device(rt) = dev.kind else {
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
    let p = rt.properties();
    let gpu = p.device_type == DeviceType::Gpu;
    let fp_half = if gpu { FP_ALL } else { 0 };
    // In 23's model the host plugin's devices are host devices.
    let ty = if dev.platform.backend == HOST_BACKEND {
        4
    } else if gpu {
        2
    } else {
        3
    };
    Ok(match prop.0 {
        0 => Enum(ty, DEVICE_TYPE_NAMES),
        1 => Ptr(dev.platform as *const OlPlatform as usize),
        2 => Str(p.name.clone()),
        3 => Str(if p.product.is_empty() { p.name.clone() } else { p.product.clone() }),
        4 => Str(rt.uid()),
        5 => Str(p.vendor.clone()),
        6 => Str(if p.driver_version.is_empty() { "unknown".into() } else { p.driver_version.clone() }),
        7 => U32(p.max_group_size),
        8 => Dims(p.max_group_dims),
        9 => U32(p.max_group_size.saturating_mul(p.max_groups[0])),
        10 => Dims([0, 1, 2].map(|i| p.max_group_dims[i].saturating_mul(p.max_groups[i]))),
        11 => U32(p.vendor_id),
        12 => U32(p.compute_units),
        13 => U32(p.clock_mhz),
        14 => U32(p.memory_clock_mhz),
        15 => U32(p.address_bits),
        16 | 17 => U64(p.global_memory),
        18 => U64(p.local_memory),
        19 | 20 => U32(FP_ALL),
        21 => U32(fp_half),
        22..=28 => U32(p.vector_widths[prop.0 as usize - 22]),
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

/// Fork safety: the device-list creation lock.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&TOPOLOGY_INIT) && held.mutex(&HOST_MODEL_OBJECTS) && held.mutex(&HOST_MODELS)
}
