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
