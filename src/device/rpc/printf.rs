//! The printf opcodes' host side: the argument bytes a format needs, and
//! the formatting of a format with its argument bytes (what LLVM's
//! `rpc_server.h` does with its `MicroParser`; our own code).
//!
//! The device sends the format, the server answers how many argument bytes
//! the format reads, the device sends its argument buffer (naturally aligned
//! arguments, or packed for the `_PACKED` opcodes). Integer conversions
//! read 4 bytes (8 with `l`, `ll`, `j`, `z`, `t`, `L`, `q`), floating ones 8
//! (a double), `%c` and `*` 4, `%p`, `%s` and `%n` 8 (a device pointer).
//! `%s` strings are then fetched from the device one by one.

/// One conversion of a format.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Literal text `[start, end)` of the format.
    Text(usize, usize),
    /// A conversion: its flags, width and precision (`Star` when read from
    /// the arguments), long or not, and the conversion letter.
    Conv { flags: String, width: Field, precision: Field, long: bool, short: &'static str, conv: u8 },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    None,
    Given(u32),
    Star,
}

/// Splits a format into text and conversions (`%%` is text).
pub fn parse(fmt: &[u8]) -> Vec<Piece> {
    let mut out = Vec::new();
    let (mut i, mut text) = (0usize, 0usize);
    let n = fmt.len();
    while i < n {
        if fmt[i] != b'%' {
            i += 1;
            continue;
        }
        if i + 1 < n && fmt[i + 1] == b'%' {
            out.push(Piece::Text(text, i + 1));
            i += 2;
            text = i;
            continue;
        }
        if i > text {
            out.push(Piece::Text(text, i));
        }
        let start = i;
        i += 1;
        let mut flags = String::new();
        while i < n && matches!(fmt[i], b' ' | b'-' | b'+' | b'#' | b'0') {
            flags.push(fmt[i] as char);
            i += 1;
        }
        let num = |i: &mut usize| -> Field {
            if *i < n && fmt[*i] == b'*' {
                *i += 1;
                return Field::Star;
            }
            let s = *i;
            let mut v: u32 = 0;
            while *i < n && fmt[*i].is_ascii_digit() {
                v = v.saturating_mul(10).saturating_add((fmt[*i] - b'0') as u32).min(1 << 20);
                *i += 1;
            }
            if *i > s { Field::Given(v) } else { Field::None }
        };
        let width = num(&mut i);
        let precision = if i < n && fmt[i] == b'.' {
            i += 1;
            match num(&mut i) {
                Field::None => Field::Given(0),
                f => f,
            }
        } else {
            Field::None
        };
        let (mut long, mut short) = (false, "");
        match fmt.get(i) {
            Some(b'l') => {
                long = true;
                i += if fmt.get(i + 1) == Some(&b'l') { 2 } else { 1 };
            }
            Some(b'j' | b'z' | b't' | b'L' | b'q') => {
                long = true;
                i += 1;
            }
            Some(b'h') => {
                if fmt.get(i + 1) == Some(&b'h') {
                    short = "hh";
                    i += 2;
                } else {
                    short = "h";
                    i += 1;
                }
            }
            _ => {}
        }
        let Some(&conv) = fmt.get(i) else {
            // A format that ends inside a conversion: the rest is text.
            out.push(Piece::Text(start, n));
            text = n;
            break;
        };
        i += 1;
        out.push(Piece::Conv { flags, width, precision, long, short, conv });
        text = i;
    }
    if text < n {
        out.push(Piece::Text(text, n));
    }
    out
}

/// The sizes (bytes) of the arguments a piece reads, in order.
fn arg_sizes(p: &Piece) -> Vec<usize> {
    let Piece::Conv { width, precision, long, conv, .. } = p else { return Vec::new() };
    let mut v = Vec::new();
    if *width == Field::Star {
        v.push(4);
    }
    if *precision == Field::Star {
        v.push(4);
    }
    match conv {
        b'c' => v.push(4),
        b'd' | b'i' | b'o' | b'x' | b'X' | b'u' | b'b' | b'B' => v.push(if *long { 8 } else { 4 }),
        b'f' | b'F' | b'e' | b'E' | b'a' | b'A' | b'g' | b'G' | b'p' | b's' | b'n' => v.push(8),
        _ => {}
    }
    v
}

