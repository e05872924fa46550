//! Randomised fuzzing of every parser of untrusted bytes, run in normal test
//! runs: OffloadBinary containers, ELF identification, offload-entry tables.
//! Inputs are valid samples mutated by truncation, bit flips, byte
//! overwrites, splices and random lengths; a parser may reject any of them
//! but must never panic, read out of bounds or return ranges outside its input.
//! The seed is printed; set OMPTARGET_RS_SEED to replay.

use omptarget_rs::base::image::{check_elf_layout, elf_ident, elf_symbol_size, parse_offload_binary};
use omptarget_rs::openmp::entries::parse_entries;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

fn seed() -> u64 {
    let s = std::env::var("OMPTARGET_RS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1) | 1
    });
    println!("seed = {s} (set OMPTARGET_RS_SEED to replay)");
    s
}

fn mutate(rng: &mut Rng, sample: &[u8]) -> Vec<u8> {
    let mut b = sample.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 => b.truncate(rng.below(b.len() + 1)),
            1 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            2 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = [0, 0xff, 0x7f, 0x80, 1][rng.below(5)];
            }
            3 if b.len() >= 8 => {
                // Overwrite a qword with an extreme value (offsets, sizes).
                let i = rng.below(b.len() - 7);
                let v = [0u64, u64::MAX, 1 << 63, b.len() as u64, (b.len() as u64).wrapping_sub(1)][rng.below(5)];
                b[i..i + 8].copy_from_slice(&v.to_le_bytes());
            }
            _ => {
                let extra = rng.below(64);
                for _ in 0..extra {
                    b.push(rng.next() as u8);
                }
            }
        }
    }
    b
}

