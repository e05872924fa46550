//! CUDA fatbinaries (the `__nv_fatbin` container that nvcc, `fatbinary` and
//! clang's CUDA/`-foffload-via-llvm` toolchains embed): parsing, entry
//! decompression and the choice of the entry a device runs.
//!
//! Layout (read from `fatbinary` 13.0's output; the same layout
//! cuobjdump documents by its listing):
//!
//! * header, 16 bytes: `u32 magic = 0xBA55ED50`, `u16 version = 1`,
//!   `u16 header_size` (16), `u64 entries_size` (bytes of entries after the
//!   header). A linked `.nv_fatbin` section holds several containers back to
//!   back (each 8-byte aligned): all are read.
//! * each entry: `u16 kind` (1 PTX, 2 cubin ELF), `u16 version`, `u32
//!   header_size` (payload offset from the entry start), `u64 payload_size`,
//!   `u32 compressed_size`, `u32` (unused here), `u16 minor`, `u16 major`
//!   (of the tool), `u32 arch` (`sm_NN` as NN), `u32 name_offset`, `u32
//!   name_len`, `u64 flags` (`0x1` 64-bit, `0x10` Linux, `0x2000` LZ4,
//!   `0x8000` Zstandard), `u64` (0), `u64 uncompressed_size`.
//!
//! A compressed payload holds `compressed_size` bytes of an LZ4 block
//! (decompressed here, own code) or a Zstandard frame (decompressed through
//! the system's `libzstd.so.1` when it is there; otherwise a clear error).
//!
//! Everything here reads untrusted bytes: offsets and sizes are
//! bounds-checked, decompression is bounded by the declared size (capped),
//! and malformed input is an error naming the problem, never a panic.

use super::image::{self, ArchVariant, ComputeCapability, CudaArch, CudaImage, CudaImageKind};
use crate::base::error::{OffloadError, Result};
use std::borrow::Cow;

/// `__nv_fatbin` container magic.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// Bytes of the container header.
const HEADER_BYTES: usize = 16;
/// Bytes of the entry header fields read here (a PTX entry's header is 80).
const ENTRY_MIN_HEADER: usize = 64;
/// Entry kinds.
const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
/// Entry flags.
const FLAG_COMPRESS_LZ4: u64 = 0x2000;
const FLAG_COMPRESS_ZSTD: u64 = 0x8000;
/// Largest uncompressed entry accepted (a corrupt size must not allocate without bound).
pub const MAX_UNCOMPRESSED: u64 = 1 << 30;
/// Most entries read from one image.
const MAX_ENTRIES: usize = 4096;

/// Whether the bytes start like a fatbin container.
pub fn is_fatbin(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == FATBIN_MAGIC
}

/// How an entry's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Lz4,
    Zstd,
}

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Ptx,
    Cubin,
}

/// One entry of a fatbin, borrowed from the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'a> {
    pub kind: EntryKind,
    /// `sm_NN` as NN, from the entry header.
    pub sm: u32,
    pub flags: u64,
    pub compression: Compression,
    /// Declared size once decompressed (0 when stored plainly).
    pub uncompressed_size: u64,
    /// The stored bytes (compressed ones when compressed).
    pub payload: &'a [u8],
}

impl Entry<'_> {
    /// `sm_90 cubin`, `sm_80 PTX (zstd)`.
    pub fn describe(&self) -> String {
        let kind = match self.kind {
            EntryKind::Ptx => "PTX",
            EntryKind::Cubin => "cubin",
        };
        let comp = match self.compression {
            Compression::None => "",
            Compression::Lz4 => " (LZ4)",
            Compression::Zstd => " (zstd)",
        };
        format!("sm_{} {kind}{comp}", self.sm)
    }
}

fn bad(what: impl Into<String>) -> OffloadError {
    OffloadError::BadImage(format!("CUDA fatbinary: {}", what.into()))
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(off..off.checked_add(2)?)?.try_into().ok()?))
}
fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}
fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off.checked_add(8)?)?.try_into().ok()?))
}

