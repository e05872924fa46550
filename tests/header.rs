//! The committed C header `include/omptarget_rs.h` is exactly what the
//! pinned cbindgen (=0.29.0, with `cbindgen.toml`) generates from the
//! sources, and it declares every symbol of `src/api/exports.list`
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
    out
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
    let list = std::fs::read_to_string(root().join("src/api/exports.list")).expect("read src/api/exports.list");
    let missing: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
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
