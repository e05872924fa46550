//! Who called: a walk of the calling thread's stack, for the rare decisions
//! that depend on it (library constructor, unregistration at exit).

/// Whether a function of one of these names (exported, so that `dladdr`
/// names it: libc's `dlopen`, `dlclose`, `__cxa_finalize`) is on this
/// thread's stack. For the rare decisions that depend on who called
/// (library constructor, unregistration); it walks the whole stack.
#[cold]
pub fn on_stack(names: &[&[u8]]) -> bool {
    use core::ffi::{CStr, c_int, c_void};
    const URC_NO_REASON: c_int = 0;
    const URC_END_OF_STACK: c_int = 5;
    unsafe extern "C" {
        fn _Unwind_Backtrace(trace: extern "C" fn(*mut c_void, *mut c_void) -> c_int, arg: *mut c_void) -> c_int;
        fn _Unwind_GetIP(context: *mut c_void) -> usize;
    }
    struct Search<'a> {
        names: &'a [&'a [u8]],
        found: bool,
    }
    extern "C" fn frame(context: *mut c_void, arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `Search` below, alive for the whole walk and used only here.
        let search = unsafe { &mut *arg.cast::<Search>() };
        // SAFETY: `context` is the unwinder's for this frame; `_Unwind_GetIP` only reads it.
        let ip = unsafe { _Unwind_GetIP(context) };
        // SAFETY: Dl_info is plain data; dladdr fills it (or returns 0) for any address.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `info` is a live local.
        if ip == 0 || unsafe { libc::dladdr(ip as *const c_void, &mut info) } == 0 || info.dli_sname.is_null() {
            return URC_NO_REASON;
        }
        // SAFETY: dladdr set `dli_sname` to a NUL-terminated symbol name of a loaded object.
        let name = unsafe { CStr::from_ptr(info.dli_sname) }.to_bytes();
        if search.names.contains(&name) {
            search.found = true;
            return URC_END_OF_STACK;
        }
        URC_NO_REASON
    }
    let mut search = Search { names, found: false };
    // SAFETY: `frame` matches the unwinder's callback type and only touches `search` through `arg`.
    unsafe { _Unwind_Backtrace(frame, (&raw mut search).cast()) };
    search.found
}