/// Reads the argument buffer as the device laid it out.
pub struct Args<'a> {
    buf: &'a [u8],
    pos: usize,
    packed: bool,
}

impl<'a> Args<'a> {
    pub fn new(buf: &'a [u8], packed: bool) -> Self {
        Args { buf, pos: 0, packed }
    }

    /// The next argument of `size` bytes (4 or 8), or `None` past the end.
    fn next(&mut self, size: usize) -> Option<u64> {
        if !self.packed {
            self.pos = self.pos.div_ceil(size) * size;
        }
        let b = self.buf.get(self.pos..self.pos + size)?;
        self.pos += size;
        Some(match size {
            4 => u32::from_le_bytes(b.try_into().ok()?) as u64,
            _ => u64::from_le_bytes(b.try_into().ok()?),
        })
    }
}

/// The number of argument bytes `fmt` reads.
pub fn args_size(fmt: &[u8], packed: bool) -> u64 {
    let mut pos = 0usize;
    for p in parse(fmt) {
        for s in arg_sizes(&p) {
            if !packed {
                pos = pos.div_ceil(s) * s;
            }
            pos += s;
        }
    }
    pos as u64
}

/// The device addresses of the non-null `%s` arguments, in order.
pub fn string_pointers(fmt: &[u8], args: &[u8], packed: bool) -> Vec<u64> {
    let mut a = Args::new(args, packed);
    let mut out = Vec::new();
    for p in parse(fmt) {
        let sizes = arg_sizes(&p);
        let vals: Vec<Option<u64>> = sizes.iter().map(|&s| a.next(s)).collect();
        if let (Piece::Conv { conv: b's', .. }, Some(Some(ptr))) = (&p, vals.last())
            && *ptr != 0
        {
            out.push(*ptr);
        }
    }
    out
}

/// Formats `fmt` with its argument bytes; `strings` are the `%s` strings in
/// the order of [`string_pointers`] (without their NUL). Conversions are
/// done by the C library's `snprintf`, one at a time, so they read exactly
/// as the host's printf would.
pub fn format(fmt: &[u8], args: &[u8], packed: bool, strings: &[Vec<u8>]) -> Vec<u8> {
    let mut a = Args::new(args, packed);
    let mut strs = strings.iter();
    let mut out = Vec::with_capacity(fmt.len() + 32);
    for p in parse(fmt) {
        let sizes = arg_sizes(&p);
        let vals: Vec<u64> = sizes.iter().map(|&s| a.next(s).unwrap_or(u64::MAX)).collect();
        match p {
            Piece::Text(s, e) => out.extend_from_slice(&fmt[s..e]),
            Piece::Conv { flags, width, precision, long, short, conv } => {
                let mut vi = vals.iter();
                let mut spec = String::from("%");
                spec.push_str(&flags);
                match width {
                    Field::Given(w) => spec.push_str(&w.to_string()),
                    Field::Star => {
                        let w = *vi.next().unwrap_or(&0) as u32 as i32;
                        spec.push_str(&w.clamp(-(1 << 20), 1 << 20).to_string())
                    }
                    Field::None => {}
                }
                match precision {
                    Field::Given(p) => spec.push_str(&format!(".{p}")),
                    Field::Star => {
                        let p = *vi.next().unwrap_or(&0) as u32 as i32;
                        if p >= 0 {
                            spec.push_str(&format!(".{}", p.min(1 << 20)));
                        }
                    }
                    Field::None => {}
                }
                let v = *vi.next().unwrap_or(&u64::MAX);
                match conv {
                    b'd' | b'i' | b'o' | b'x' | b'X' | b'u' | b'c' => {
                        spec.push_str(if long { "ll" } else { short });
                        spec.push(conv as char);
                        if long {
                            out.extend(c_format(&spec, Arg::Long(v)));
                        } else {
                            out.extend(c_format(&spec, Arg::Int(v as u32)));
                        }
                    }
                    b'b' | b'B' => {
                        // Binary: not every C library has it; done here.
                        let v = if long { v } else { v as u32 as u64 };
                        out.extend_from_slice(format!("{v:b}").as_bytes());
                    }
                    b'f' | b'F' | b'e' | b'E' | b'a' | b'A' | b'g' | b'G' => {
                        spec.push(conv as char);
                        out.extend(c_format(&spec, Arg::Double(f64::from_bits(v))));
                    }
                    b'p' => {
                        spec.push('p');
                        out.extend(c_format(&spec, Arg::Ptr(v)));
                    }
                    b's' => {
                        spec.push('s');
                        let s = if v == 0 || v == u64::MAX { None } else { strs.next() };
                        out.extend(c_format(&spec, Arg::Str(s.map(|s| s.as_slice()))));
                    }
                    b'n' => {}
                    other => {
                        // Not a conversion printf knows: printed as written.
                        spec.push(other as char);
                        out.extend_from_slice(spec.as_bytes());
                    }
                }
            }
        }
    }
    out
}

