//! Corrupted host images never reach the system loader in a shape that
//! crashes it. A valid x86-64 shared object (built from
//! `tests/fixtures/host_kernels.c` with `cc`, once more with hidden
//! visibility (no symbol defined in its dynamic table), and with `clang-22
//! -fuse-ld=lld` when present: two linkers, three layouts) gets every single-field
//! corruption of each program header, of the key ELF header fields and of
//! each dynamic-section entry, from a fixed list of values per field (zero,
//! off by one, a page up or down, high bits set, all ones, other segment
//! types and flags). Each variant is loaded by the host plugin's
//! `load_binary` — the path of OpenMP image registration and of
//! `olCreateProgram` — in a forked child, which then looks a kernel up and
//! unloads the image. Every child must exit normally having either loaded
//! the image or returned an error that says what is wrong; a signal, a
//! non-zero exit (ld.so's own fatal-error exit is 127) or a hang fails the
//! test, with the list of variants that did it. `ELF_CORRUPTION_SHOW=1`
//! prints every refusal's message.
//!
//! Skipped, with "skipped: no C compiler", when `cc` is missing.

mod common;

use omptarget_rs::plugins::Plugin;
use omptarget_rs::plugins::host::HostPlugin;
use std::path::Path;
use std::time::{Duration, Instant};

/// Builds the fixture with `compiler args...`; `None` when the compiler is missing.
fn build(compiler: &str, extra: &[&str], tag: &str) -> Option<Vec<u8>> {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/host_kernels.c");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("corrupt-{tag}-{}.so", std::process::id()));
    let status =
        match std::process::Command::new(compiler).args(["-shared", "-fPIC", "-O1"]).args(extra).arg("-o").arg(&out).arg(src).status() {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("running {compiler}: {e}"),
        };
    assert!(status.success(), "{compiler} failed to build {src}");
    let bytes = std::fs::read(&out).expect("read the built image");
    let _ = std::fs::remove_file(&out);
    Some(bytes)
}

fn rd(b: &[u8], off: usize, width: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..width].copy_from_slice(&b[off..off + width]);
    u64::from_le_bytes(v)
}

fn wr(b: &mut [u8], off: usize, width: usize, v: u64) {
    b[off..off + width].copy_from_slice(&v.to_le_bytes()[..width]);
}

/// One corrupted field: where, how wide, the new value, and a name for reports.
struct Variant {
    name: String,
    off: usize,
    width: usize,
    value: u64,
}

/// The values a field of `width` bytes holding `v` is set to.
fn values(v: u64, width: usize) -> Vec<u64> {
    let mask = if width == 8 { u64::MAX } else { (1u64 << (8 * width)) - 1 };
    let top = 1u64 << (8 * width - 1);
    let mut out = vec![0, 1, v.wrapping_add(1), v.wrapping_sub(1), v.wrapping_add(8), v.wrapping_mul(2).wrapping_add(0x10), v | top, mask];
    if width == 8 {
        out.extend([v.wrapping_add(0x1000), v.wrapping_sub(0x1000), v | 1 << 40, v | 1 << 47, v.wrapping_add(0x10_0000), 0x7fff_ffff_f000]);
    } else if width == 4 {
        out.extend([v.wrapping_add(0x1000), v ^ 0x8000]);
    } else {
        out.extend([v.wrapping_add(0x100), v ^ 0x80]);
    }
    let mut seen = std::collections::BTreeSet::new();
    out.into_iter().map(|x| x & mask).filter(|&x| x != v && seen.insert(x)).collect()
}

