//! The shape every `ol*Info` / `ol*InfoSize` pair shares: a property value,
//! its size (strings include their NUL), and the checks 22.1 documents, in
//! its order (`PropSize == 0`, NULL handle, NULL output, then the handle, the
//! enumeration and the size).

use super::error::{OlResult, err, errc, validation};
use core::ffi::c_void;

/// A property value.
pub enum Value {
    U32(u32),
    U64(u64),
    Usize(usize),
    Ptr(usize),
    Bool(bool),
    Str(String),
    Dims([u32; 3]),
    /// An enumeration value with its names (printed by name in the trace).
    Enum(u32, &'static [&'static str]),
}

impl Value {
    /// How 22.1's trace prints the value.
    fn trace(&self) -> String {
        match self {
            Value::U32(v) => v.to_string(),
            Value::U64(v) => v.to_string(),
            Value::Usize(v) => v.to_string(),
            Value::Ptr(0) => "nullptr".into(),
            Value::Ptr(v) => format!("{v:#x}"),
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => s.clone(),
            Value::Dims([x, y, z]) => format!("(struct ol_dimensions_t){{.x = {x}, .y = {y}, .z = {z}}}"),
            Value::Enum(v, names) => names.get(*v as usize).map_or_else(|| v.to_string(), |n| n.to_string()),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        match self {
            Value::U32(v) | Value::Enum(v, _) => v.to_ne_bytes().to_vec(),
            Value::U64(v) => v.to_ne_bytes().to_vec(),
            Value::Usize(v) | Value::Ptr(v) => v.to_ne_bytes().to_vec(),
            Value::Bool(b) => vec![*b as u8],
            Value::Str(s) => {
                let mut b = s.as_bytes().to_vec();
                b.push(0);
                b
            }
            Value::Dims(d) => d.iter().flat_map(|v| v.to_ne_bytes()).collect(),
        }
    }
}

/// `ol*Info`: checks, then writes the value to `out` (`size` bytes).
pub(crate) fn get(
    handle_is_null: bool,
    handle_name: &str,
    null_code: u32,
    size: usize,
    out: *mut c_void,
    value: impl FnOnce() -> OlResult<Value>,
) -> OlResult<()> {
    if size == 0 {
        return validation(errc::INVALID_SIZE, "PropSize == 0");
    }
    if handle_is_null {
        return validation(null_code, &format!("NULL == {handle_name}"));
    }
    if out.is_null() {
        return validation(errc::INVALID_NULL_POINTER, "NULL == PropValue");
    }
    let v = value()?;
    let bytes = v.bytes();
    if size < bytes.len() {
        return err(errc::INVALID_SIZE, "provided size is invalid");
    }
    if super::tracing() {
        let text = v.trace();
        super::types::OUT_NOTE.with(|n| *n.borrow_mut() = Some(text));
    }
    // SAFETY: `out` is non-NULL and the caller provides `size` >= bytes.len() writable bytes (the header's contract); u8 copies need no alignment.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len()) };
    Ok(())
}

/// `ol*InfoSize`: checks, then writes the value's size to `out`.
pub(crate) fn size(
    handle_is_null: bool,
    handle_name: &str,
    null_code: u32,
    out: *mut usize,
    value: impl FnOnce() -> OlResult<Value>,
) -> OlResult<()> {
    if handle_is_null {
        return validation(null_code, &format!("NULL == {handle_name}"));
    }
    if out.is_null() {
        return validation(errc::INVALID_NULL_POINTER, "NULL == PropSizeRet");
    }
    let n = value()?.bytes().len();
    write_out(out, n)
}

/// Writes one value through an output pointer from C (NULL and
/// misalignment are reported, never written through).
pub(crate) fn write_out<T>(out: *mut T, value: T) -> OlResult<()> {
    if out.is_null() {
        return err(errc::INVALID_NULL_POINTER, "output pointer is NULL");
    }
    if !(out as usize).is_multiple_of(align_of::<T>()) {
        return err(errc::INVALID_ARGUMENT, format!("output pointer {out:p} is misaligned"));
    }
    // SAFETY: non-NULL and aligned; the header makes the caller provide a writable object of this type.
    unsafe { out.write(value) };
    Ok(())
}
