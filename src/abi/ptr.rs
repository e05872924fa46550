//! The only helpers that turn raw pointers from C into Rust values. Each
//! checks what can be checked (NULL, alignment, length overflow) and returns
//! an error naming the problem instead of invoking undefined behaviour.

use crate::abi::types::ident_t;
use crate::base::error::{OffloadError, Result};
use core::ffi::{CStr, c_char};

/// Borrows `len` elements at `ptr`.
///
/// NULL with `len == 0` is an empty slice; NULL with `len > 0`, a misaligned
/// pointer or a byte length over `isize::MAX` is an `InvalidArgument` naming
/// `what`.
///
/// # Safety
/// Unless NULL, `ptr` must point to `len` initialised `T` that stay valid and
/// unmodified for `'a`.
pub unsafe fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(OffloadError::InvalidArgument(format!("{what} is NULL but {len} elements are expected")));
    }
    if !(ptr as usize).is_multiple_of(align_of::<T>()) {
        return Err(OffloadError::InvalidArgument(format!("{what} at {ptr:p} is misaligned")));
    }
    if len.checked_mul(size_of::<T>()).is_none_or(|b| b > isize::MAX as usize) {
        return Err(OffloadError::InvalidArgument(format!("{what}: {len} elements overflow")));
    }
    // SAFETY: non-NULL, aligned, length checked above; validity is the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
}

/// Copies `len` elements at `ptr`, or returns an `InvalidArgument` naming
/// `what` when the range is not readable memory (NULL, misalignment and
/// overflow as in [`slice`]). The copy goes through `process_vm_readv` on this
/// process, which reports unreadable memory as `EFAULT` instead of faulting;
/// where the kernel refuses the call itself (`ENOSYS`, `EPERM`), it falls back
/// to a plain read.
///
/// # Safety
/// Every bit pattern must be a valid `T`; in the fallback case the range
/// must be readable (the caller's contract, as for [`slice`]).
pub unsafe fn copy_checked<T: Copy>(ptr: *const T, len: usize, what: &str) -> Result<Vec<T>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    let bytes = len.checked_mul(size_of::<T>()).filter(|&b| b <= isize::MAX as usize);
    let Some(bytes) = bytes.filter(|_| !ptr.is_null() && (ptr as usize).is_multiple_of(align_of::<T>())) else {
        // SAFETY: `slice` returns its error for these inputs before reading.
        return unsafe { slice(ptr, len, what) }.map(|s| s.to_vec());
    };
    let mut out: Vec<T> = Vec::with_capacity(len);
    let local = libc::iovec { iov_base: out.as_mut_ptr().cast(), iov_len: bytes };
    let remote = libc::iovec { iov_base: ptr as *mut libc::c_void, iov_len: bytes };
    // SAFETY: `local` is the Vec's spare capacity of `bytes` bytes; the kernel checks `remote` and never faults on it.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == bytes as isize {
        // SAFETY: the kernel wrote all `len` elements; any bit pattern is a valid `T` (caller's contract).
        unsafe { out.set_len(len) };
        return Ok(out);
    }
    let errno = std::io::Error::last_os_error().raw_os_error();
    if n < 0 && matches!(errno, Some(libc::ENOSYS) | Some(libc::EPERM)) {
        // SAFETY: checked above; readability is the caller's contract here.
        return unsafe { slice(ptr, len, what) }.map(|s| s.to_vec());
    }
    Err(OffloadError::InvalidArgument(format!("{what} at {ptr:p} ({bytes} bytes) is not readable memory")))
}

/// Borrows the bytes `[begin, end)`.
///
/// # Safety
/// Unless an error is returned for NULL/reversed bounds, the range must be
/// readable memory that stays valid for `'a`.
pub unsafe fn byte_range<'a>(begin: *const u8, end: *const u8, what: &str) -> Result<&'a [u8]> {
    if begin.is_null() || end.is_null() {
        if begin == end {
            return Ok(&[]);
        }
        return Err(OffloadError::InvalidArgument(format!("{what}: one bound is NULL")));
    }
    let len = (end as usize)
        .checked_sub(begin as usize)
        .ok_or_else(|| OffloadError::InvalidArgument(format!("{what}: end {end:p} before start {begin:p}")))?;
    // SAFETY: bounds checked; readability is the caller's contract.
    unsafe { slice(begin, len, what) }
}