/// Every single-field corruption of `img`'s ELF header, program headers and
/// dynamic entries.
fn variants(img: &[u8]) -> Vec<Variant> {
    let mut out = Vec::new();
    let mut field = |name: String, off: usize, width: usize, extra: &[u64], keep: &dyn Fn(u64) -> bool| {
        let v = rd(img, off, width);
        let mut vals = values(v, width);
        for &x in extra {
            if x != v && !vals.contains(&x) {
                vals.push(x);
            }
        }
        for value in vals.into_iter().filter(|&x| keep(x)) {
            out.push(Variant { name: format!("{name} {v:#x} -> {value:#x}"), off, width, value });
        }
    };
    // ELF header: identification bytes and the fields the loader reads.
    for (name, off, width) in [
        ("EI_CLASS", 4, 1),
        ("EI_DATA", 5, 1),
        ("EI_VERSION", 6, 1),
        ("EI_OSABI", 7, 1),
        ("EI_ABIVERSION", 8, 1),
        ("e_type", 16, 2),
        ("e_machine", 18, 2),
        ("e_version", 20, 4),
        ("e_entry", 24, 8),
        ("e_phoff", 32, 8),
        ("e_shoff", 40, 8),
        ("e_flags", 48, 4),
        ("e_ehsize", 52, 2),
        ("e_phentsize", 54, 2),
        ("e_phnum", 56, 2),
        ("e_shentsize", 58, 2),
        ("e_shnum", 60, 2),
        ("e_shstrndx", 62, 2),
    ] {
        field(format!("ELF header {name}"), off, width, &[], &|_| true);
    }
    // Program headers: every field of each.
    let (phoff, phnum) = (rd(img, 32, 8) as usize, rd(img, 56, 2) as usize);
    const TYPES: [u64; 11] = [0, 1, 2, 3, 4, 6, 7, 0x6474_e550, 0x6474_e551, 0x6474_e552, 0x7000_0001];
    let mut dynamic = None;
    let mut code = Vec::new();
    for i in 0..phnum {
        let ph = phoff + 56 * i;
        let ty = rd(img, ph, 4);
        if ty == 2 {
            dynamic = Some((rd(img, ph + 8, 8) as usize, rd(img, ph + 32, 8) as usize));
        }
        let p = format!("phdr {i} (type {ty:#x})");
        if ty == 1 && rd(img, ph + 4, 4) & 1 != 0 {
            code.push((rd(img, ph + 16, 8), rd(img, ph + 40, 8)));
        }
        field(format!("{p} p_type"), ph, 4, &TYPES, &|_| true);
        field(format!("{p} p_flags"), ph + 4, 4, &[2, 4, 5, 6, 7], &|_| true);
        for (name, off) in [("p_offset", 8), ("p_vaddr", 16), ("p_paddr", 24), ("p_filesz", 32), ("p_memsz", 40), ("p_align", 48)] {
            field(format!("{p} {name}"), ph + off, 8, &[], &|_| true);
        }
    }
    // Dynamic entries: the value of each (the tag too, to another tag's number).
    let (doff, dsize) = dynamic.expect("the fixture has a PT_DYNAMIC segment");
    for k in 0..dsize / 16 {
        let at = doff + 16 * k;
        let tag = rd(img, at, 8);
        // DT_INIT and DT_FINI name code the loader calls: a value moved to
        // another place inside the code cannot be told from a valid entry
        // point without disassembling, so only values outside the
        // executable segments are tried (the loader must not call those).
        let outside_code = |x: u64| !code.iter().any(|&(start, size)| x >= start && x - start < size);
        let keep: &dyn Fn(u64) -> bool = if tag == 0xc || tag == 0xd { &outside_code } else { &|_| true };
        field(format!("dynamic entry {k} (tag {tag:#x}) d_val"), at + 8, 8, &[], keep);
        if tag == 0 {
            break;
        }
        field(format!("dynamic entry {k} (tag {tag:#x}) d_tag"), at, 8, &[1, 5, 6, 7, 0xc, 0x19, 0x6fff_fef5], &|_| true);
    }
    out
}

