//! The built cdylib exports exactly the names in `src/c_api/openmp/exports.list`, each
//! as `NAME@@VERS1.0`, under the SONAME `libomptarget.so.22.1`
//! (abi-reference §1.1–§1.3, pitfall 1 of §11.2). Builds nothing itself:
//! `cargo test` builds the cdylib next to (or one level above) this test.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

const VERSION_NODE: &str = "VERS1.0";
const SONAME: &str = "libomptarget.so.22.1";

/// `target/<profile>/deps/libomptarget_rs.so` (what this `cargo test` run
/// built) or `target/<profile>/libomptarget_rs.so` (uplifted by `cargo build`).
fn cdylib() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join("libomptarget_rs.so"), dir.parent()?.join("libomptarget_rs.so")].into_iter().find(|p| p.is_file())
}

fn listed_names() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/c_api/openmp/exports.list");
    let text = std::fs::read_to_string(path).expect("read src/c_api/openmp/exports.list");
    // A line is a name, optionally followed by `ra` (the codeptr_ra trampoline).
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Runs a binutils tool; `None` (test skipped) when it is not installed.
fn tool(name: &str, args: &[&str], lib: &PathBuf) -> Option<String> {
    match Command::new(name).args(args).arg(lib).output() {
        Ok(out) => {
            assert!(out.status.success(), "{name} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
            Some(String::from_utf8(out.stdout).expect("tool output is UTF-8"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("skipped: {name} not installed");
            None
        }
        Err(e) => panic!("running {name}: {e}"),
    }
}

/// See `common::link_library`: without it this binary would not link.
#[test]
fn links_the_library() {
    common::link_library();
}

#[test]
fn exports_list_has_no_duplicates_and_all_81_reference_names() {
    let names = listed_names();
    let set: BTreeSet<_> = names.iter().collect();
    assert_eq!(set.len(), names.len(), "src/c_api/openmp/exports.list names a symbol twice");
    // LLVM 22.1 exports 81 functions (abi-reference §1.1); the list keeps its
    // own additions after a "# Extensions" comment.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/c_api/openmp/exports.list");
    let text = std::fs::read_to_string(path).expect("read src/c_api/openmp/exports.list");
    let reference =
        text.lines().map(str::trim).take_while(|l| !l.starts_with("# Extensions")).filter(|l| !l.is_empty() && !l.starts_with('#')).count();
    assert_eq!(reference, 81, "exports.list should list LLVM 22.1's 81 exports before its first '# Extensions' comment");
    // libomp looks this one up first (abi-reference §1.5).
    assert!(names.iter().any(|n| n == "__tgt_get_num_devices"));
}

#[test]
fn cdylib_exports_exactly_the_list_with_version_node() {
    let Some(lib) = cdylib() else {
        println!("skipped: cdylib not built");
        return;
    };
    let Some(nm) = tool("nm", &["-D", "--defined-only"], &lib) else { return };
    let mut exported = BTreeSet::new();
    let mut unversioned = Vec::new();
    for line in nm.lines().filter(|l| !l.trim().is_empty()) {
        // "<address> <type> <name>[@@VERS1.0]"
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (kind, sym) = match fields.as_slice() {
            [_, kind, sym] => (*kind, *sym),
            [kind, sym] => (*kind, *sym),
            _ => panic!("unexpected nm line: {line:?}"),
        };
        // Older GNU ld emits the version node itself as an absolute symbol.
        if kind == "A" && sym.trim_end_matches('@') == VERSION_NODE {
            continue;
        }
        let (name, version) = match sym.split_once('@') {
            Some((n, v)) => (n, v),
            None => (sym, ""),
        };
        if version != format!("@{VERSION_NODE}") {
            unversioned.push(sym.to_owned());
        }
        exported.insert(name.to_owned());
    }
    // The library is liboffload too: the ol* names of src/c_api/liboffload.rs
    // (tests/offload_exports.rs checks them against LLVM's library).
    let offload = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/offload_exports.txt")).expect("offload_exports.txt from build.rs");
    // And the hidden-prefixed entry points of the other generations, which their shims forward to.
    let generations = std::fs::read_to_string(concat!(env!("OUT_DIR"), "/offload_generation_exports.txt"))
        .expect("offload_generation_exports.txt from build.rs");
    let listed: BTreeSet<String> =
        listed_names().into_iter().chain(offload.lines().map(str::to_owned)).chain(generations.lines().map(str::to_owned)).collect();
    let extra: Vec<_> = exported.difference(&listed).collect();
    let missing: Vec<_> = listed.difference(&exported).collect();
    assert!(extra.is_empty(), "{} exports symbols not in src/c_api/openmp/exports.list: {extra:?}", lib.display());
    assert!(missing.is_empty(), "{} lacks symbols listed in src/c_api/openmp/exports.list: {missing:?}", lib.display());
    assert!(
        unversioned.is_empty(),
        "every export must be the default version NAME@@{VERSION_NODE} (abi-reference §1.2); not so: {unversioned:?}"
    );
}

#[test]
fn cdylib_soname_and_version_definition() {
    let Some(lib) = cdylib() else {
        println!("skipped: cdylib not built");
        return;
    };
    let Some(dynamic) = tool("readelf", &["-d"], &lib) else { return };
    let soname: Vec<&str> = dynamic.lines().filter(|l| l.contains("(SONAME)")).collect();
    assert_eq!(soname.len(), 1, "exactly one SONAME entry expected:\n{dynamic}");
    assert!(soname[0].contains(&format!("[{SONAME}]")), "SONAME must be {SONAME}: {}", soname[0]);

    let Some(versions) = tool("readelf", &["-V"], &lib) else { return };
    let defs: String = versions
        .split("Version definition section")
        .nth(1)
        .and_then(|s| s.split("Version needs section").next())
        .unwrap_or_default()
        .to_owned();
    assert!(defs.contains(&format!("Name: {VERSION_NODE}")), "no {VERSION_NODE} version definition:\n{versions}");
    assert!(
        defs.lines().any(|l| l.contains("Flags: BASE") && l.contains(&format!("Name: {SONAME}"))),
        "the base version definition should be {SONAME}:\n{defs}"
    );
}
