//! The AMDGPU plugin with a real HSA runtime but no GPU: Debian's
//! `libhsa-runtime64-1` loads, resolves every entry point the plugin needs,
//! and its `hsa_init` fails without `/dev/kfd`; the plugin then has zero
//! devices and keeps the runtime's own error text. Prints `skipped: ...`
//! when the package is not installed or the machine has an AMD GPU.

use omptarget_rs::plugins::Plugin;
use omptarget_rs::plugins::amdgpu::{AmdgpuPlugin, hsa};

#[test]
fn debian_libhsa_without_gpu() {
    let lib = ["/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1", "/lib/x86_64-linux-gnu/libhsa-runtime64.so.1"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(lib) = lib else {
        println!("skipped: libhsa-runtime64-1 not installed (apt-get install libhsa-runtime64-1)");
        return;
    };
    if std::path::Path::new("/dev/kfd").exists() {
        println!("skipped: this machine has /dev/kfd (an AMD GPU driver): hsa_init would succeed");
        return;
    }
    // SAFETY: this is the only test in this binary; nothing else reads the environment concurrently.
    unsafe { std::env::set_var(hsa::LIBHSA_ENV, lib) };
    let amd = AmdgpuPlugin::default();
    assert_eq!(amd.number_of_devices(), 0);
    let err = amd.target_ids(0).unwrap_err().to_string();
    assert!(err.starts_with("amdgpu: error in hsa_init: HSA_STATUS_ERROR"), "{err}");
    // The host plugin is unaffected.
    let rt = omptarget_rs::openmp::get();
    rt.init_all();
    assert_eq!(rt.num_devices(), 4);
    println!("{lib}: {err}");
}
