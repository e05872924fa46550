//! The objects behind the `ol*` handles and the checks that turn a handle
//! from C into a reference.
//!
//! Platforms and devices are created once, at the first `olInit`, and live
//! until process exit (the runtime's devices never go away either, and
//! OpenMP may use them). Queues, events, programs and symbols are boxes whose
//! addresses are the handles; a live set records them, so a freed or made-up
//! handle is reported (`OL_ERRC_INVALID_QUEUE`, ...) instead of dereferenced.

use super::error::{OlResult, err, errc};
use super::types::SymbolKind;
use crate::device::{AddrHash, Device};
use crate::plugins::{ImageHandle, KernelHandle, Plugin};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// `ol_platform_impl_t`: one per plugin with devices, plus the host platform.
pub struct OlPlatform {
    pub backend: u32,
    pub name: String,
    pub vendor: String,
    pub version: String,
}

/// What a device is.
pub enum DeviceKind {
    /// The virtual host device: the host end of copies; runs nothing.
    Host,
    /// A device of one of our plugins, shared with the OpenMP runtime.
    Plugin(Arc<Device>),
}

/// `ol_device_impl_t`.
pub struct OlDevice {
    pub platform: &'static OlPlatform,
    pub kind: DeviceKind,
    /// Key/value lines of the plugin's device description (GPU properties).
    pub props: HashMap<String, String>,
}

impl OlDevice {
    /// The runtime device, or an error naming the call for the host device.
    pub fn plugin_device(&self, what: &str) -> OlResult<&Device> {
        match &self.kind {
            DeviceKind::Plugin(d) => Ok(d),
            DeviceKind::Host => err(
                errc::INVALID_DEVICE,
                format!("{what}: the virtual host device has no memory or programs of its own; use a CPU or GPU device"),
            ),
        }
    }

    pub fn plugin(&self) -> Option<(&'static dyn Plugin, usize)> {
        match &self.kind {
            DeviceKind::Plugin(d) => Some((d.plugin, d.plugin_device)),
            DeviceKind::Host => None,
        }
    }

    pub fn is_host(&self) -> bool {
        matches!(self.kind, DeviceKind::Host)
    }
}

/// `ol_queue_impl_t`: an in-order queue. Work is executed when it is
/// enqueued, so a queue is always empty when its enqueue call returns.
pub struct OlQueue {
    pub device: &'static OlDevice,
}

/// `ol_event_impl_t`: a point in a queue (complete when created, see `OlQueue`).
pub struct OlEvent {
    pub queue: usize,
}

/// `ol_program_impl_t`.
pub struct OlProgram {
    pub device: &'static OlDevice,
    pub image: ImageHandle,
    /// The inner image (symbol sizes of globals come from its ELF tables).
    pub bytes: Vec<u8>,
    /// Symbols looked up so far: the same name and kind give the same handle.
    pub symbols: Mutex<HashMap<(String, u32), usize>>,
}

/// `ol_symbol_impl_t`.
pub struct OlSymbol {
    pub program: usize,
    pub device: &'static OlDevice,
    pub kind: SymbolKind,
    pub name: &'static str,
    /// Kernel handle of the plugin, or the global's device address.
    pub handle: KernelHandle,
    pub size: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
enum Kind {
    Queue,
    Event,
    Program,
    Symbol,
}

/// Platforms and devices, in `olIterateDevices` order.
pub struct Topology {
    pub platforms: Vec<&'static OlPlatform>,
    pub devices: Vec<&'static OlDevice>,
}

static TOPOLOGY: OnceLock<Topology> = OnceLock::new();
/// Held while [`TOPOLOGY`] is created. The fork handlers take it, so a
/// child never inherits the `OnceLock` in the middle of its initialisation
/// (its `get_or_init` would then wait forever for a thread it does not have).
static TOPOLOGY_INIT: Mutex<()> = Mutex::new(());
static LIVE: RwLock<Option<HashMap<usize, Kind, AddrHash>>> = RwLock::new(None);

/// Platforms and devices (created by the first call; `olInit` makes it).
pub fn topology() -> &'static Topology {
    if let Some(t) = TOPOLOGY.get() {
        return t;
    }
    let _creating = TOPOLOGY_INIT.lock();
    TOPOLOGY.get_or_init(super::devices::discover)
}

