//! Turns `src/c_api/openmp/exports.list` into the `VERS1.0` version script and the
//! `.symver` directives that tag every export `NAME@@VERS1.0`, so the library
//! can replace LLVM's `libomptarget.so.22.1` without ld.so's "no version
//! information available" warning (abi-reference §1.2).

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let list = "src/c_api/openmp/exports.list";
    println!("cargo:rerun-if-changed={list}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(list).expect("read src/c_api/openmp/exports.list");
    let entries: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let mut names: Vec<&str> = entries.iter().filter_map(|l| l.split_whitespace().next()).collect();
    let ra: Vec<&str> = entries.iter().filter_map(|l| l.strip_suffix(" ra")).map(str::trim).collect();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));

    // liboffload (`ol*`): the names come from the one declaration list in
    // src/c_api/liboffload.rs, lines `fn olName / olNameWithCodeLoc(...) => ...;`.
    let ol_list = "src/c_api/liboffload.rs";
    println!("cargo:rerun-if-changed={ol_list}");
    let ol_text = std::fs::read_to_string(ol_list).expect("read src/c_api/liboffload.rs");
    let ol_names: Vec<&str> = ol_text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("fn ol").map(|_| l.trim()))
        .filter_map(|l| l.strip_prefix("fn ")?.split('(').next())
        .flat_map(|pair| pair.split('/').map(str::trim))
        .collect();
    std::fs::write(out.join("offload_exports.txt"), ol_names.join("\n") + "\n").expect("write offload_exports.txt");
    names.extend(ol_names);

    // The other generations of liboffload: their lists give the library's
    // hidden-prefixed entry points and the shims that forward to them.
    let mut generation_names = Vec::new();
    let mut shims = Vec::new();
    for g in GENERATIONS {
        println!("cargo:rerun-if-changed={}", g.list);
        let text = std::fs::read_to_string(g.list).unwrap_or_else(|e| panic!("read {}: {e}", g.list));
        let gen_names: Vec<String> = declared_names(&text).into_iter().map(String::from).collect();
        generation_names.extend(gen_names.iter().map(|n| format!("{}{n}", g.prefix)));
        shims.push((g, gen_names));
    }
    std::fs::write(out.join("offload_generation_exports.txt"), generation_names.join("\n") + "\n")
        .expect("write offload_generation_exports.txt");
    names.extend(generation_names.iter().map(String::as_str));

    let mut script = String::from("VERS1.0 {\n  global:\n");
    for n in &names {
        writeln!(script, "    {n};").unwrap();
    }
    script.push_str("  local: *;\n};\n");
    let script_path = out.join("exports.map");
    std::fs::write(&script_path, script).expect("write version script");

    let mut asm = String::new();
    for n in &names {
        writeln!(asm, ".symver {n}, {n}@@VERS1.0").unwrap();
    }
    std::fs::write(out.join("symver.s"), asm).expect("write symver directives");
    std::fs::write(out.join("ra_trampolines.s"), trampolines(&ra)).expect("write codeptr_ra trampolines");

    // Every artifact that contains the exports (the cdylib, and test or bench
    // executables that link the rlib) needs the node the directives name.
    println!("cargo:rustc-link-arg=-Wl,--version-script={}", script_path.display());
    // A test or example that pulls in none of the exports must still link.
    for kind in ["tests", "examples"] {
        println!("cargo:rustc-link-arg-{kind}=-Wl,--undefined-version");
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libomptarget.so.22.1");
    link_offload_name(&out);
    for (g, gen_names) in &shims {
        build_shim(&out, g, gen_names);
    }
}

/// One generation of liboffload's API other than 22.1's (whose names the
/// library exports itself).
struct Generation {
    /// Its declaration list.
    list: &'static str,
    /// The prefix of the library's entry points for it.
    prefix: &'static str,
    /// The shim's file name (and SONAME); `aliases` are symlinks to it.
    file: &'static str,
    aliases: &'static [&'static str],
}

const GENERATIONS: &[Generation] = &[
    Generation { list: "src/c_api/liboffload21.rs", prefix: "__omptarget_rs_ol21_", file: "libLLVMOffload.so.21.1", aliases: &[] },
    // LLVM's main branch builds libLLVMOffload.so.23.0git; the release is .so.23.1.
    Generation {
        list: "src/c_api/liboffload23.rs",
        prefix: "__omptarget_rs_ol23_",
        file: "libLLVMOffload.so.23.1",
        aliases: &["libLLVMOffload.so.23.0git"],
    },
];

/// The names of a declaration list, lines `fn olName / olNameWithCodeLoc(`.
fn declared_names(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("fn ol").map(|_| l.trim()))
        .filter_map(|l| l.strip_prefix("fn ")?.split('(').next())
        .flat_map(|pair| pair.split('/').map(str::trim))
        .collect()
}

