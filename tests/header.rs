//! The committed C header `include/omptarget_rs.h` is exactly what the
//! pinned cbindgen (=0.29.0, with `cbindgen.toml`) generates from the
//! sources, and it declares every symbol of `src/c_api/openmp/exports.list`
//! (style guide §8 "Exports and header").
//!
//! Refresh the header after an intended change with either
//!     OMPTARGET_RS_BLESS=1 cargo test --test header
//!     cargo test --test header -- --ignored bless
//! then review and commit the diff.

mod common;

use std::path::{Path, PathBuf};

const HEADER: &str = "include/omptarget_rs.h";
const CONFIG: &str = "cbindgen.toml";
const REFRESH: &str = "refresh it with `OMPTARGET_RS_BLESS=1 cargo test --test header` \
                       (or `cargo test --test header -- --ignored bless`), review the diff and commit it";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    root().join(HEADER)
}

/// A fresh header from the sources.
fn generate() -> Vec<u8> {
    let bindings = cbindgen::generate(root()).unwrap_or_else(|e| panic!("cbindgen could not generate the header: {e}"));
    let mut out = Vec::new();
    bindings.write(&mut out);
    // An export with a `codeptr_ra` trampoline (`ra` in src/c_api/openmp/exports.list)
    // is the Rust function `__omptarget_rs_impl_NAME`, reached from `NAME`
    // with the same signature: C code calls `NAME`.
    String::from_utf8(out).expect("cbindgen writes UTF-8").replace("__omptarget_rs_impl_", "").into_bytes()
}

fn write_header(fresh: &[u8]) {
    std::fs::create_dir_all(header_path().parent().expect("include/")).expect("create include/");
    std::fs::write(header_path(), fresh).expect("write the header");
    println!("wrote {} ({} bytes)", header_path().display(), fresh.len());
}

/// The first line where the two texts differ, for the failure message.
fn first_difference(committed: &str, fresh: &str) -> String {
    let (mut c, mut f) = (committed.lines(), fresh.lines());
    for n in 1.. {
        match (c.next(), f.next()) {
            (None, None) => return "only line endings differ".into(),
            (a, b) if a == b => continue,
            (a, b) => {
                return format!("line {n}:\n  committed: {}\n  generated: {}", a.unwrap_or("<end of file>"), b.unwrap_or("<end of file>"));
            }
        }
    }
    unreachable!()
}

#[test]
fn header_matches_a_fresh_cbindgen_run() {
    if !root().join(CONFIG).is_file() {
        println!("skipped: {CONFIG} not present yet");
        return;
    }
    let fresh = generate();
    if std::env::var("OMPTARGET_RS_BLESS").as_deref() == Ok("1") {
        write_header(&fresh);
        return;
    }
    let committed = std::fs::read(header_path()).unwrap_or_else(|e| panic!("{HEADER} is missing ({e}): {REFRESH}"));
    if committed != fresh {
        let diff = first_difference(&String::from_utf8_lossy(&committed), &String::from_utf8_lossy(&fresh));
        panic!("{HEADER} differs from what cbindgen generates from the sources; {REFRESH}.\nFirst difference at {diff}");
    }
}

#[test]
fn header_declares_every_export() {
    let Ok(header) = std::fs::read_to_string(header_path()) else {
        println!("skipped: {HEADER} not present yet");
        return;
    };
    let list = std::fs::read_to_string(root().join("src/c_api/openmp/exports.list")).expect("read src/c_api/openmp/exports.list");
    let missing: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        // A line is a name, optionally followed by `ra` (the codeptr_ra trampoline).
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| {
            // A declaration is the name followed by its parameter list.
            !header.match_indices(name).any(|(i, _)| {
                let before = header[..i].chars().next_back();
                let after = header[i + name.len()..].trim_start();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_') && after.starts_with('(')
            })
        })
        .collect();
    assert!(missing.is_empty(), "{HEADER} does not declare these exports: {missing:?}; {REFRESH}");
}

/// See `common::link_library`: without it this binary would not link.
#[test]
fn links_the_library() {
    common::link_library();
}

/// Rewrites the header from the sources.
#[test]
#[ignore = "rewrites include/omptarget_rs.h; run with `cargo test --test header -- --ignored bless`"]
fn bless() {
    write_header(&generate());
}

/// The header compiles on its own as strict C11 and its layouts match the
/// reference's byte offsets (abi-reference §1.7, §2.1, §2.2, §4.2).
#[test]
fn header_compiles_alone_with_reference_layouts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::env::temp_dir().join(format!("omptarget_rs_header_{}.c", std::process::id()));
    std::fs::write(
        &src,
        r#"#include "omptarget_rs.h"
#include <stddef.h>
_Static_assert(sizeof(ident_t) == 24 && offsetof(ident_t, psource) == 16, "ident_t");
_Static_assert(sizeof(__tgt_bin_desc) == 32 && offsetof(__tgt_bin_desc, HostEntriesEnd) == 24, "bin_desc");
_Static_assert(sizeof(__tgt_device_image) == 32, "device_image");
_Static_assert(sizeof(__tgt_offload_entry) == 56 && offsetof(__tgt_offload_entry, Address) == 16
               && offsetof(__tgt_offload_entry, Size) == 32 && offsetof(__tgt_offload_entry, AuxAddr) == 48, "entry");
_Static_assert(sizeof(__tgt_offload_entry_legacy) == 32, "legacy entry");
_Static_assert(sizeof(__tgt_kernel_arguments) == 104 && offsetof(__tgt_kernel_arguments, Flags) == 64
               && offsetof(__tgt_kernel_arguments, NumTeams) == 72 && offsetof(__tgt_kernel_arguments, DynCGroupMem) == 96, "kargs");
_Static_assert(sizeof(__tgt_target_non_contig) == 24, "non_contig");
int main(void) { return 0; }
"#,
    )
    .expect("write C source");
    let out = src.with_extension("o");
    let r = std::process::Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-c", "-I"])
        .arg(dir.join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output();
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out);
    match r {
        Err(_) => println!("skipped: no C compiler"),
        Ok(o) => assert!(o.status.success(), "header does not compile:\n{}", String::from_utf8_lossy(&o.stderr)),
    }
}