/// Reads a NUL-terminated string; NULL gives `None`. Invalid UTF-8 is replaced.
///
/// # Safety
/// Unless NULL, `ptr` must point to a NUL-terminated string valid for the call.
pub unsafe fn c_string(ptr: *const c_char) -> Option<String> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-NULL; NUL termination is the caller's contract.
    Some(unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned())
}

/// The source location carried by an `ident_t`, split from its `psource`
/// string `";file;function;line;col;;"`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceLoc {
    pub file: String,
    pub function: String,
    pub line: u32,
    pub column: u32,
}

impl SourceLoc {
    /// Parses a `psource` string. Missing fields read as `unknown` / 0.
    pub fn parse(psource: &str) -> Self {
        let mut it = psource.split(';').skip(1);
        let mut field = || it.next().filter(|s| !s.is_empty()).map(str::to_owned);
        // Messages show the file name without its directories, as LLVM's SourceInfo does.
        let file = field().map(|f| basename(&f).to_owned()).unwrap_or_else(|| "unknown".into());
        let function = field().unwrap_or_else(|| "unknown".into());
        let line = field().and_then(|s| s.parse().ok()).unwrap_or(0);
        let column = field().and_then(|s| s.parse().ok()).unwrap_or(0);
        SourceLoc { file, function, line, column }
    }

    /// True when the compiler recorded a real location (built with `-g`).
    pub fn is_available(&self) -> bool {
        self.line != 0 || self.column != 0
    }

    /// Reads the location of an `ident_t`; NULL gives the unknown location.
    ///
    /// # Safety
    /// Unless NULL, `loc` must point to a valid `ident_t` whose `psource` is
    /// NULL or a NUL-terminated string.
    pub unsafe fn from_ident(loc: *const ident_t) -> Self {
        if loc.is_null() || !(loc as usize).is_multiple_of(align_of::<ident_t>()) {
            return Self::parse("");
        }
        // SAFETY: non-NULL and aligned; validity is the caller's contract.
        let psource = unsafe { (*loc).psource };
        // SAFETY: psource is NULL or a C string, by the same contract.
        Self::parse(&unsafe { c_string(psource) }.unwrap_or_default())
    }
}

/// An `ident_t` pointer whose location string is parsed only when a
/// message needs it (parsing on every call would cost more than the call).
#[derive(Debug, Clone, Copy)]
pub struct Loc(*const ident_t);

impl Loc {
    /// Wraps a location pointer.
    ///
    /// # Safety
    /// `loc` is NULL or points to a valid `ident_t` (with a NULL or
    /// NUL-terminated `psource`) that outlives the value.
    pub unsafe fn new(loc: *const ident_t) -> Self {
        Loc(loc)
    }
    /// No location (`Loc == NULL`).
    pub fn none() -> Self {
        Loc(core::ptr::null())
    }
    /// The parsed location.
    pub fn source(&self) -> SourceLoc {
        // SAFETY: guaranteed by the constructor's contract.
        unsafe { SourceLoc::from_ident(self.0) }
    }
}

impl std::fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The last component of a path.
fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The variable name inside a `map_var_info_t` string `";name;file;line;col;;"`.
pub fn var_name(info: &str) -> String {
    var_name_of(info).to_owned()
}

fn var_name_of(info: &str) -> &str {
    // ';' is ASCII: its positions are char boundaries.
    field_1(info.as_bytes()).map(|(b, e)| &info[b..e]).unwrap_or("unknown")
}

/// Byte range of the second `;`-separated field (`split(';').nth(1)`), when
/// it exists and is not empty.
fn field_1(s: &[u8]) -> Option<(usize, usize)> {
    let b = s.iter().position(|&c| c == b';')? + 1;
    let e = s[b..].iter().position(|&c| c == b';').map_or(s.len(), |n| b + n);
    (e > b).then_some((b, e))
}

