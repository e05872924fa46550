//! ABI mirrors: the byte layouts clang (and rustc's offload codegen) emit and
//! the constants of the libomptarget interface. No logic lives here except
//! the pointer helpers in [`ptr`], which are the only place raw caller
//! pointers become Rust values.

pub mod map_type;
pub mod mapper;
pub mod omp_task;
pub mod ptr;
pub mod types;

pub use map_type::MapType;
pub use types::*;
