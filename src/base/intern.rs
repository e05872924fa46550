//! Strings kept for the whole process, once per distinct value: names that
//! caches and diagnostics hold without a count, and the C strings handed to
//! C callers that may keep them.

use parking_lot::Mutex;

/// Names (of kernels and globals) kept for the whole process (per-thread
/// kernel caches and diagnostics hold them without a count) but once per
/// distinct name: a library loaded and unloaded 1,000 times adds nothing
/// after its first load.
static NAMES: Mutex<Option<std::collections::HashSet<&'static str>>> = Mutex::new(None);

/// One NUL-terminated copy of each device UID string (`omp_get_uid_from_device`),
/// kept for the process; a parking_lot lock so that fork handlers take it.
static UIDS: Mutex<Option<std::collections::HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);

/// The process-lifetime C string of a device UID.
pub fn intern_uid(s: String) -> &'static std::ffi::CStr {
    let mut m = UIDS.lock();
    m.get_or_insert_with(Default::default)
        .entry(s.clone())
        .or_insert_with(|| Box::leak(std::ffi::CString::new(s).unwrap_or_default().into_boxed_c_str()))
}

pub fn intern(name: &str) -> &'static str {
    let mut names = NAMES.lock();
    let set = names.get_or_insert_with(Default::default);
    if let Some(&s) = set.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.into());
    set.insert(s);
    s
}

/// Fork participation: both tables' locks.
pub fn lock_for_fork(held: &mut super::fork::ForkLocks) -> bool {
    held.mutex(&NAMES) && held.mutex(&UIDS)
}
