//! The CUDA plugin without a driver: `__tgt_init_all_rtls` leaves
//! libcuda alone when no CUDA image was registered, and a missing driver
//! means zero CUDA devices while the host plugin works as before. Needs no
//! GPU images.

use omptarget_rs::plugins::Plugin;
use omptarget_rs::plugins::cuda::{CudaPlugin, driver};

#[test]
fn no_driver_means_zero_devices_and_host_still_works() {
    // SAFETY: this is the only test in this binary; nothing else reads the environment concurrently.
    unsafe { std::env::set_var(driver::LIBCUDA_ENV, "/nonexistent/omptarget-rs/libcuda.so.1") };

    // rustc's init path: every plugin that costs nothing is initialised,
    // the CUDA plugin is not (no CUDA image was registered).
    let rt = omptarget_rs::openmp::get();
    rt.init_all();
    assert_eq!(rt.num_devices(), 4, "the host plugin's four devices, unchanged");
    assert!(!driver::touched(), "__tgt_init_all_rtls must not open libcuda");

    // Asking the CUDA plugin for devices opens the driver: none here.
    let cuda = CudaPlugin::default();
    assert_eq!(cuda.number_of_devices(), 0);
    assert!(driver::touched());
    assert_eq!(cuda.number_of_devices(), 0, "the outcome is cached");
    assert!(cuda.alloc(0, 8, omptarget_rs::plugins::AllocKind::Default).is_err());
    assert!(!cuda.is_device_compatible(0, b"\x7fELF"));
    assert_eq!(rt.num_devices(), 4);
    println!("no driver: 0 CUDA devices, 4 host devices");
}
