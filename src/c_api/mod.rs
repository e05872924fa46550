//! The C faces: the exported `extern "C"` entry points of both API families,
//! generated from their declaration lists.

pub mod liboffload;
pub mod openmp;