/// Reads every entry of every container in `bytes`. Trailing zero padding
/// after the last container is accepted; anything else is an error.
pub fn parse(bytes: &[u8]) -> Result<Vec<Entry<'_>>> {
    if !is_fatbin(bytes) {
        return Err(bad("no fatbin header (magic 0xBA55ED50)"));
    }
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        if rest.iter().all(|&c| c == 0) {
            break;
        }
        if !is_fatbin(rest) {
            return Err(bad(format!("bytes after the container at offset {pos} are not another container")));
        }
        let version = u16_at(rest, 4).ok_or_else(|| bad("truncated header"))?;
        let header = u16_at(rest, 6).ok_or_else(|| bad("truncated header"))? as usize;
        let size = u64_at(rest, 8).ok_or_else(|| bad("truncated header"))?;
        if version != 1 {
            return Err(bad(format!("unknown container version {version}")));
        }
        if header < HEADER_BYTES {
            return Err(bad(format!("header size {header} is below {HEADER_BYTES}")));
        }
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| header.checked_add(s))
            .filter(|&e| e <= rest.len())
            .ok_or_else(|| bad(format!("entries of {size} bytes run past the image's {} bytes at offset {pos}", rest.len())))?;
        let mut off = header;
        while off < end {
            if end - off < ENTRY_MIN_HEADER {
                return Err(bad(format!("truncated entry header at offset {}", pos + off)));
            }
            let e = &rest[off..end];
            let field = |v: Option<u64>| v.ok_or_else(|| bad("truncated entry header"));
            let kind = field(u16_at(e, 0).map(u64::from))? as u16;
            let ehdr = field(u32_at(e, 4).map(u64::from))? as usize;
            let psize = field(u64_at(e, 8))?;
            let csize = field(u32_at(e, 16).map(u64::from))?;
            let sm = field(u32_at(e, 28).map(u64::from))? as u32;
            let flags = field(u64_at(e, 40))?;
            let usize_ = field(u64_at(e, 56))?;
            if ehdr < ENTRY_MIN_HEADER || ehdr > e.len() {
                return Err(bad(format!("entry at offset {} has a header size of {ehdr} bytes", pos + off)));
            }
            let payload_len = usize::try_from(psize)
                .ok()
                .filter(|&p| p <= e.len() - ehdr)
                .ok_or_else(|| bad(format!("entry at offset {} declares {psize} payload bytes, {} remain", pos + off, e.len() - ehdr)))?;
            let kind = match kind {
                KIND_PTX => EntryKind::Ptx,
                KIND_ELF => EntryKind::Cubin,
                k => {
                    // Other kinds (e.g. NVVM IR) are not loadable here; skip them.
                    crate::debug!("cuda: fatbin entry of unknown kind {k} skipped");
                    off += ehdr + payload_len;
                    continue;
                }
            };
            let compression = if flags & FLAG_COMPRESS_ZSTD != 0 {
                Compression::Zstd
            } else if flags & FLAG_COMPRESS_LZ4 != 0 {
                Compression::Lz4
            } else {
                Compression::None
            };
            let mut payload = &e[ehdr..ehdr + payload_len];
            if compression != Compression::None {
                // The payload is padded; the compressed stream is `csize` bytes.
                let c = usize::try_from(csize).ok().filter(|&c| c > 0 && c <= payload.len()).ok_or_else(|| {
                    bad(format!(
                        "compressed entry at offset {} declares {csize} compressed bytes in a {payload_len}-byte payload",
                        pos + off
                    ))
                })?;
                payload = &payload[..c];
                if usize_ == 0 || usize_ > MAX_UNCOMPRESSED {
                    return Err(bad(format!("compressed entry at offset {} declares {usize_} uncompressed bytes", pos + off)));
                }
            }
            if out.len() >= MAX_ENTRIES {
                return Err(bad(format!("more than {MAX_ENTRIES} entries")));
            }
            out.push(Entry { kind, sm, flags, compression, uncompressed_size: usize_, payload });
            off += ehdr + payload_len;
        }
        // The next container starts 8-byte aligned.
        pos += end;
        pos = pos.checked_next_multiple_of(8).unwrap_or(usize::MAX).min(bytes.len());
    }
    if out.is_empty() {
        return Err(bad("no PTX or cubin entries"));
    }
    Ok(out)
}

