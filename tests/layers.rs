//! The source tree's layers: every `crate::` path in `src/` must point to a
//! layer at or below the one it is written in, and the two API faces and
//! the three plugins must not reach into each other. Fails naming the file,
//! the line and the path that runs the wrong way.
//!
//! Layers, bottom to top (docs/architecture.md draws them):
//!   base → abi → plugins → tools → device → {openmp, liboffload} → c_api → fuzzing

use std::path::{Path, PathBuf};

/// The layer of a top-level module, and its rank (higher = further up).
fn rank(module: &str) -> Option<u32> {
    Some(match module {
        "base" => 0,
        "abi" => 1,
        "plugins" => 2,
        "tools" => 3,
        "device" => 4,
        "openmp" | "liboffload" => 5,
        "c_api" => 6,
        "fuzzing" => 7,
        _ => return None,
    })
}

/// Pairs of modules (at any depth: `a/b` names `src/a/b`) that must not
/// import each other although their ranks would allow it.
const APART: &[(&str, &str)] = &[
    ("openmp", "liboffload"),
    ("liboffload", "openmp"),
    ("plugins/cuda", "plugins/amdgpu"),
    ("plugins/amdgpu", "plugins/cuda"),
    ("plugins/host", "plugins/cuda"),
    ("plugins/host", "plugins/amdgpu"),
    ("plugins/cuda", "plugins/host"),
    ("plugins/amdgpu", "plugins/host"),
    ("plugins/gpu", "plugins/cuda"),
    ("plugins/gpu", "plugins/amdgpu"),
    ("plugins/gpu", "plugins/host"),
    ("c_api/openmp", "c_api/liboffload"),
    ("c_api/liboffload", "c_api/openmp"),
    ("plugins/remote", "plugins/host"),
    ("plugins/remote", "plugins/cuda"),
    ("plugins/remote", "plugins/amdgpu"),
    ("plugins/remote", "plugins/gpu"),
    ("plugins/host", "plugins/remote"),
    ("plugins/cuda", "plugins/remote"),
    ("plugins/amdgpu", "plugins/remote"),
    ("plugins/gpu", "plugins/remote"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path (`openmp/data`) of a file under `src/`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src").with_extension("");
    let s = rel.to_string_lossy().replace('\\', "/");
    s.strip_suffix("/mod").unwrap_or(&s).to_string()
}

/// Every `crate::a::b` path in a line of code (comments and strings
/// stripped roughly: a `//` outside a string ends the code).
fn crate_paths(line: &str) -> Vec<String> {
    let mut code = String::new();
    let mut in_str = false;
    let mut prev = ' ';
    for c in line.chars() {
        if c == '"' && prev != '\\' {
            in_str = !in_str;
        }
        if !in_str && c == '/' && prev == '/' {
            code.pop();
            break;
        }
        if !in_str {
            code.push(c);
        }
        prev = c;
    }
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + 7..];
        let path: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).take(2).collect();
        if !segs.is_empty() {
            out.push(segs.join("/"));
        }
        rest = after;
    }
    out
}

#[test]
fn imports_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for f in &files {
        let module = module_of(&src, f);
        let top = module.split('/').next().unwrap_or("").to_string();
        let Some(from) = rank(&top) else { continue };
        let text = std::fs::read_to_string(f).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("//") {
                continue;
            }
            if t.contains("super::super") {
                wrong.push(format!("{}:{}: `super::super` (name the layer with `crate::`)", f.display(), n + 1));
            }
            for target in crate_paths(line) {
                let ttop = target.split('/').next().unwrap_or("");
                // `crate::debug!` and other macros live at the root.
                let Some(to) = rank(ttop) else { continue };
                if to > from {
                    wrong.push(format!(
                        "{}:{}: {top} (layer {from}) imports crate::{} (layer {to})",
                        f.display(),
                        n + 1,
                        target.replace('/', "::")
                    ));
                }
                for (a, b) in APART {
                    if (module == *a || module.starts_with(&format!("{a}/"))) && (target == *b || target.starts_with(&format!("{b}/"))) {
                        wrong.push(format!("{}:{}: {a} must not import {b} (crate::{})", f.display(), n + 1, target.replace('/', "::")));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{} imports run against the layers:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn the_checker_sees_paths() {
    assert_eq!(crate_paths("use crate::device::queue::Queue; // crate::openmp"), vec!["device/queue"]);
    assert_eq!(crate_paths(r#"let s = "crate::openmp"; crate::base::diag::report(x)"#), vec!["base/diag"]);
    assert_eq!(rank("openmp"), rank("liboffload"));
}
