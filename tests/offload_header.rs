//! Our `ol*` types agree with LLVM 22.1's `offload/OffloadAPI.h`: every
//! enumeration's names and values, and the layout of the structs the API
//! passes (the C tests in c-tests/offload compile against that header).

use omptarget_rs::liboffload::{error, types};

const HEADER: &str = "/usr/lib/llvm-22/include/offload/OffloadAPI.h";

/// `typedef enum NAME { A = 0, B = 1, ... } NAME;` → the (name, value) pairs
/// below `*_LAST`.
fn enum_values(text: &str, name: &str) -> Vec<(String, u32)> {
    let start = text.find(&format!("typedef enum {name} {{")).unwrap_or_else(|| panic!("{name} not in the header"));
    let body = &text[start..text[start..].find('}').map(|e| start + e).unwrap()];
    body.lines()
        .filter_map(|l| {
            let l = l.split("///").next()?.trim().trim_end_matches(',');
            let (n, v) = l.split_once(" = ")?;
            let v = if let Some(h) = v.strip_prefix("0x") { u32::from_str_radix(h, 16).ok()? } else { v.parse().ok()? };
            Some((n.trim().to_owned(), v))
        })
        .filter(|(n, _)| !n.ends_with("_LAST") && !n.ends_with("_FORCE_UINT32"))
        .collect()
}

#[test]
fn enumerations_match_llvm_22_1() {
    let Ok(text) = std::fs::read_to_string(HEADER) else {
        println!("skipped: {HEADER} not installed (liboffload-22-dev)");
        return;
    };
    let ours: &[(&str, &[&str])] = &[
        ("ol_errc_t", &error::ERRC_NAMES),
        ("ol_alloc_type_t", types::ALLOC_TYPE_NAMES),
        ("ol_device_info_t", types::DEVICE_INFO_NAMES),
        ("ol_device_type_t", types::DEVICE_TYPE_NAMES),
        ("ol_event_info_t", types::EVENT_INFO_NAMES),
        ("ol_mem_info_t", types::MEM_INFO_NAMES),
        ("ol_platform_backend_t", types::PLATFORM_BACKEND_NAMES),
        ("ol_platform_info_t", types::PLATFORM_INFO_NAMES),
        ("ol_queue_info_t", types::QUEUE_INFO_NAMES),
        ("ol_symbol_info_t", types::SYMBOL_INFO_NAMES),
        ("ol_symbol_kind_t", types::SYMBOL_KIND_NAMES),
    ];
    for (name, table) in ours {
        let theirs = enum_values(&text, name);
        let mine: Vec<(String, u32)> = table.iter().enumerate().map(|(i, n)| (n.to_string(), i as u32)).collect();
        assert_eq!(mine, theirs, "{name}");
    }
    // The error codes the inner code uses by name.
    let errc = enum_values(&text, "ol_errc_t");
    let code = |n: &str| errc.iter().find(|(k, _)| k == n).unwrap().1;
    assert_eq!(error::errc::UNINITIALIZED, code("OL_ERRC_UNINITIALIZED"));
    assert_eq!(error::errc::INVALID_NULL_HANDLE, code("OL_ERRC_INVALID_NULL_HANDLE"));
    assert_eq!(error::errc::SYMBOL_KIND, code("OL_ERRC_SYMBOL_KIND"));
    assert_eq!(error::errc::INVALID_ENUMERATION, code("OL_ERRC_INVALID_ENUMERATION"));
}

#[test]
fn struct_layouts_match_the_header() {
    // ol_dimensions_t, ol_kernel_launch_size_args_t, ol_code_location_t, ol_error_struct_t.
    assert_eq!(size_of::<types::Dimensions>(), 12);
    assert_eq!(size_of::<types::LaunchSizeArgs>(), 40);
    assert_eq!(std::mem::offset_of!(types::LaunchSizeArgs, group_size), 20);
    assert_eq!(std::mem::offset_of!(types::LaunchSizeArgs, dyn_shared_memory), 32);
    assert_eq!(size_of::<types::CodeLocation>(), 24);
    assert_eq!(size_of::<error::ErrorStruct>(), 16);
    assert_eq!(std::mem::offset_of!(error::ErrorStruct, details), 8);
}