/// The variable name of a map name (as in [`var_info`]) without copying it:
/// borrowed from the string when it is valid UTF-8 (the compiler's names
/// are), else the owned, lossy form [`var_info`] gives.
///
/// # Safety
/// As [`var_info`]; the borrowed name lives as long as the string.
pub unsafe fn var_name_cow<'a>(info: usize) -> std::borrow::Cow<'a, str> {
    if info == 0 {
        return std::borrow::Cow::Borrowed("unknown");
    }
    // SAFETY: non-NULL; NUL termination and lifetime are the caller's contract.
    let bytes = unsafe { CStr::from_ptr(info as *const c_char) }.to_bytes();
    // Only the name field is decoded: a lossy decoding of the whole string
    // never moves or invents a ';' (ASCII), so the field is the same.
    let Some((b, e)) = field_1(bytes) else {
        return std::borrow::Cow::Borrowed("unknown");
    };
    match core::str::from_utf8(&bytes[b..e]) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        // SAFETY: forwarded contract.
        Err(_) => std::borrow::Cow::Owned(unsafe { var_info(info) }.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_psource() {
        let l = SourceLoc::parse(";dump.c;main;7;1;;");
        assert_eq!((l.file.as_str(), l.line, l.column), ("dump.c", 7, 1));
        assert!(l.is_available());
        assert!(!SourceLoc::parse(";unknown;unknown;0;0;;").is_available());
        assert_eq!(SourceLoc::parse("").to_string(), "unknown:0:0");
        assert_eq!(SourceLoc::parse(";/a/b/k.c;main;8;3;;").to_string(), "k.c:8:3");
        assert_eq!(SourceLoc::parse(";x;y;notanumber").line, 0);
    }

    #[test]
    fn var_names() {
        assert_eq!(var_name(";a[0:n];k.c;8;3;;"), "a[0:n]");
        assert_eq!(var_name(""), "unknown");
        for s in [&b";s.in.p[0:5];k.c;8;3;;\0"[..], b";;k.c;8;3;;\0", b"\0", b";x\xff.y;k.c;1;1;;\0"] {
            let info = s.as_ptr() as usize;
            // SAFETY: NUL-terminated byte strings that outlive the calls.
            assert_eq!(unsafe { var_name_cow(info) }, unsafe { var_info(info) }.0);
        }
        // SAFETY: 0 is never dereferenced.
        assert_eq!(unsafe { var_name_cow(0) }, unsafe { var_info(0) }.0);
    }

    #[test]
    fn slice_checks() {
        // SAFETY: NULL with zero length is never dereferenced.
        assert!(unsafe { slice::<u64>(core::ptr::null(), 0, "x") }.unwrap().is_empty());
        // SAFETY: the NULL pointer is rejected before use.
        assert!(unsafe { slice::<u64>(core::ptr::null(), 3, "x") }.is_err());
        let v = [1u64, 2];
        let mis = (v.as_ptr() as usize + 1) as *const u64;
        // SAFETY: the misaligned pointer is rejected before use.
        assert!(unsafe { slice(mis, 1, "x") }.is_err());
    }
}

/// Bytes owned by the program (a registered device image) that stay valid
/// until the descriptor that named them is unregistered.
#[derive(Debug, Clone, Copy)]
pub struct ProgramBytes {
    ptr: usize,
    len: usize,
}

impl ProgramBytes {
    /// Records `[begin, end)` after checking the bounds.
    ///
    /// # Safety
    /// The range must stay readable and unchanged for as long as the value
    /// (or any copy) is used; the libomptarget ABI guarantees this for images
    /// until `__tgt_unregister_lib`.
    pub unsafe fn new(begin: *const u8, end: *const u8, what: &str) -> Result<Self> {
        // SAFETY: forwarded contract; only the bounds are checked here.
        let s = unsafe { byte_range(begin, end, what)? };
        Ok(ProgramBytes { ptr: s.as_ptr() as usize, len: s.len() })
    }

    /// Wraps bytes with static lifetime (tests, embedded images).
    pub fn from_static(b: &'static [u8]) -> Self {
        ProgramBytes { ptr: b.as_ptr() as usize, len: b.len() }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: constructed from a checked, readable range whose validity the constructor's caller guaranteed for the value's lifetime.
        unsafe { core::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

/// Name and declaration location of a `map_var_info_t` (0 = none):
/// (`name`, `file:line:col`).
///
/// # Safety
/// `info` must be 0 or the address of a NUL-terminated string that outlives
/// the call (compiler-emitted name strings are static).
pub unsafe fn var_info(info: usize) -> (String, String) {
    // SAFETY: forwarded contract.
    let s = unsafe { c_string(info as *const c_char) }.unwrap_or_default();
    // ";name;file;line;col;;": unlike psource there is no function field.
    let field = |i: usize| s.split(';').nth(i).filter(|f| !f.is_empty());
    let file = field(2).map(basename).unwrap_or("unknown");
    let num = |i: usize| field(i).and_then(|f| f.parse::<u32>().ok()).unwrap_or(0);
    (var_name(&s), format!("{file}:{}:{}", num(3), num(4)))
}
