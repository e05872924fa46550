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
pub mod record_replay;
pub mod register;

// The `codeptr_ra` trampolines of the exports marked `ra` (see build.rs and
// src/ompt/ra.rs), then every export tagged NAME@@VERS1.0.
core::arch::global_asm!(include_str!(concat!(env!("OUT_DIR"), "/ra_trampolines.s")));
// Tag every export NAME@@VERS1.0 (see build.rs).
core::arch::global_asm!(include_str!(concat!(env!("OUT_DIR"), "/symver.s")));
