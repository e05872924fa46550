//! Turns `src/api/exports.list` into the `VERS1.0` version script and the
//! `.symver` directives that tag every export `NAME@@VERS1.0`, so the library
//! can replace LLVM's `libomptarget.so.22.1` without ld.so's "no version
//! information available" warning (abi-reference §1.2).

use std::fmt::Write;
use std::path::PathBuf;

fn main() {
    let list = "src/api/exports.list";
    println!("cargo:rerun-if-changed={list}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(list).expect("read src/api/exports.list");
    let names: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));

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

    // Every artifact that contains the exports (the cdylib, and test or bench
    // executables that link the rlib) needs the node the directives name.
    println!("cargo:rustc-link-arg=-Wl,--version-script={}", script_path.display());
    // A test or example that pulls in none of the exports must still link.
    for kind in ["tests", "examples"] {
        println!("cargo:rustc-link-arg-{kind}=-Wl,--undefined-version");
    }
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libomptarget.so.22.1");
}
