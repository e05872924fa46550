//! The exported `extern "C"` entry points, one file per family. Each export
//! converts its raw arguments once (through `abi::ptr`), calls one runtime
//! method, and maps the result to the C convention through [`boundary`],
//! which also keeps panics from crossing the C boundary.
//!
//! The list of exports is `exports.list`; build.rs derives the `VERS1.0`
//! version script and the `.symver` directives from it.

pub mod async_api;
pub mod boundary;
pub mod data;
pub mod device_api;
pub mod interop;
pub mod kernel;
pub mod kernel_lang;
pub mod register;
pub mod unimplemented;

// Tag every export NAME@@VERS1.0 (see build.rs).
core::arch::global_asm!(include_str!(concat!(env!("OUT_DIR"), "/symver.s")));
