//! The library is also a drop-in `libLLVMOffload.so.22.1`: it
//! exports exactly the 70 `ol*` functions of LLVM 22.1's liboffload, each as
//! `NAME@@VERS1.0`, generated from the one declaration list of
//! `src/c_api/liboffload.rs`; `cargo build` leaves the name
//! `target/<profile>/libLLVMOffload.so.22.1` pointing at it.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

const LLVM_LIB: &str = "/usr/lib/llvm-22/lib/libLLVMOffload.so.22.1";

fn cdylib() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join("libomptarget_rs.so"), dir.parent()?.join("libomptarget_rs.so")].into_iter().find(|p| p.is_file())
}

/// `name@@VERS1.0` of every defined dynamic `ol*` symbol (None: nm missing).
fn ol_exports(lib: &std::path::Path) -> Option<BTreeSet<String>> {
    let out = match Command::new("nm").args(["-D", "--defined-only", "--with-symbol-versions"]).arg(lib).output() {
        Ok(o) => o,
        Err(_) => {
            println!("skipped: nm not installed");
            return None;
        }
    };
    assert!(out.status.success(), "nm {}: {}", lib.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("nm output is UTF-8");
    Some(text.lines().filter_map(|l| l.split_whitespace().nth(2)).filter(|s| s.starts_with("ol")).map(str::to_owned).collect())
}

#[test]
fn links_the_library() {
    common::link_library();
}

#[test]
fn declaration_list_names_35_functions_and_their_twins() {
    let names = omptarget_rs::c_api::liboffload::EXPORTS;
    assert_eq!(names.len(), 70);
    let set: BTreeSet<_> = names.iter().collect();
    assert_eq!(set.len(), 70, "a name appears twice");
    for pair in names.chunks(2) {
        assert_eq!(format!("{}WithCodeLoc", pair[0]), pair[1]);
    }
    // build.rs reads the same list for the version script.
    let built = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/offload_exports.txt")).unwrap();
    assert_eq!(built.lines().collect::<Vec<_>>(), names.to_vec());
}

#[test]
fn cdylib_exports_what_llvm_22_1_liboffload_exports() {
    let Some(lib) = cdylib() else {
        println!("skipped: cdylib not built");
        return;
    };
    let Some(ours) = ol_exports(&lib) else { return };
    let want: BTreeSet<String> = omptarget_rs::c_api::liboffload::EXPORTS.iter().map(|n| format!("{n}@@VERS1.0")).collect();
    assert_eq!(ours, want, "ol* exports of {} (with versions)", lib.display());
    if !std::path::Path::new(LLVM_LIB).exists() {
        println!("skipped: {LLVM_LIB} not installed (liboffload-22)");
        return;
    }
    let Some(llvm) = ol_exports(std::path::Path::new(LLVM_LIB)) else { return };
    assert_eq!(llvm.len(), 70, "LLVM 22.1 exports 70 ol* symbols");
    assert_eq!(ours, llvm, "our ol* exports differ from {LLVM_LIB}");
}

#[test]
fn build_leaves_the_liboffload_name() {
    let Some(lib) = cdylib() else {
        println!("skipped: cdylib not built");
        return;
    };
    let link = lib.with_file_name("libLLVMOffload.so.22.1");
    if !link.exists() {
        // `cargo test` may have placed the cdylib in deps/; the name is next to the uplifted one.
        let up = lib.parent().and_then(|d| d.parent()).map(|d| d.join("libLLVMOffload.so.22.1"));
        assert!(up.is_some_and(|u| u.exists()), "no libLLVMOffload.so.22.1 next to {}", lib.display());
        return;
    }
    assert_eq!(std::fs::read_link(&link).unwrap(), PathBuf::from("libomptarget_rs.so"));
}

/// `nm -D` lines of a library: (name@version, defined?).
fn dynamic_symbols(lib: &std::path::Path) -> Option<Vec<(String, bool)>> {
    let out = Command::new("nm").args(["-D", "--with-symbol-versions"]).arg(lib).output().ok()?;
    assert!(out.status.success(), "nm {}: {}", lib.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("nm output is UTF-8");
    Some(
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                match f.as_slice() {
                    [_, kind, name] => Some((name.to_string(), *kind != "U")),
                    [kind, name] => Some((name.to_string(), *kind != "U")),
                    _ => None,
                }
            })
            .collect(),
    )
}

