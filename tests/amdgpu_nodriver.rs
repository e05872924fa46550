//! The AMDGPU plugin without an HSA runtime: `__tgt_init_all_rtls`
//! leaves libhsa alone when no AMDGPU image was registered, and a missing
//! runtime means zero AMDGPU devices while the host plugin works as before.
//! Needs no GPU images.

use omptarget_rs::plugins::Plugin;
use omptarget_rs::plugins::amdgpu::{AmdgpuPlugin, hsa};

#[test]
fn no_runtime_means_zero_devices_and_host_still_works() {
    // SAFETY: this is the only test in this binary; nothing else reads the environment concurrently.
    unsafe { std::env::set_var(hsa::LIBHSA_ENV, "/nonexistent/omptarget-rs/libhsa-runtime64.so.1") };

    // rustc's init path: every plugin that costs nothing is initialised,
    // the AMDGPU plugin is not (no AMDGPU image was registered).
    let rt = omptarget_rs::openmp::get();
    rt.init_all();
    assert_eq!(rt.num_devices(), 4, "the host plugin's four devices, unchanged");
    assert!(!hsa::touched(), "__tgt_init_all_rtls must not open libhsa");

    // Asking the AMDGPU plugin for devices opens the runtime: none here.
    let amd = AmdgpuPlugin::default();
    assert_eq!(amd.number_of_devices(), 0);
    assert!(hsa::touched());
    assert_eq!(amd.number_of_devices(), 0, "the outcome is cached");
    let err = amd.target_ids(0).unwrap_err().to_string();
    assert!(err.contains("cannot open /nonexistent/omptarget-rs/libhsa-runtime64.so.1"), "{err}");
    assert!(amd.alloc(0, 8, omptarget_rs::plugins::AllocKind::Default).is_err());
    assert!(!amd.is_device_compatible(0, b"\x7fELF"));
    assert_eq!(amd.uid(0), "amdgpu-0");
    assert_eq!(rt.num_devices(), 4);
    println!("no HSA runtime: 0 AMDGPU devices, 4 host devices");
}
