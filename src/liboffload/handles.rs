//! The objects behind the `ol*` handles and the checks that turn a handle
//! from C into a reference.
//!
//! Platforms and devices are created once, at the first `olInit`, and live
//! until process exit (the device layer's devices never go away either, and
//! OpenMP may use them). Queues, events, programs and symbols live in
//! handle tables ([`HandleTable`]): a freed or made-up handle is reported
//! (`OL_ERRC_INVALID_QUEUE`, ...) instead of dereferenced, and a call keeps
//! the object it uses alive even if another thread destroys the handle.

use super::error::{OlResult, err, errc};
use crate::base::handles::HandleTable;
use crate::device::Device;
use crate::device::program::{Program, SymbolKind};
use crate::device::work_queue::{Event, WorkQueue};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::Arc;

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
    /// A device of the device layer, shared with OpenMP.
    Device(&'static Device),
}

/// `ol_device_impl_t`.
pub struct OlDevice {
    pub platform: &'static OlPlatform,
    pub kind: DeviceKind,
}

impl OlDevice {
    /// The device layer's device, or an error naming the call for the host device.
    pub fn device(&self, what: &str) -> OlResult<&'static Device> {
        match self.kind {
            DeviceKind::Device(d) => Ok(d),
            DeviceKind::Host => err(
                errc::INVALID_DEVICE,
                format!("{what}: the virtual host device has no memory or programs of its own; use a CPU or GPU device"),
            ),
        }
    }

    /// The device layer's device; `None` for the virtual host device.
    pub fn real(&self) -> Option<&'static Device> {
        match self.kind {
            DeviceKind::Device(d) => Some(d),
            DeviceKind::Host => None,
        }
    }

    pub fn is_host(&self) -> bool {
        matches!(self.kind, DeviceKind::Host)
    }
}

/// `ol_queue_impl_t`: an in-order queue run by its own host thread.
pub struct OlQueue {
    pub device: &'static OlDevice,
    pub queue: WorkQueue,
}

/// `ol_event_impl_t`: a point in a queue.
pub struct OlEvent {
    /// The queue's handle (`OL_EVENT_INFO_QUEUE`; it may be destroyed since).
    pub queue: usize,
    pub event: Event,
}

/// `ol_program_impl_t`.
pub struct OlProgram {
    pub device: &'static OlDevice,
    /// `None` once destroyed (a launch still queued then fails instead of
    /// running unloaded code); launches read it under the read lock.
    pub program: RwLock<Option<Program>>,
    /// Symbols looked up so far: the same name and kind give the same handle.
    pub symbols: Mutex<HashMap<(String, SymbolKind), usize>>,
}

/// `ol_symbol_impl_t`.
pub struct OlSymbol {
    pub program: Arc<OlProgram>,
    pub device: &'static OlDevice,
    pub kind: SymbolKind,
    pub name: String,
    /// Kernel handle of the plugin, or the global's device address.
    pub handle: u64,
    pub size: u64,
}

/// Platforms and devices, in `olIterateDevices` order.
pub struct Topology {
    pub platforms: Vec<&'static OlPlatform>,
    pub devices: Vec<&'static OlDevice>,
}

pub static QUEUES: HandleTable<OlQueue> = HandleTable::new();
pub static EVENTS: HandleTable<OlEvent> = HandleTable::new();
pub static PROGRAMS: HandleTable<OlProgram> = HandleTable::new();
pub static SYMBOLS: HandleTable<OlSymbol> = HandleTable::new();

/// Fork safety: the handle tables.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    QUEUES.lock_for_fork(held) && EVENTS.lock_for_fork(held) && PROGRAMS.lock_for_fork(held) && SYMBOLS.lock_for_fork(held)
}

macro_rules! live {
    ($get:ident, $table:ident, $ty:ty, $code:expr, $what:literal) => {
        /// A live handle from C.
        pub(crate) fn $get(h: *const $ty) -> OlResult<Arc<$ty>> {
            match $table.get(h) {
                Some(o) => Ok(o),
                None => err($code, format!(concat!("{:p} is not a live ", $what, " handle"), h)),
            }
        }
    };
}

live!(queue, QUEUES, OlQueue, errc::INVALID_QUEUE, "queue");
live!(event, EVENTS, OlEvent, errc::INVALID_EVENT, "event");
live!(program, PROGRAMS, OlProgram, errc::INVALID_ARGUMENT, "program");
live!(symbol, SYMBOLS, OlSymbol, errc::INVALID_ARGUMENT, "symbol");