enum Arg<'a> {
    Int(u32),
    Long(u64),
    Double(f64),
    Ptr(u64),
    Str(Option<&'a [u8]>),
}

/// `snprintf(spec, arg)` into a fresh vector.
fn c_format(spec: &str, arg: Arg<'_>) -> Vec<u8> {
    let Ok(cspec) = std::ffi::CString::new(spec) else { return Vec::new() };
    let owned;
    let sptr: *const libc::c_char = match arg {
        Arg::Str(Some(s)) => {
            let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
            owned = std::ffi::CString::new(&s[..end]).unwrap_or_default();
            owned.as_ptr()
        }
        _ => std::ptr::null(),
    };
    let mut buf = vec![0u8; 128];
    for _ in 0..2 {
        let (p, n) = (buf.as_mut_ptr() as *mut libc::c_char, buf.len());
        // SAFETY: `cspec` is a NUL-terminated spec holding exactly one conversion, built by `format` to match the one argument passed with its C type; `buf` is writable for `n` bytes; `sptr` is null (printed as "(null)" by glibc) or a NUL-terminated string alive here.
        let r = unsafe {
            match arg {
                Arg::Int(v) => libc::snprintf(p, n, cspec.as_ptr(), v as libc::c_uint),
                Arg::Long(v) => libc::snprintf(p, n, cspec.as_ptr(), v as libc::c_ulonglong),
                Arg::Double(v) => libc::snprintf(p, n, cspec.as_ptr(), v),
                Arg::Ptr(v) => libc::snprintf(p, n, cspec.as_ptr(), v as usize as *const libc::c_void),
                Arg::Str(_) => libc::snprintf(p, n, cspec.as_ptr(), sptr),
            }
        };
        if r < 0 {
            return Vec::new();
        }
        let r = r as usize;
        if r < n {
            buf.truncate(r);
            return buf;
        }
        buf.resize(r + 1, 0);
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    #[test]
    fn sizes_follow_alignment() {
        assert_eq!(args_size(b"plain %% text", false), 0);
        assert_eq!(args_size(b"%d %ld", false), 16);
        assert_eq!(args_size(b"%d %ld", true), 12);
        assert_eq!(args_size(b"%*.*f %s %c", false), 28);
    }

    #[test]
    fn formats_like_printf() {
        let args = le(&[&7i32.to_le_bytes(), &[0; 4], &(-5i64).to_le_bytes(), &2.5f64.to_bits().to_le_bytes(), &0x10u64.to_le_bytes()]);
        let out = format(b"a=%03d b=%ld c=%.2f s=%s 100%%\n", &args, false, &[b"hi".to_vec()]);
        assert_eq!(String::from_utf8(out).unwrap(), "a=007 b=-5 c=2.50 s=hi 100%\n");
        assert_eq!(string_pointers(b"%d %ld %f %s", &args, false), vec![0x10]);
        let packed = le(&[&7i32.to_le_bytes(), &(-5i64).to_le_bytes()]);
        assert_eq!(format(b"%d|%lld", &packed, true, &[]), b"7|-5");
        // Missing arguments read as all ones, never past the buffer.
        assert_eq!(format(b"%u", &[], false, &[]), b"4294967295");
        // A null string prints as the C library does.
        assert_eq!(format(b"[%s]", &0u64.to_le_bytes(), false, &[]), b"[(null)]");
        let star = le(&[&5u32.to_le_bytes(), &42u32.to_le_bytes()]);
        assert_eq!(format(b"[%*d]", &star, false, &[]), b"[   42]");
        assert_eq!(format(b"trailing %", &[], false, &[]), b"trailing %");
    }
}
