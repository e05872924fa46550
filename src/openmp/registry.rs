//! Registered libraries (one per `__tgt_register_lib` descriptor): their
//! offload entries, their device images and which device got which image.

use super::entries::Entry;
use crate::abi::ptr::ProgramBytes;
use crate::base::image::OffloadBinary;
use std::collections::BTreeMap;

/// One device image of a registered library.
#[derive(Debug, Clone)]
pub struct DeviceImage {
    /// The whole range given in `__tgt_device_image`.
    pub outer: ProgramBytes,
    /// The container, when the range was an OffloadBinary.
    pub container: Option<OffloadBinary>,
}

impl DeviceImage {
    /// The image the plugins see (the container's inner image, or the raw range).
    pub fn bytes(&self) -> &[u8] {
        let b = self.outer.as_slice();
        match &self.container {
            Some(c) => &b[c.image.clone()],
            None => b,
        }
    }

    /// Architecture for messages (`()` lists of incompatible images).
    pub fn arch(&self) -> String {
        self.container.as_ref().map(|c| c.arch.clone()).unwrap_or_default()
    }
}

/// One registered library.
#[derive(Debug)]
pub struct RegisteredLib {
    /// Identity: the address of the descriptor.
    pub key: usize,
    pub entries: Vec<Entry>,
    pub images: Vec<DeviceImage>,
    /// User device number → index into `images`.
    pub device_images: BTreeMap<usize, usize>,
}

/// All registered libraries, in registration order.
#[derive(Debug, Default)]
pub struct Registry {
    pub libs: Vec<RegisteredLib>,
}

impl Registry {
    pub fn find(&self, key: usize) -> Option<&RegisteredLib> {
        self.libs.iter().find(|l| l.key == key)
    }
    pub fn remove(&mut self, key: usize) -> Option<RegisteredLib> {
        let i = self.libs.iter().position(|l| l.key == key)?;
        Some(self.libs.remove(i))
    }
}