/// Decompresses an LZ4 block (the format `fatbinary --compress-mode=speed`
/// and CUDA 11/12 write) into exactly `want` bytes.
pub fn lz4_block(src: &[u8], want: usize) -> Result<Vec<u8>> {
    let err = |what: &str| bad(format!("LZ4 entry: {what}"));
    // LZ4 expands at most ~255:1: a larger declared size is corrupt (and is not allocated).
    if want > src.len().saturating_mul(255).saturating_add(16) {
        return Err(err(&format!("{want} bytes declared for {} compressed bytes", src.len())));
    }
    let mut out: Vec<u8> = Vec::with_capacity(want);
    let mut i = 0usize;
    let read_len = |i: &mut usize, mut len: usize| -> Result<usize> {
        if len == 15 {
            loop {
                let b = *src.get(*i).ok_or_else(|| err("length runs past the input"))?;
                *i += 1;
                len = len.checked_add(b as usize).ok_or_else(|| err("length overflows"))?;
                if b != 255 {
                    break;
                }
            }
        }
        Ok(len)
    };
    while i < src.len() {
        let token = src[i];
        i += 1;
        let lit = read_len(&mut i, (token >> 4) as usize)?;
        let lit_end = i.checked_add(lit).filter(|&e| e <= src.len()).ok_or_else(|| err("literals run past the input"))?;
        if out.len() + lit > want {
            return Err(err("output longer than declared"));
        }
        out.extend_from_slice(&src[i..lit_end]);
        i = lit_end;
        if i == src.len() {
            break; // the last sequence has literals only
        }
        let off = u16_at(src, i).ok_or_else(|| err("truncated match offset"))? as usize;
        i += 2;
        if off == 0 || off > out.len() {
            return Err(err("match offset outside the output"));
        }
        let mlen = read_len(&mut i, (token & 15) as usize)?.checked_add(4).ok_or_else(|| err("length overflows"))?;
        if out.len() + mlen > want {
            return Err(err("output longer than declared"));
        }
        let start = out.len() - off;
        for k in 0..mlen {
            let c = out[start + k];
            out.push(c);
        }
    }
    if out.len() != want {
        return Err(err(&format!("{} bytes decompressed, {want} declared", out.len())));
    }
    Ok(out)
}

/// `size_t ZSTD_decompress(void *dst, size_t dstCapacity, const void *src, size_t srcSize)`.
type ZstdDecompress = unsafe extern "C" fn(*mut u8, usize, *const u8, usize) -> usize;
/// `unsigned ZSTD_isError(size_t code)`.
type ZstdIsError = unsafe extern "C" fn(usize) -> u32;

/// The system's Zstandard decoder, loaded once on first use.
fn zstd() -> Option<&'static (ZstdDecompress, ZstdIsError)> {
    static LIB: std::sync::OnceLock<Option<(ZstdDecompress, ZstdIsError)>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        if std::env::var_os("OMPTARGET_RS_NO_ZSTD").is_some() {
            return None;
        }
        // SAFETY: loading the system's libzstd runs only its (trivial) initialisers.
        let lib = unsafe { libloading::Library::new("libzstd.so.1") }.ok()?;
        // SAFETY: the documented signatures of libzstd's stable API.
        let f = unsafe {
            let d = *lib.get::<ZstdDecompress>(b"ZSTD_decompress\0").ok()?;
            let e = *lib.get::<ZstdIsError>(b"ZSTD_isError\0").ok()?;
            (d, e)
        };
        // The functions stay valid for the process: the library is never unloaded.
        std::mem::forget(lib);
        Some(f)
    })
    .as_ref()
}

