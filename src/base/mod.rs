//! Bottom primitives: the crate's error type, configuration read once from
//! the environment, diagnostics, the fast-path gate, fork participation, the
//! libomp binding and the pure ELF checks. Nothing here imports another folder of the crate.

#[macro_use]
pub mod driver_table;

pub mod config;
pub mod diag;
pub mod elf;
pub mod error;
pub mod fast_path;
pub mod fork;
pub mod libomp;

pub use config::config;
