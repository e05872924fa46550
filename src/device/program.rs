//! Images loaded on a device and their symbols.
//!
//! [`Device::load_image`] and [`Device::unload_image`] are what both faces
//! load with (OpenMP's registered images, liboffload's programs). A
//! [`Program`] is liboffload's view: an image with its bytes, whose symbols
//! are looked up by name and kind. Only the image's own defined symbols of
//! the asked kind are found: a kernel must be a function of the image, a
//! global a data object of it (on a CPU device, `dlsym` would also find
//! `exit` or `environ` in the image's dependencies, and a data object
//! launched as a kernel jumps into data).

use super::Device;
use crate::base::error::{OffloadError, Result};
use crate::base::image::{own_symbol, parse_offload_binary};
use crate::plugins::{ImageHandle, KernelHandle};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::base::image::SymbolKind;

/// A symbol of a loaded program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub kind: SymbolKind,
    /// Kernel: the plugin's kernel handle. Global: its device address.
    pub handle: KernelHandle,
    /// Global: its size in bytes (0 for kernels).
    pub size: u64,
}

impl Device {
    /// Loads an image (unwrapped already) on this device.
    /// An image that carries an RPC client (`__llvm_rpc_client`) on a GPU
    /// device gets its RPC server here ([`super::rpc::attach`]), unless the
    /// plugin's side serves it (a remote device's server rank does).
    pub fn load_image(&self, image: &[u8]) -> Result<ImageHandle> {
        let handle = self.plugin.load_binary(self.plugin_device, image)?;
        if !self.memory_is_host() && !self.plugin.serves_rpc_itself() && super::rpc::has_client(image) {
            let attached = match super::get(self.id) {
                Some(dev) => super::rpc::attach(dev, handle, image),
                None => Err(OffloadError::InvalidArgument(format!("device {} is not exposed", self.id))),
            };
            if let Err(e) = attached {
                let _ = self.plugin.unload_binary(self.plugin_device, handle);
                return Err(OffloadError::InvalidArgument(format!("the image's RPC client could not be served: {e}")));
            }
        }
        Ok(handle)
    }

    /// Unloads an image [`Device::load_image`] loaded (its device destructors run).
    pub fn unload_image(&self, image: ImageHandle) -> Result<()> {
        super::rpc::detach(self.id, image);
        self.plugin.unload_binary(self.plugin_device, image)
    }

    /// The image this device would load from `data` (an OffloadBinary
    /// container is unwrapped), or why it cannot load it.
    pub fn runnable_image<'a>(&self, data: &'a [u8]) -> Result<&'a [u8]> {
        let inner = match parse_offload_binary(data)? {
            Some(ob) => &data[ob.image],
            None => data,
        };
        if !self.plugin.is_compatible(inner) {
            return Err(OffloadError::IncompatibleImage(format!("the image is not a program for {} devices", self.plugin.name())));
        }
        if !self.plugin.is_device_compatible(self.plugin_device, inner) {
            // The plugin's reason when it has one (e.g. the architectures a CUDA fatbin holds).
            let why = self.plugin.why_no_device(inner).map(|w| format!(": {w}")).unwrap_or_default();
            return Err(OffloadError::IncompatibleImage(format!("the image is not compatible with device {}{why}", self.uid())));
        }
        Ok(inner)
    }
}

/// A program loaded on one device.
pub struct Program {
    pub dev: &'static Device,
    image: ImageHandle,
    /// The inner image (its symbol table decides what may be looked up).
    bytes: Vec<u8>,
    /// Number of this program among every program loaded (for its globals' ranges).
    serial: u64,
    /// Whether `unload` ran.
    unloaded: bool,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Program({} on {:?})", self.serial, self.dev)
    }
}

static SERIAL: AtomicU64 = AtomicU64::new(1);

/// The globals of live programs that were looked up: device address →
/// (size, device, program). Copies into a device whose memory is host
/// memory are checked against them ([`known_range`]).
static GLOBALS: Mutex<BTreeMap<u64, (u64, usize, u64)>> = Mutex::new(BTreeMap::new());

/// Fork participation: the globals' table.
pub(super) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&GLOBALS)
}

/// Whether `[ptr, ptr+len)` lies inside a global of a live program on `device`.
pub fn in_live_global(device: usize, ptr: u64, len: u64) -> bool {
    let g = GLOBALS.lock();
    g.range(..=ptr)
        .next_back()
        .is_some_and(|(&base, &(size, dev, _))| dev == device && ptr.checked_add(len).is_some_and(|end| end <= base + size) && ptr >= base)
}

impl Program {
    /// Loads `data` (an image, or an OffloadBinary container of one) on `dev`.
    pub fn load(dev: &'static Device, data: &[u8]) -> Result<Program> {
        let inner = dev.runnable_image(data)?;
        let image = dev.load_image(inner)?;
        Ok(Program { dev, image, bytes: inner.to_vec(), serial: SERIAL.fetch_add(1, Ordering::Relaxed), unloaded: false })
    }

    /// The plugin's handle of the loaded image.
    pub fn image(&self) -> ImageHandle {
        self.image
    }

    /// Looks a symbol of this program up.
    pub fn symbol(&self, name: &str, kind: SymbolKind) -> Result<Symbol> {
        if self.unloaded {
            return Err(OffloadError::InvalidArgument("the program was unloaded".into()));
        }
        let elf_size = own_symbol(&self.bytes, name, kind)?;
        let (p, d) = (self.dev.plugin, self.dev.plugin_device);
        match kind {
            SymbolKind::Kernel => Ok(Symbol { kind, handle: p.get_function(d, self.image, name)?, size: 0 }),
            SymbolKind::Global => {
                // Images whose bytes do not say (PTX, a CUDA fatbin): the driver's size.
                let size = elf_size.or_else(|| p.global_size(d, self.image, name)).unwrap_or(0);
                let addr = p.get_global(d, self.image, name, size)?;
                if size > 0 {
                    GLOBALS.lock().insert(addr, (size, self.dev.id, self.serial));
                }
                Ok(Symbol { kind, handle: addr, size })
            }
        }
    }

    /// Unloads the program; its globals are no longer known ranges.
    pub fn unload(mut self) -> Result<()> {
        self.unload_now()
    }

    fn unload_now(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.unloaded, true) {
            return Ok(());
        }
        GLOBALS.lock().retain(|_, v| v.2 != self.serial);
        // Queued copies into its globals and launches of its kernels finish first.
        super::work_queue::drain_all();
        self.dev.unload_image(self.image)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        if let Err(e) = self.unload_now() {
            crate::base::diag::report(&format!("unloading a program on device {}: {e}", self.dev.id));
        }
    }
}