fn zstd_frame(src: &[u8], want: usize) -> Result<Vec<u8>> {
    let Some((decompress, is_error)) = zstd() else {
        return Err(bad(
            "the entry is Zstandard-compressed and libzstd.so.1 is not available to decompress it (install libzstd, or build the fatbin with `fatbinary --compress-mode=speed` (LZ4) or `--compress=false`)",
        ));
    };
    let mut out = vec![0u8; want];
    // SAFETY: `out` has `want` writable bytes and `src` `src.len()` readable ones; libzstd writes at most the capacity.
    let n = unsafe { decompress(out.as_mut_ptr(), want, src.as_ptr(), src.len()) };
    // SAFETY: a plain function of the returned code.
    if unsafe { is_error(n) } != 0 || n != want {
        return Err(bad(format!("Zstandard entry does not decompress to its declared {want} bytes")));
    }
    Ok(out)
}

/// The entry's bytes, decompressed when stored compressed.
pub fn contents<'a>(e: &Entry<'a>) -> Result<Cow<'a, [u8]>> {
    let want = usize::try_from(e.uncompressed_size).map_err(|_| bad("entry too large"))?;
    match e.compression {
        Compression::None => Ok(Cow::Borrowed(e.payload)),
        Compression::Lz4 => lz4_block(e.payload, want).map(Cow::Owned),
        Compression::Zstd => zstd_frame(e.payload, want).map(Cow::Owned),
    }
}

fn as_image(e: &Entry<'_>) -> CudaImage {
    let kind = match e.kind {
        EntryKind::Ptx => CudaImageKind::Ptx,
        EntryKind::Cubin => CudaImageKind::Cubin(image::CubinAbi::V2),
    };
    CudaImage { kind, arch: CudaArch { sm: e.sm, variant: ArchVariant::Plain } }
}

/// Whether the entry header says a device of `cc` can run it.
fn fits(e: &Entry<'_>, cc: ComputeCapability) -> bool {
    image::is_compatible(&as_image(e), cc)
}

/// Entries a device could run by their headers, best first: cubins by
/// descending SM (the newest the device runs natively), then PTX by
/// descending SM (JIT-compiled by the driver).
pub fn candidates<'a, 'e>(entries: &'e [Entry<'a>], cc: ComputeCapability) -> Vec<&'e Entry<'a>> {
    let mut c: Vec<&Entry<'a>> = entries.iter().filter(|e| fits(e, cc)).collect();
    c.sort_by_key(|e| (e.kind == EntryKind::Ptx, std::cmp::Reverse(e.sm)));
    c
}

