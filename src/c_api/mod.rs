//! The C faces: the exported `extern "C"` entry points of both API families,
//! generated from their declaration lists.

pub mod liboffload;
pub mod liboffload21;
pub mod liboffload23;
pub mod openmp;