/// A container like clang-offload-packager writes, around `image`.
fn container(image: &[u8]) -> Vec<u8> {
    let strings = b"\0triple\0x86_64-unknown-linux-gnu\0arch\0\0";
    let str_at = 32 + 40;
    let data_at = str_at + 32;
    let img_at = (data_at + strings.len()).next_multiple_of(8);
    let total = img_at + image.len();
    let mut b = Vec::new();
    b.extend_from_slice(&[0x10, 0xff, 0x10, 0xad]);
    b.extend_from_slice(&1u32.to_le_bytes());
    for v in [total as u64, 32, 40] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    for v in [str_at as u64, 2, img_at as u64, image.len() as u64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for v in [data_at + 1, data_at + 8, data_at + 33, data_at + 38] {
        b.extend_from_slice(&(v as u64).to_le_bytes());
    }
    b.extend_from_slice(strings);
    b.resize(img_at, 0);
    b.extend_from_slice(image);
    b
}

fn elf_sample() -> Vec<u8> {
    // A real shared object: this test binary's own libc is too big; use the
    // first 4 KiB of our own executable's ELF header area plus padding.
    let exe = std::fs::read(std::env::current_exe().expect("test exe")).expect("read test exe");
    exe[..exe.len().min(8192)].to_vec()
}

#[test]
fn offload_binary_parser_survives_mutations() {
    let mut rng = Rng(seed());
    let sample = container(&elf_sample());
    assert!(parse_offload_binary(&sample).unwrap().is_some());
    for _ in 0..20_000 {
        let b = mutate(&mut rng, &sample);
        if let Ok(Some(ob)) = parse_offload_binary(&b) {
            assert!(ob.image.start <= ob.image.end && ob.image.end <= b.len(), "image range outside the input");
        }
    }
}

#[test]
fn elf_parsers_survive_mutations() {
    let mut rng = Rng(seed());
    let sample = elf_sample();
    assert!(elf_ident(&sample).is_ok());
    for _ in 0..3_000 {
        let b = mutate(&mut rng, &sample);
        let _ = elf_ident(&b);
        let _ = elf_symbol_size(&b, "main");
        let _ = check_elf_layout(&b);
    }
}

/// The layout check accepts a whole image and rejects every
/// truncation of one, whatever was mutated in the headers: an accepted
/// image has every segment and section inside its bytes.
#[test]
fn elf_layout_check_survives_mutations() {
    let mut rng = Rng(seed());
    let whole = std::fs::read(std::env::current_exe().expect("test exe")).expect("read test exe");
    assert!(check_elf_layout(&whole).is_ok());
    assert!(check_elf_layout(&whole[..whole.len() / 2]).is_err());
    let sample = elf_sample();
    for _ in 0..20_000 {
        let b = mutate(&mut rng, &sample);
        let _ = check_elf_layout(&b);
    }
}

/// The host plugin's check before `dlopen` on mutated real shared objects
/// (small system libraries): it may reject anything, never panics, and an
/// image it accepts has every segment and section inside its bytes.
#[test]
fn shared_object_check_survives_mutations() {
    use omptarget_rs::base::elf::check_shared_object;
    let mut rng = Rng(seed());
    let samples: Vec<Vec<u8>> = ["libdl.so.2", "libutil.so.1", "libpthread.so.0", "librt.so.1"]
        .iter()
        .filter_map(|l| std::fs::read(format!("/lib/x86_64-linux-gnu/{l}")).ok())
        .collect();
    for sample in &samples {
        check_shared_object(sample).expect("a system library passes");
        for _ in 0..5_000 {
            let b = mutate(&mut rng, sample);
            if check_shared_object(&b).is_ok() {
                assert!(check_elf_layout(&b).is_ok(), "accepted an image whose layout check fails");
            }
        }
    }
}

#[test]
fn entry_table_parser_survives_mutations() {
    let mut rng = Rng(seed());
    let mut sample = Vec::new();
    for k in 0..4u64 {
        sample.extend_from_slice(&0u64.to_le_bytes());
        sample.extend_from_slice(&1u16.to_le_bytes());
        sample.extend_from_slice(&1u16.to_le_bytes());
        sample.extend_from_slice(&0u32.to_le_bytes());
        for v in [0x1000 + k, 0x2000 + k, k * 4, 0, 0] {
            sample.extend_from_slice(&v.to_le_bytes());
        }
    }
    // Names resolve only for the pointer values the sample uses; anything
    // else is an unreadable pointer and must be rejected, not dereferenced.
    let names = |p: usize| {
        if (0x2000..0x2004).contains(&p) {
            Ok(format!("sym{p:x}"))
        } else {
            Err(omptarget_rs::base::error::OffloadError::BadImage(format!("bad name pointer {p:#x}")))
        }
    };
    assert_eq!(parse_entries(&sample, names).unwrap().1.len(), 4);
    for _ in 0..20_000 {
        let b = mutate(&mut rng, &sample);
        if let Ok((_, entries)) = parse_entries(&b, names) {
            assert!(entries.len() * 32 <= b.len());
        }
    }
}

/// A CUDA fatbin of a cubin header, an LZ4-compressed copy of it
/// and PTX, mutated: the container walk, LZ4 decoding and the per-device
/// choice (`omptarget_rs::fuzzing::cuda_fatbin`) never panic, and accepted
/// entries lie inside the input.
#[test]
fn cuda_fatbin_parser_survives_mutations() {
    fn entry(kind: u16, sm: u32, flags: u64, csize: u32, usize_: u64, payload: &[u8]) -> Vec<u8> {
        let padded = payload.len().next_multiple_of(8);
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        h[16..20].copy_from_slice(&csize.to_le_bytes());
        h[28..32].copy_from_slice(&sm.to_le_bytes());
        h[40..48].copy_from_slice(&flags.to_le_bytes());
        h[56..64].copy_from_slice(&usize_.to_le_bytes());
        h.extend_from_slice(payload);
        h.resize(64 + padded, 0);
        h
    }
    let mut cubin = vec![0u8; 64];
    cubin[..8].copy_from_slice(b"\x7fELF\x02\x01\x01\x41");
    cubin[8] = 8;
    cubin[16] = 2;
    cubin[18..20].copy_from_slice(&190u16.to_le_bytes());
    cubin[48..52].copy_from_slice(&((90u32 << 8) | 4).to_le_bytes());
    // LZ4: the 64 bytes as literals (token 0xF0, 64 - 15 = 49 extra).
    let mut lz4 = vec![0xf0, 49];
    lz4.extend_from_slice(&cubin);
    let ptx = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n\0";
    let mut body = entry(2, 90, 0x11, 0, 0, &cubin);
    body.extend(entry(2, 86, 0x2011, lz4.len() as u32, 64, &lz4));
    body.extend(entry(1, 80, 0x11, 0, 0, ptx));
    let mut sample = vec![0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0];
    sample.extend_from_slice(&(body.len() as u64).to_le_bytes());
    sample.extend(body);
    omptarget_rs::fuzzing::cuda_fatbin(&sample);
    let mut rng = Rng(seed());
    for _ in 0..20_000 {
        omptarget_rs::fuzzing::cuda_fatbin(&mutate(&mut rng, &sample));
    }
}
