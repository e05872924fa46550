//! Writing through the C program's own `stdout` and `stderr` streams.

use std::fmt::Write as _;

/// One of the C library's standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CStream {
    Stdout,
    Stderr,
}

unsafe extern "C" {
    // glibc's standard streams (`FILE *stdout`, `FILE *stderr`).
    static stdout: *mut libc::FILE;
    static stderr: *mut libc::FILE;
}

/// Writes `text` through the C library's `stdout` or `stderr` stream, as
/// LLVM 22.1 does (fprintf), so it lands in the program's order: after what
/// the program printed before and still holds in stdio's buffer (stdout to
/// a pipe or file is fully buffered), and buffered like it. Writing to the
/// file descriptor directly would overtake that text.
pub fn c_write(stream: CStream, text: &str) {
    if text.is_empty() {
        return;
    }
    // SAFETY: reading glibc's stream pointers, initialised before any constructor runs and never changed by us.
    let f = unsafe {
        match stream {
            CStream::Stdout => stdout,
            CStream::Stderr => stderr,
        }
    };
    if f.is_null() {
        return;
    }
    // SAFETY: `f` is a live stdio stream; `text` is valid for `len` bytes; fwrite locks the stream itself.
    unsafe { libc::fwrite(text.as_ptr().cast(), 1, text.len(), f) };
}

/// [`c_write`] of one formatted line (a newline is added).
pub fn c_line(stream: CStream, args: std::fmt::Arguments<'_>) {
    let mut line = String::with_capacity(128);
    let _ = line.write_fmt(args);
    line.push('\n');
    c_write(stream, &line);
}

fn file_of(stream: CStream) -> *mut libc::FILE {
    // SAFETY: reading glibc's stream pointers, initialised before any constructor runs and never changed by us.
    unsafe {
        match stream {
            CStream::Stdout => stdout,
            CStream::Stderr => stderr,
        }
    }
}

/// Writes raw bytes through the C stream with one `fwrite` (one call's
/// bytes are never interleaved with another's); the bytes written.
pub fn c_write_bytes(stream: CStream, bytes: &[u8]) -> usize {
    let f = file_of(stream);
    if bytes.is_empty() || f.is_null() {
        return 0;
    }
    // SAFETY: `f` is a live stdio stream; `bytes` is valid for its length; fwrite locks the stream itself.
    unsafe { libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), f) }
}

/// `fflush` of one C stream (0, or EOF on failure).
pub fn c_flush(stream: CStream) -> i32 {
    let f = file_of(stream);
    if f.is_null() {
        return 0;
    }
    // SAFETY: `f` is a live stdio stream.
    unsafe { libc::fflush(f) }
}

/// `fflush(NULL)`: every C output stream.
pub fn c_flush_all() {
    // SAFETY: fflush(NULL) flushes every open output stream; always allowed.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// Which standard stream `ptr` is (the C library's own `FILE *`), if any.
pub fn which(ptr: usize) -> Option<CStream> {
    [CStream::Stdout, CStream::Stderr].into_iter().find(|&s| ptr != 0 && file_of(s) as usize == ptr)
}
