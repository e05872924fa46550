//! Bottom primitives: the crate's error type, configuration read once from
//! the environment, diagnostics, the fast-path gate, fork participation, the
//! libomp binding, offload-binary and ELF parsing of images ([`image`]) and
//! the checks of a shared object before it is loaded ([`elf`]). Nothing here
//! imports another folder of the crate.

#[macro_use]
pub mod driver_table;

pub mod clock;
pub mod config;
pub mod cstream;
pub mod diag;
pub mod elf;
pub mod error;
pub mod fast_path;
pub mod fork;
pub mod guard;
pub mod handles;
pub mod hash;
pub mod image;
pub mod intern;
pub mod libomp;
pub mod stack;

pub use config::config;