/// The message for a fatbin with nothing a device of `cc` runs.
pub fn no_fit_message(entries: &[Entry<'_>], devices: &[ComputeCapability]) -> String {
    let list = |k: EntryKind| {
        let mut v: Vec<String> = entries.iter().filter(|e| e.kind == k).map(|e| format!("sm_{}", e.sm)).collect();
        v.dedup();
        if v.is_empty() { "none".to_string() } else { v.join(", ") }
    };
    let devs: Vec<String> = devices.iter().map(|cc| cc.to_string()).collect();
    format!(
        "CUDA fatbinary has no image for {}: cubins for {}; PTX for {} (a cubin runs on its own major version with an equal or newer minor, PTX on its architecture or newer)",
        if devs.is_empty() { "any device (no devices)".to_string() } else { devs.join(", ") },
        list(EntryKind::Cubin),
        list(EntryKind::Ptx)
    )
}

/// PTX text without the NULs that end and pad it (bytes after a NUL that
/// are not all NUL are kept: the PTX check then rejects them).
fn trim_nul_padding(d: &[u8]) -> &[u8] {
    match d.iter().position(|&c| c == 0) {
        Some(p) if d[p..].iter().all(|&c| c == 0) => &d[..p],
        _ => d,
    }
}

/// The image a device of `cc` loads from a fatbin: the best entry by
/// [`candidates`] whose bytes decompress and identify as what the header
/// says; an error saying why when there is none.
pub fn select<'a>(bytes: &'a [u8], cc: ComputeCapability) -> Result<(CudaImage, Cow<'a, [u8]>)> {
    let entries = parse(bytes)?;
    let mut why: Vec<String> = Vec::new();
    for e in candidates(&entries, cc) {
        let data = match contents(e) {
            // PTX text is NUL-terminated and padded with NULs in its entry.
            Ok(Cow::Borrowed(d)) if e.kind == EntryKind::Ptx => Cow::Borrowed(trim_nul_padding(d)),
            Ok(Cow::Owned(mut d)) if e.kind == EntryKind::Ptx => {
                let n = trim_nul_padding(&d).len();
                d.truncate(n);
                Cow::Owned(d)
            }
            Ok(d) => d,
            Err(err) => {
                why.push(format!("{}: {err}", e.describe()));
                continue;
            }
        };
        // The ELF readers need an 8-byte aligned image: an entry at an odd
        // place (the caller's buffer) is copied.
        let data = match data {
            Cow::Borrowed(d) if e.kind == EntryKind::Cubin && !(d.as_ptr() as usize).is_multiple_of(8) => Cow::Owned(d.to_vec()),
            d => d,
        };
        match image::identify(&data) {
            Ok(img) if image::is_compatible(&img, cc) => {
                crate::debug!("cuda: fatbin: chose the {} entry ({img}) of {} for {cc}", e.describe(), entries.len());
                return Ok((img, data));
            }
            Ok(img) => why.push(format!("{}: holds {img}, not runnable on {cc}", e.describe())),
            Err(err) => why.push(format!("{}: {err}", e.describe())),
        }
    }
    if why.is_empty() {
        return Err(OffloadError::IncompatibleImage(no_fit_message(&entries, &[cc])));
    }
    Err(OffloadError::BadImage(format!("CUDA fatbinary: no usable entry for {cc}: {}", why.join("; "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test entry: (kind, sm, flags, compressed size, uncompressed size, payload).
    type TestEntry<'a> = (u16, u32, u64, u32, u64, &'a [u8]);

    /// A container holding `entries`.
    fn build(entries: &[TestEntry<'_>]) -> Vec<u8> {
        let mut body = Vec::new();
        for &(kind, sm, flags, csize, usz, payload) in entries {
            let padded = payload.len().next_multiple_of(8);
            let mut h = vec![0u8; 64];
            h[0..2].copy_from_slice(&kind.to_le_bytes());
            h[2..4].copy_from_slice(&0x101u16.to_le_bytes());
            h[4..8].copy_from_slice(&64u32.to_le_bytes());
            h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
            h[16..20].copy_from_slice(&csize.to_le_bytes());
            h[28..32].copy_from_slice(&sm.to_le_bytes());
            h[40..48].copy_from_slice(&flags.to_le_bytes());
            h[56..64].copy_from_slice(&usz.to_le_bytes());
            body.extend_from_slice(&h);
            body.extend_from_slice(payload);
            body.resize(body.len() + padded - payload.len(), 0);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    fn cubin(sm: u32) -> Vec<u8> {
        // ELF ABI v2 header (ptxas 13): SM in bits 8..15 of e_flags.
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[7] = 0x41;
        h[8] = 8;
        h[16] = 2;
        h[18..20].copy_from_slice(&190u16.to_le_bytes());
        h[48..52].copy_from_slice(&((sm << 8) | 4).to_le_bytes());
        h
    }

    fn ptx(sm: u32) -> Vec<u8> {
        format!(".version 8.0\n.target sm_{sm}\n.address_size 64\n.visible .entry k()\n{{\n ret;\n}}\n").into_bytes()
    }

    fn cc(major: u32, minor: u32) -> ComputeCapability {
        ComputeCapability { major, minor }
    }

    #[test]
    fn picks_the_best_cubin_then_ptx() {
        let (c80, c86, c90, p80) = (cubin(80), cubin(86), cubin(90), ptx(80));
        let f = build(&[(2, 80, 0x11, 0, 0, &c80), (2, 86, 0x11, 0, 0, &c86), (2, 90, 0x11, 0, 0, &c90), (1, 80, 0x11, 0, 0, &p80)]);
        assert_eq!(parse(&f).unwrap().len(), 4);
        let sm = |c| select(&f, c).map(|(img, _)| (img.kind, img.arch.sm)).unwrap();
        assert_eq!(sm(cc(9, 0)), (CudaImageKind::Cubin(image::CubinAbi::V2), 90));
        assert_eq!(sm(cc(8, 9)), (CudaImageKind::Cubin(image::CubinAbi::V2), 86));
        assert_eq!(sm(cc(8, 0)), (CudaImageKind::Cubin(image::CubinAbi::V2), 80));
        // No cubin for major 10: the PTX is compiled by the driver.
        assert_eq!(sm(cc(10, 0)), (CudaImageKind::Ptx, 80));
        // Nothing for sm_75: the message lists what the fatbin holds.
        let e = select(&f, cc(7, 5)).unwrap_err().to_string();
        assert!(e.contains("sm_75") && e.contains("cubins for sm_80, sm_86, sm_90") && e.contains("PTX for sm_80"), "{e}");
    }

    #[test]
    fn several_containers_and_padding() {
        let (c80, c90) = (cubin(80), cubin(90));
        let mut f = build(&[(2, 80, 0x11, 0, 0, &c80)]);
        f.resize(f.len().next_multiple_of(8), 0);
        f.extend(build(&[(2, 90, 0x11, 0, 0, &c90)]));
        f.extend([0u8; 16]);
        assert_eq!(parse(&f).unwrap().len(), 2);
        assert_eq!(select(&f, cc(9, 0)).unwrap().0.arch.sm, 90);
        f.extend(b"junk");
        assert!(parse(&f).unwrap_err().to_string().contains("not another container"));
    }

    #[test]
    fn lz4_entries() {
        // Hand-made LZ4 block of a cubin header: literals, a match, literals.
        let plain = cubin(90);
        // 64 bytes: 8 literal bytes, a 32-byte match at offset 8 (periodic data), rest literals.
        let mut data = plain[..8].to_vec();
        let mut periodic = data.clone();
        while periodic.len() < 40 {
            periodic.push(data[periodic.len() % 8]);
        }
        data = periodic.clone();
        data.extend_from_slice(&plain[40..]);
        // Token: 8 literals, match length 32 (-4 = 28 = 15 + 13).
        let mut block = vec![(8 << 4) | 15];
        block.extend_from_slice(&data[..8]);
        block.extend_from_slice(&8u16.to_le_bytes());
        block.push(13);
        block.push((15 << 4) as u8); // literals only: 24 (15 + 9)
        block.push(9);
        block.extend_from_slice(&data[40..]);
        assert_eq!(lz4_block(&block, data.len()).unwrap(), data);
        assert!(lz4_block(&block, data.len() + 1).is_err());
        assert!(lz4_block(&block[..block.len() - 1], data.len()).is_err());
        let mut bad_off = block.clone();
        bad_off[9] = 200;
        assert!(lz4_block(&bad_off, data.len()).is_err());
        // Not a cubin once decompressed (periodic bytes): a clear error, no panic.
        let f = build(&[(2, 90, 0x2011, block.len() as u32, data.len() as u64, &block)]);
        let e = select(&f, cc(9, 0)).unwrap_err().to_string();
        assert!(e.contains("sm_90 cubin (LZ4)"), "{e}");
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let c90 = cubin(90);
        let f = build(&[(2, 90, 0x11, 0, 0, &c90)]);
        for n in 0..f.len() {
            let _ = parse(&f[..n]);
            let _ = select(&f[..n], cc(9, 0));
        }
        assert!(parse(&f[..40]).unwrap_err().to_string().contains("run past"));
        for i in (0..f.len() * 8).step_by(if cfg!(miri) { 64 } else { 1 }) {
            let mut c = f.clone();
            c[i / 8] ^= 1 << (i % 8);
            let _ = select(&c, cc(9, 0));
        }
        // A compressed entry whose sizes do not fit.
        let z = build(&[(2, 90, 0x2011, 9999, 64, &c90)]);
        assert!(parse(&z).unwrap_err().to_string().contains("compressed bytes"));
        let z = build(&[(2, 90, 0x2011, 8, MAX_UNCOMPRESSED + 1, &c90)]);
        assert!(parse(&z).unwrap_err().to_string().contains("uncompressed bytes"));
        assert!(parse(b"\x50\xed\x55\xba").is_err());
        assert!(!is_fatbin(b"\x7fELF"));
    }
}