#[test]
fn generation_lists_name_19_and_38_functions_and_their_twins() {
    use omptarget_rs::c_api::{liboffload21, liboffload23};
    for (exports, n) in [(liboffload21::EXPORTS, 38), (liboffload23::EXPORTS, 76)] {
        assert_eq!(exports.len(), n);
        let set: BTreeSet<_> = exports.iter().collect();
        assert_eq!(set.len(), n, "a name appears twice");
        for pair in exports.chunks(2) {
            assert_eq!(format!("{}WithCodeLoc", pair[0]), pair[1]);
        }
    }
    // The names that differ between the generations.
    assert!(liboffload21::EXPORTS.contains(&"olGetKernel") && !liboffload21::EXPORTS.contains(&"olGetSymbol"));
    assert!(liboffload21::EXPORTS.contains(&"olWaitQueue") && liboffload21::EXPORTS.contains(&"olWaitEvent"));
    for f in ["olQueryQueue", "olGetEventElapsedTime", "olPlatformRegisterRPCCallback"] {
        assert!(liboffload23::EXPORTS.contains(&f) && !omptarget_rs::c_api::liboffload::EXPORTS.contains(&f), "{f}");
    }
    let built = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/offload_generation_exports.txt")).unwrap();
    let want: Vec<String> = liboffload21::EXPORTS
        .iter()
        .map(|n| format!("{}{n}", liboffload21::PREFIX))
        .chain(liboffload23::EXPORTS.iter().map(|n| format!("{}{n}", liboffload23::PREFIX)))
        .collect();
    assert_eq!(built.lines().map(str::to_owned).collect::<Vec<_>>(), want);
}

#[test]
fn each_generation_file_exports_exactly_its_list_and_needs_the_one_runtime() {
    use omptarget_rs::c_api::{liboffload21, liboffload23};
    let Some(lib) = cdylib() else {
        println!("skipped: cdylib not built");
        return;
    };
    let Some(main) = dynamic_symbols(&lib) else { return };
    for (file, alias, exports, prefix) in [
        ("libLLVMOffload.so.21.1", None, liboffload21::EXPORTS, liboffload21::PREFIX),
        ("libLLVMOffload.so.23.1", Some("libLLVMOffload.so.23.0git"), liboffload23::EXPORTS, liboffload23::PREFIX),
    ] {
        let shim = lib.with_file_name(file);
        let shim = if shim.exists() { shim } else { lib.parent().unwrap().parent().unwrap().join(file) };
        if !shim.exists() {
            println!("skipped: {file} not built (cargo build --release makes it)");
            continue;
        }
        let syms = dynamic_symbols(&shim).unwrap();
        let defined: BTreeSet<String> = syms.iter().filter(|(n, d)| *d && !n.starts_with("VERS1.0")).map(|(n, _)| n.clone()).collect();
        let want: BTreeSet<String> = exports.iter().map(|n| format!("{n}@@VERS1.0")).collect();
        assert_eq!(defined, want, "{file}: its exports");
        // Each export jumps to the runtime's entry point of that name, which the runtime defines.
        let undefined: BTreeSet<String> = syms.iter().filter(|(_, d)| !*d).map(|(n, _)| n.clone()).collect();
        let targets: BTreeSet<String> = exports.iter().map(|n| format!("{prefix}{n}")).collect();
        assert_eq!(undefined, targets, "{file}: what it needs from the runtime");
        for t in &targets {
            assert!(main.iter().any(|(n, d)| *d && *n == format!("{t}@@VERS1.0")), "the runtime lacks {t}@@VERS1.0");
        }
        let dynamic = Command::new("readelf").arg("-d").arg(&shim).output().expect("readelf");
        let dynamic = String::from_utf8_lossy(&dynamic.stdout);
        assert!(dynamic.contains("Shared library: [libomptarget_rs.so]"), "{file} needs the runtime:\n{dynamic}");
        assert!(dynamic.contains(&format!("Library soname: [{file}]")), "{file}: SONAME\n{dynamic}");
        assert!(dynamic.contains("[$ORIGIN]"), "{file} finds the runtime next to it\n{dynamic}");
        if let Some(a) = alias {
            let link = shim.with_file_name(a);
            assert_eq!(std::fs::read_link(&link).expect(a), std::path::Path::new(file));
        }
    }
}
