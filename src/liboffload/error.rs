//! `ol_result_t`: NULL on success, else a pointer to a `{code, details}`
//! record that stays valid for the rest of the process. Records are
//! interned (one per distinct code and message), so a loop of failing calls
//! does not grow memory.

use crate::base::error::OffloadError;
use core::ffi::c_char;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::CString;

/// `ol_errc_t` values of 22.1's header (checked by tests/offload_header.rs).
pub mod errc {
    pub const SUCCESS: u32 = 0;
    pub const UNKNOWN: u32 = 1;
    pub const HOST_IO: u32 = 2;
    pub const INVALID_BINARY: u32 = 3;
    pub const INVALID_NULL_POINTER: u32 = 4;
    pub const INVALID_ARGUMENT: u32 = 5;
    pub const NOT_FOUND: u32 = 6;
    pub const OUT_OF_RESOURCES: u32 = 7;
    pub const INVALID_SIZE: u32 = 8;
    pub const INVALID_ENUMERATION: u32 = 9;
    pub const HOST_TOOL_NOT_FOUND: u32 = 10;
    pub const INVALID_VALUE: u32 = 11;
    pub const UNIMPLEMENTED: u32 = 12;
    pub const UNSUPPORTED: u32 = 13;
    pub const ASSEMBLE_FAILURE: u32 = 14;
    pub const COMPILE_FAILURE: u32 = 15;
    pub const LINK_FAILURE: u32 = 16;
    pub const BACKEND_FAILURE: u32 = 17;
    pub const UNINITIALIZED: u32 = 18;
    pub const INVALID_NULL_HANDLE: u32 = 19;
    pub const INVALID_PLATFORM: u32 = 20;
    pub const INVALID_DEVICE: u32 = 21;
    pub const INVALID_QUEUE: u32 = 22;
    pub const INVALID_EVENT: u32 = 23;
    pub const SYMBOL_KIND: u32 = 24;
}

/// Names of the `ol_errc_t` values, indexed by value.
pub const ERRC_NAMES: [&str; 25] = [
    "OL_ERRC_SUCCESS",
    "OL_ERRC_UNKNOWN",
    "OL_ERRC_HOST_IO",
    "OL_ERRC_INVALID_BINARY",
    "OL_ERRC_INVALID_NULL_POINTER",
    "OL_ERRC_INVALID_ARGUMENT",
    "OL_ERRC_NOT_FOUND",
    "OL_ERRC_OUT_OF_RESOURCES",
    "OL_ERRC_INVALID_SIZE",
    "OL_ERRC_INVALID_ENUMERATION",
    "OL_ERRC_HOST_TOOL_NOT_FOUND",
    "OL_ERRC_INVALID_VALUE",
    "OL_ERRC_UNIMPLEMENTED",
    "OL_ERRC_UNSUPPORTED",
    "OL_ERRC_ASSEMBLE_FAILURE",
    "OL_ERRC_COMPILE_FAILURE",
    "OL_ERRC_LINK_FAILURE",
    "OL_ERRC_BACKEND_FAILURE",
    "OL_ERRC_UNINITIALIZED",
    "OL_ERRC_INVALID_NULL_HANDLE",
    "OL_ERRC_INVALID_PLATFORM",
    "OL_ERRC_INVALID_DEVICE",
    "OL_ERRC_INVALID_QUEUE",
    "OL_ERRC_INVALID_EVENT",
    "OL_ERRC_SYMBOL_KIND",
];

/// An `ol*` failure: an `ol_errc_t` and its details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OlError {
    pub code: u32,
    pub details: String,
}

/// Result of the inner `ol*` code.
pub type OlResult<T> = std::result::Result<T, OlError>;

/// An error with a code and details.
pub fn err<T>(code: u32, details: impl Into<String>) -> OlResult<T> {
    Err(OlError { code, details: details.into() })
}

/// The generated validation failure 22.1 reports (`validation failure: NULL == Device`).
pub fn validation<T>(code: u32, condition: &str) -> OlResult<T> {
    err(code, format!("validation failure: {condition}"))
}

impl From<OffloadError> for OlError {
    fn from(e: OffloadError) -> Self {
        let code = match &e {
            OffloadError::InvalidArgument(_) => errc::INVALID_ARGUMENT,
            OffloadError::NoSuchDevice { .. } => errc::INVALID_DEVICE,
            OffloadError::BadImage(_) | OffloadError::IncompatibleImage(_) => errc::INVALID_BINARY,
            OffloadError::PluginUnavailable { .. } => errc::UNSUPPORTED,
            OffloadError::MissingSymbol { .. }
            | OffloadError::UnknownRegion(_)
            | OffloadError::NotInImage(_)
            | OffloadError::MissingKernel { .. } => errc::NOT_FOUND,
            OffloadError::Driver { .. } => errc::BACKEND_FAILURE,
            OffloadError::OutOfDeviceMemory { .. } => errc::OUT_OF_RESOURCES,
            OffloadError::NotImplemented(_) => errc::UNIMPLEMENTED,
            OffloadError::Mapping(_) | OffloadError::Internal(_) => errc::UNKNOWN,
        };
        OlError { code, details: e.to_string() }
    }
}

/// `ol_error_struct_t`.
#[repr(C)]
pub struct ErrorStruct {
    pub code: u32,
    pub details: *const c_char,
}

// SAFETY: the record is immutable after creation and `details` points to a leaked, immutable C string.
unsafe impl Send for ErrorStruct {}
// SAFETY: as above; shared reads only.
unsafe impl Sync for ErrorStruct {}

static INTERNED: Mutex<Option<HashMap<(u32, String), &'static ErrorStruct>>> = Mutex::new(None);

/// Fork safety: the interned-records lock.
pub(crate) fn lock_for_fork(held: &mut crate::base::fork::ForkLocks) -> bool {
    held.mutex(&INTERNED)
}

/// The stable record for an error (created once per distinct error).
pub fn intern(e: &OlError) -> &'static ErrorStruct {
    let mut map = INTERNED.lock();
    let map = map.get_or_insert_with(HashMap::new);
    let key = (e.code, e.details.clone());
    if let Some(r) = map.get(&key) {
        return r;
    }
    let text = CString::new(e.details.replace('\0', " ")).unwrap_or_default();
    let rec: &'static ErrorStruct = Box::leak(Box::new(ErrorStruct { code: e.code, details: text.into_raw() }));
    map.insert(key, rec);
    rec
}
