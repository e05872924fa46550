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