/// Fork safety (runtime/fork.rs): the device-list creation lock, the live
/// set and the symbol table of every live program. While this thread holds
/// the live set, no program can be destroyed (`olDestroyProgram` takes it
/// first), so the programs' locks stay valid until they are released,
/// which happens before the live set's (reverse order).
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    if !(held.mutex(&TOPOLOGY_INIT) && held.write(&LIVE)) {
        return false;
    }
    // SAFETY: the live set's write lock was just taken (its guard forgotten) by this thread.
    let live = unsafe { &*LIVE.data_ptr() };
    live.iter().flatten().filter(|&(_, &k)| k == Kind::Program).all(|(&addr, _)| {
        let program = addr as *const OlProgram;
        // SAFETY: a live program handle is a `Box<OlProgram>` address; it cannot be freed while the live set's lock, taken above, is held, and that lock is released after this one.
        unsafe { held.mutex_at(std::ptr::addr_of!((*program).symbols)) }
    })
}

fn register(addr: usize, kind: Kind) {
    LIVE.write().get_or_insert_with(HashMap::default).insert(addr, kind);
}

/// Per kind, the handle found live last (0: none). Written only under the
/// live set's read lock and cleared under its write lock when that handle is
/// destroyed, so it never names a destroyed handle: a launch checks its
/// kernel and queue with one load each.
static LAST_LIVE: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

#[inline]
fn is_live(addr: usize, kind: Kind) -> bool {
    if addr != 0 && LAST_LIVE[kind as usize].load(Ordering::Acquire) == addr {
        return true;
    }
    let guard = LIVE.read();
    let live = guard.as_ref().is_some_and(|m| m.get(&addr) == Some(&kind));
    if live {
        LAST_LIVE[kind as usize].store(addr, Ordering::Release);
    }
    drop(guard);
    live
}

fn unregister(addr: usize, kind: Kind) -> bool {
    let mut live = LIVE.write();
    let _ = LAST_LIVE[kind as usize].compare_exchange(addr, 0, Ordering::AcqRel, Ordering::Acquire);
    let Some(map) = live.as_mut() else { return false };
    if map.get(&addr) == Some(&kind) {
        map.remove(&addr);
        true
    } else {
        false
    }
}

/// A device handle from C.
pub fn device(h: *const OlDevice) -> OlResult<&'static OlDevice> {
    match topology().devices.iter().find(|d| std::ptr::eq(**d, h)) {
        Some(d) => Ok(d),
        None => err(errc::INVALID_DEVICE, format!("{h:p} is not a device handle")),
    }
}

/// A platform handle from C.
pub fn platform(h: *const OlPlatform) -> OlResult<&'static OlPlatform> {
    match topology().platforms.iter().find(|p| std::ptr::eq(**p, h)) {
        Some(p) => Ok(p),
        None => err(errc::INVALID_PLATFORM, format!("{h:p} is not a platform handle")),
    }
}

macro_rules! handle_kind {
    ($new:ident, $get:ident, $destroy:ident, $ty:ty, $kind:expr, $code:expr, $what:literal) => {
        /// Makes a new handle of this kind.
        pub fn $new(value: $ty) -> *const $ty {
            let p = Box::into_raw(Box::new(value));
            register(p as usize, $kind);
            p
        }

        /// A live handle from C.
        pub(crate) fn $get(h: *const $ty) -> OlResult<&'static $ty> {
            if !is_live(h as usize, $kind) {
                return err($code, format!(concat!("{:p} is not a live ", $what, " handle"), h));
            }
            // SAFETY: the address is in the live set, so it came from `Box::into_raw` of this type and was not destroyed.
            Ok(unsafe { &*h })
        }

        /// Takes a live handle out of the live set and returns its box.
        pub(crate) fn $destroy(h: *const $ty) -> OlResult<Box<$ty>> {
            if !unregister(h as usize, $kind) {
                return err($code, format!(concat!("{:p} is not a live ", $what, " handle"), h));
            }
            // SAFETY: the address was live (from `Box::into_raw`) and is now removed from the set, so this is the only owner.
            Ok(unsafe { Box::from_raw(h as *mut $ty) })
        }
    };
}

handle_kind!(new_queue, queue, destroy_queue, OlQueue, Kind::Queue, errc::INVALID_QUEUE, "queue");
handle_kind!(new_event, event, destroy_event, OlEvent, Kind::Event, errc::INVALID_EVENT, "event");
handle_kind!(new_program, program, destroy_program, OlProgram, Kind::Program, errc::INVALID_ARGUMENT, "program");
handle_kind!(new_symbol, symbol, destroy_symbol, OlSymbol, Kind::Symbol, errc::INVALID_ARGUMENT, "symbol");
