//! Functions the runtime takes from libomp (abi-reference §1.4), looked up at
//! run time with `dlsym(RTLD_DEFAULT)` so that Rust programs without libomp
//! still work: then `OMP_TARGET_OFFLOAD` / `OMP_DEFAULT_DEVICE` are read from
//! the environment directly.

use crate::env::config;
use core::ffi::{c_int, c_void};
use std::sync::OnceLock;

fn lookup(name: &core::ffi::CStr) -> usize {
    // SAFETY: RTLD_DEFAULT with a valid C string; the result is only an address.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
}

macro_rules! libomp_fn {
    ($cache:ident, $name:literal) => {{
        static $cache: OnceLock<usize> = OnceLock::new();
        *$cache.get_or_init(|| lookup($name))
    }};
}

/// `__kmpc_get_target_offload()`: 0 disabled, 1 default, 2 mandatory.
pub fn target_offload() -> i32 {
    let f = libomp_fn!(F, c"__kmpc_get_target_offload");
    if f == 0 {
        return config().target_offload_env.unwrap_or(1);
    }
    // SAFETY: libomp exports `int __kmpc_get_target_offload(void)`.
    let f: extern "C" fn() -> c_int = unsafe { core::mem::transmute(f) };
    f()
}

/// `omp_get_default_device()` (the default-device ICV).
pub fn default_device() -> i32 {
    let f = libomp_fn!(F, c"omp_get_default_device");
    if f == 0 {
        return config().default_device_env.unwrap_or(0);
    }
    // SAFETY: libomp exports `int omp_get_default_device(void)`.
    let f: extern "C" fn() -> c_int = unsafe { core::mem::transmute(f) };
    f()
}

/// `__kmpc_global_thread_num(NULL)`, or `None` without libomp.
pub fn global_thread_num() -> Option<i32> {
    let f = libomp_fn!(F, c"__kmpc_global_thread_num");
    if f == 0 {
        return None;
    }
    // SAFETY: libomp exports `kmp_int32 __kmpc_global_thread_num(ident_t *)`; NULL is accepted.
    let f: extern "C" fn(*const c_void) -> i32 = unsafe { core::mem::transmute(f) };
    Some(f(core::ptr::null()))
}