/// What a child reported: `Ok(true)` loaded, `Ok(false)` rejected with a
/// message, `Err` a crash, a non-zero exit or a hang.
fn load_in_child(image: &[u8]) -> Result<Option<String>, String> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: the child only loads the image, writes its verdict and _exits; this test binary runs this one test, so no other thread of ours holds a lock the child needs.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        // SAFETY: the read end is the parent's.
        unsafe { libc::close(fds[0]) };
        let plugin = HostPlugin::default();
        let verdict = match plugin.load_binary(0, image) {
            Ok(h) => {
                let _ = plugin.get_function(0, h, "k_add");
                let _ = plugin.unload_binary(0, h);
                "loaded".to_string()
            }
            Err(e) => format!("error: {e}"),
        };
        // SAFETY: the write end is open; the verdict's bytes are readable.
        unsafe {
            libc::write(fds[1], verdict.as_ptr().cast(), verdict.len());
            libc::_exit(0)
        }
    }
    // SAFETY: the write end is the child's.
    unsafe { libc::close(fds[1]) };
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is writable.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            // SAFETY: our own child, still running.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
                libc::close(fds[0]);
            }
            return Err("hung (killed after 30 s)".into());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let mut msg = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reading into a local buffer from our pipe.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        msg.extend_from_slice(&buf[..n as usize]);
    }
    // SAFETY: our read end, closed once.
    unsafe { libc::close(fds[0]) };
    let msg = String::from_utf8_lossy(&msg).into_owned();
    if libc::WIFSIGNALED(status) {
        return Err(format!("killed by signal {}", libc::WTERMSIG(status)));
    }
    if libc::WEXITSTATUS(status) != 0 {
        return Err(format!("exit status {}", libc::WEXITSTATUS(status)));
    }
    match msg.strip_prefix("error: ") {
        Some(e) => Ok(Some(e.to_string())),
        None if msg == "loaded" => Ok(None),
        None => Err(format!("child exited 0 without a verdict ({msg:?})")),
    }
}

fn sweep(tag: &str, img: &[u8]) -> usize {
    assert_eq!(load_in_child(img), Ok(None), "the unmodified {tag} image must load");
    let vs = variants(img);
    let show = std::env::var_os("ELF_CORRUPTION_SHOW").is_some();
    let (mut loaded, mut rejected, mut failures) = (0, 0, Vec::new());
    let mut unclear = Vec::new();
    for v in &vs {
        let mut c = img.to_vec();
        wr(&mut c, v.off, v.width, v.value);
        match load_in_child(&c) {
            Ok(None) => loaded += 1,
            Ok(Some(e)) => {
                rejected += 1;
                if show {
                    println!("{}: {e}", v.name);
                }
                // The check's reason, or the loader's own (dlerror).
                let reason = e
                    .strip_prefix("malformed offload image: failed to load target image: ")
                    .or_else(|| e.strip_prefix("x86_64: error in dlopen: "))
                    .unwrap_or("");
                if reason.len() < 16 {
                    unclear.push(format!("{}: {e}", v.name));
                }
            }
            Err(how) => failures.push(format!("{}: {how}", v.name)),
        }
    }
    let part = |prefix: &str| vs.iter().filter(|v| v.name.starts_with(prefix)).count();
    println!(
        "{tag}: {} variants (ELF header {}, program headers {}, dynamic entries {}): {loaded} loaded, {rejected} rejected, {} crashed",
        vs.len(),
        part("ELF header"),
        part("phdr"),
        part("dynamic"),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{tag}: {} of {} corrupted images crashed the loading process:\n{}",
        failures.len(),
        vs.len(),
        failures.join("\n")
    );
    assert!(unclear.is_empty(), "{tag}: errors without a clear reason:\n{}", unclear.join("\n"));
    vs.len()
}

#[test]
fn single_field_corruptions_load_or_fail_cleanly() {
    common::link_library();
    let Some(gnu) = build("cc", &[], "cc") else {
        println!("skipped: no C compiler");
        return;
    };
    let mut total = sweep("cc", &gnu);
    // No symbol defined in the dynamic table: the GNU hash table then
    // hashes none, and the undefined ones may lie above its first index.
    let hidden = build("cc", &["-fvisibility=hidden"], "hidden").expect("cc ran just before");
    total += sweep("cc -fvisibility=hidden", &hidden);
    if let Some(lld) = build("clang-22", &["-fuse-ld=lld"], "lld") {
        total += sweep("clang-22/lld", &lld);
    }
    assert!(total >= 300, "only {total} variants");
}