/// Builds `target/<profile>/<file>`: a shared object with no code of its
/// own, whose every `ol*` export (`NAME@@VERS1.0`) jumps to the library's
/// `<prefix>NAME`, and which needs `libomptarget_rs.so` (found next to it,
/// `$ORIGIN`): a process that loads any generation loads the one runtime.
fn build_shim(out: &std::path::Path, g: &Generation, names: &[String]) {
    let Some(profile_dir) = out.ancestors().nth(3) else { return };
    if out.ancestors().nth(2).and_then(|b| b.file_name()) != Some(std::ffi::OsStr::new("build")) {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let dir = out.join(g.file);
    std::fs::create_dir_all(&dir).expect("create shim folder");
    // A stub with the runtime's file name, so the shim records it as needed.
    let stub_dir = dir.join("stub");
    std::fs::create_dir_all(&stub_dir).expect("create stub folder");
    std::fs::write(dir.join("empty.s"), "").expect("write empty.s");
    let stub = stub_dir.join("libomptarget_rs.so");
    run(std::process::Command::new(&cc)
        .args(["-shared", "-nostdlib", "-Wl,-soname,libomptarget_rs.so", "-o"])
        .arg(&stub)
        .arg(dir.join("empty.s")));
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64");
    let mut asm = String::from(".text\n");
    let mut map = String::from("VERS1.0 {\n  global:\n");
    for n in names {
        let target = format!("{}{n}", g.prefix);
        let jump = if x86_64 { format!("jmp {target}@PLT") } else { format!("b {target}") };
        writeln!(asm, ".globl {n}\n.type {n},@function\n.p2align 4\n{n}:\n.cfi_startproc\n{jump}\n.cfi_endproc\n.size {n}, .-{n}").unwrap();
        writeln!(map, "    {n};").unwrap();
    }
    map.push_str("  local: *;\n};\n");
    asm.push_str(".section .note.GNU-stack,\"\",@progbits\n");
    let (asm_path, map_path) = (dir.join("shim.s"), dir.join("shim.map"));
    std::fs::write(&asm_path, asm).expect("write shim.s");
    std::fs::write(&map_path, map).expect("write shim.map");
    let built = dir.join(g.file);
    run(std::process::Command::new(&cc)
        .args(["-shared", "-nostdlib", "-Wl,-z,noexecstack"])
        .arg(format!("-Wl,-soname,{}", g.file))
        .arg(format!("-Wl,--version-script={}", map_path.display()))
        .arg("-Wl,-rpath,$ORIGIN")
        .arg("-o")
        .arg(&built)
        .arg(&asm_path)
        // Kept though no symbol resolves against the stub at link time.
        .arg("-Wl,--no-as-needed")
        .arg(&stub));
    let dest = profile_dir.join(g.file);
    let _ = std::fs::remove_file(&dest);
    std::fs::copy(&built, &dest).unwrap_or_else(|e| panic!("copy {} to {}: {e}", built.display(), dest.display()));
    for a in g.aliases {
        let link = profile_dir.join(a);
        if std::fs::read_link(&link).is_ok_and(|t| t == std::path::Path::new(g.file)) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        let _ = std::os::unix::fs::symlink(g.file, &link);
    }
}

fn run(cmd: &mut std::process::Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Internal functions given a trampoline `__omptarget_rs_ra_NAME` (hidden).
const INTERNAL_RA: &[&str] = &["run_work"];

/// The exports marked `ra`: on x86_64 a trampoline stores the return address
/// (at `[rsp]` on entry) in the thread's `codeptr_ra` slot (src/tools/ompt/ra.rs)
/// and jumps to the Rust function, so registers and stack are untouched; on
/// other architectures the export is an alias of the Rust function.
fn trampolines(names: &[&str]) -> String {
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64");
    let mut asm = String::from(".text\n");
    // Not exports: functions libomp calls back (the hidden-helper task that
    // runs an `omp_target_*_async` operation), whose return address 22.1
    // reports for the operation's data ops.
    let internal = INTERNAL_RA.iter().map(|n| (format!("__omptarget_rs_ra_{n}"), n));
    for (n, base) in names.iter().map(|n| (n.to_string(), n)).chain(internal) {
        let imp = format!("__omptarget_rs_impl_{base}");
        if n.starts_with("__omptarget_rs_ra_") {
            writeln!(asm, ".hidden {n}").unwrap();
        }
        if x86_64 {
            // r10/r11 are scratch at a call and carry no argument.
            writeln!(
                asm,
                ".hidden {imp}\n.globl {n}\n.type {n},@function\n.p2align 4\n{n}:\n.cfi_startproc\n\
                 mov r11, qword ptr [rip + __omptarget_rs_last_ra@GOTTPOFF]\n\
                 mov r10, qword ptr [rsp]\n\
                 mov qword ptr fs:[r11], r10\n\
                 jmp {imp}\n.cfi_endproc\n.size {n}, .-{n}"
            )
            .unwrap();
        } else {
            writeln!(asm, ".globl {n}\n.set {n}, {imp}").unwrap();
        }
    }
    asm
}

/// The same library is liboffload too: `target/<profile>/libLLVMOffload.so.22.1`
/// is a relative symlink to `libomptarget_rs.so` (the name programs linked
/// against LLVM's liboffload look for on the library path). Made here, before
/// the link, so `cargo build` leaves it; it dangles only until the link ends.
fn link_offload_name(out: &std::path::Path) {
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out.
    let Some(profile_dir) = out.ancestors().nth(3) else { return };
    if out.ancestors().nth(2).and_then(|b| b.file_name()) != Some(std::ffi::OsStr::new("build")) {
        return;
    }
    let link = profile_dir.join("libLLVMOffload.so.22.1");
    if std::fs::read_link(&link).is_ok_and(|t| t == std::path::Path::new("libomptarget_rs.so")) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    // Best effort: a read-only target folder only loses the convenience name.
    let _ = std::os::unix::fs::symlink("libomptarget_rs.so", &link);
}
