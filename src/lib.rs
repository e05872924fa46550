//! omptarget-rs: a Rust re-implementation of LLVM's offloading runtimes:
//! OpenMP's `libomptarget.so.22.1` and liboffload's `ol*` API
//! (`libLLVMOffload.so.22.1`), over one device layer.
//!
//! Layers, bottom to top (an import only ever points down; `tests/layers.rs`
//! checks it):
//! - [`base`]: primitives (error type, configuration, diagnostics, fork
//!   participation, the libomp binding, ELF parsing, hashing, clocks).
//! - [`abi`]: `#[repr(C)]` mirrors of what the compilers emit and the only
//!   helpers that turn raw pointers into Rust values.
//! - [`plugins`]: one back-end per folder behind the [`plugins::Plugin`] trait.
//! - [`tools`]: OMPT and the profile timeline.
//! - [`device`]: the API-neutral device layer: devices, queues, memory with
//!   one allocation table, launch, images, and the one door to the tools.
//! - [`openmp`] and [`liboffload`]: the semantics of the two APIs, side by
//!   side over the device layer; neither imports the other.
//! - [`c_api`]: the exported `extern "C"` entry points, generated from one
//!   declaration list per family.

pub mod abi;
#[macro_use]
pub mod base;
pub mod c_api;
pub mod device;
#[doc(hidden)]
pub mod fuzzing;
pub mod liboffload;
pub mod openmp;
pub mod plugins;
pub mod tools;
