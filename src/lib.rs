//! omptarget-rs: a Rust re-implementation of LLVM's OpenMP offloading runtime
//! (`libomptarget.so.22.1`).
//!
//! The crate builds a C-ABI shared library that a clang-compiled OpenMP
//! program loads instead of LLVM's (by `LD_PRELOAD`, or as a file named
//! `libomptarget.so.22.1` first on the library path), and an rlib that Rust
//! offload binaries and this crate's tests link directly.
//!
//! Layout (dependency direction `api -> runtime -> plugins`):
//! - [`abi`]: `#[repr(C)]` mirrors of what the compiler emits, flag constants,
//!   and the only helpers that turn raw pointers into Rust values.
//! - [`api`]: the exported `extern "C"` entry points; thin shims that catch
//!   panics and call the runtime.
//! - [`runtime`]: devices, registered images, the mapping table, data motion
//!   and kernel launch. No FFI.
//! - [`plugins`]: one back-end per folder behind the [`plugins::Plugin`] trait.
//! - [`offload`]: liboffload's `ol*` API (`libLLVMOffload.so.22.1`) on the same devices.
//! - [`env`]: configuration read once from the environment, diagnostics and
//!   the failure policy.

pub mod abi;
pub mod api;
pub mod env;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod offload;
pub mod ompt;
pub mod plugins;
pub mod profile;
pub mod runtime;
