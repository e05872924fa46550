//! The library is also a drop-in `libLLVMOffload.so.22.1` (issue 17): it
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
