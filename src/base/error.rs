//! The crate's one error type. Only `api::boundary` turns it into C return
//! values; everything inside the crate propagates it with `?`.

use std::fmt;

/// Everything that can go wrong inside the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffloadError {
    /// A pointer or size from the caller is unusable (NULL, misaligned, overflow).
    InvalidArgument(String),
    /// A device number outside `0..num_devices` where a device is needed.
    NoSuchDevice { device: i64, available: usize },
    /// Bytes that should be an image, entry table or container are malformed.
    BadImage(String),
    /// No plugin accepts an image.
    IncompatibleImage(String),
    /// A plugin could not be initialised; the process goes on without it.
    PluginUnavailable { plugin: &'static str, reason: String },
    /// A symbol is missing from a driver library or device image.
    MissingSymbol { lib: String, symbol: String },
    /// An object an image's offload entries name is not in the image
    /// (the text is 22.1's plugin-interface wording).
    NotInImage(String),
    /// A launch of a kernel that its image lacked when it was loaded.
    MissingKernel { device: usize, name: String },
    /// A call into a device driver failed.
    Driver { plugin: &'static str, call: &'static str, message: String },
    /// A mapping rule was violated (present, extension, association, ...).
    /// The user-facing message lines have already been printed.
    Mapping(String),
    /// The device could not provide memory.
    OutOfDeviceMemory { bytes: u64 },
    /// A region id that no registered library knows.
    UnknownRegion(usize),
    /// An export that is not implemented yet.
    NotImplemented(&'static str),
    /// A broken internal invariant or a caught panic.
    Internal(String),
}

/// Shorthand used across the crate.
pub type Result<T, E = OffloadError> = std::result::Result<T, E>;

impl fmt::Display for OffloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument(what) => write!(f, "invalid argument: {what}"),
            Self::NoSuchDevice { device, available } => {
                write!(f, "\"invalid value\" device number '{device}' out of range, only {available} devices available")
            }
            Self::BadImage(what) => write!(f, "malformed offload image: {what}"),
            Self::IncompatibleImage(what) => write!(f, "incompatible image: {what}"),
            Self::PluginUnavailable { plugin, reason } => {
                write!(f, "plugin '{plugin}' unavailable: {reason}")
            }
            Self::MissingSymbol { lib, symbol } => write!(f, "symbol '{symbol}' not found in {lib}"),
            Self::NotInImage(what) => write!(f, "\"requested object was not found in the binary image\" {what}"),
            Self::MissingKernel { device, name } => {
                write!(f, "Failed to load kernel {name}: the image loaded on device {device} does not contain it")
            }
            Self::Driver { plugin, call, message } => {
                write!(f, "{plugin}: error in {call}: {message}")
            }
            Self::Mapping(what) => write!(f, "{what}"),
            Self::OutOfDeviceMemory { bytes } => {
                write!(f, "out of device memory allocating {bytes} bytes")
            }
            Self::UnknownRegion(addr) => {
                write!(f, "Host ptr {addr:#018x} does not have a matching target pointer.")
            }
            Self::NotImplemented(name) => write!(f, "{name} is not implemented yet"),
            Self::Internal(what) => write!(f, "internal error: {what}"),
        }
    }
}

impl std::error::Error for OffloadError {}