/// Our headers of the other generations (include/liboffload-21, -23).
fn generation_header(g: u32) -> String {
    let path = format!("{}/include/liboffload-{g}/offload/OffloadAPI.h", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// Every `typedef enum NAME { ... } NAME;` of a header: (enum, value name,
/// value), without `*_LAST` and `*_FORCE_UINT32`; comments of either style.
fn all_enums(text: &str) -> Vec<(String, String, u32)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("typedef enum ") {
        let after = &rest[at + "typedef enum ".len()..];
        let name = after.split_whitespace().next().unwrap_or("").to_owned();
        let body_end = after.find('}').unwrap_or(after.len());
        for l in after[..body_end].lines() {
            let l = l.split("///").next().unwrap_or("").split("/*").next().unwrap_or("").trim().trim_end_matches(',');
            let Some((n, v)) = l.split_once(" = ") else { continue };
            let v = v.trim();
            let Some(v) = (if let Some(h) = v.strip_prefix("0x") { u32::from_str_radix(h, 16).ok() } else { v.parse().ok() }) else {
                continue;
            };
            let n = n.trim();
            if !n.ends_with("_LAST") && !n.ends_with("_FORCE_UINT32") {
                out.push((name.clone(), n.to_owned(), v));
            }
        }
        rest = &after[body_end..];
    }
    out
}

/// Values our generation headers give differently from 22.1 on purpose: 21
/// numbered its six device properties itself and had no `LEVEL_ZERO`
/// backend before `HOST`.
const KNOWN_DIFFERENCES: &[(u32, &str)] = &[
    (21, "OL_DEVICE_INFO_VENDOR"),
    (21, "OL_DEVICE_INFO_DRIVER_VERSION"),
    (21, "OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE"),
    (21, "OL_PLATFORM_BACKEND_HOST"),
];

#[test]
fn generation_headers_agree_with_22_1_on_shared_values() {
    let Ok(llvm) = std::fs::read_to_string(HEADER) else {
        println!("skipped: {HEADER} not installed (liboffload-22-dev)");
        return;
    };
    let theirs = all_enums(&llvm);
    assert!(theirs.len() > 80, "parsed {} values of 22.1's header", theirs.len());
    for g in [21, 23] {
        let ours = all_enums(&generation_header(g));
        let mut shared = 0;
        for (e, n, v) in &ours {
            let Some((_, _, tv)) = theirs.iter().find(|(te, tn, _)| te == e && tn == n) else { continue };
            shared += 1;
            if KNOWN_DIFFERENCES.contains(&(g, n.as_str())) {
                assert_ne!(v, tv, "{g}: {n} is listed as differing but is 22.1's value");
            } else {
                assert_eq!(v, tv, "{g}: {e}::{n} differs from LLVM 22.1's header");
            }
        }
        assert!(shared > 40, "{g}: only {shared} values shared with 22.1");
    }
}

#[test]
fn generation_headers_agree_with_our_tables_and_lists() {
    use omptarget_rs::c_api::{liboffload21, liboffload23};
    let h21 = all_enums(&generation_header(21));
    let info = |h: &[(String, String, u32)]| -> Vec<(String, u32)> {
        h.iter().filter(|(e, _, _)| e == "ol_device_info_t").map(|(_, n, v)| (n.clone(), *v)).collect()
    };
    let mine21: Vec<(String, u32)> = types::DEVICE_INFO_21_NAMES.iter().enumerate().map(|(i, n)| (n.to_string(), i as u32)).collect();
    assert_eq!(info(&h21), mine21);
    let mine23: Vec<(String, u32)> = types::DEVICE_INFO_23_NAMES.iter().enumerate().map(|(i, n)| (n.to_string(), i as u32)).collect();
    assert_eq!(info(&all_enums(&generation_header(23))), mine23);
    // Every function the header declares is in the generation's list, with its twin, and no other.
    for (g, exports) in [(21, liboffload21::EXPORTS), (23, liboffload23::EXPORTS)] {
        let text = generation_header(g);
        let declared: std::collections::BTreeSet<String> = text
            .match_indices("OL_DECLARE_(")
            .filter_map(|(i, _)| text[i + "OL_DECLARE_(".len()..].split(',').next())
            .filter(|n| n.starts_with("ol"))
            .flat_map(|n| [n.to_owned(), format!("{n}WithCodeLoc")])
            .collect();
        let listed: std::collections::BTreeSet<String> = exports.iter().map(|s| s.to_string()).collect();
        assert_eq!(declared, listed, "{g}: header and declaration list");
    }
    assert_eq!(size_of::<types::InitArgs>(), 24);
    assert_eq!(std::mem::offset_of!(types::InitArgs, platforms), 16);
}

#[test]
fn generation_headers_compile_as_c_and_cxx() {
    for g in [21, 23] {
        let inc = format!("{}/include/liboffload-{g}", env!("CARGO_MANIFEST_DIR"));
        for lang in ["c", "c++"] {
            let out = match std::process::Command::new("clang-22")
                .args(["-x", lang, "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I", &inc, "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
            {
                Ok(mut child) => {
                    use std::io::Write;
                    child.stdin.take().unwrap().write_all(b"#include <offload/OffloadAPI.h>\nint main(void) { return 0; }\n").unwrap();
                    child.wait_with_output().unwrap()
                }
                Err(_) => {
                    println!("skipped: clang-22 not installed");
                    return;
                }
            };
            assert!(out.status.success(), "{g} as {lang}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}
