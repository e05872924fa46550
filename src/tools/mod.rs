//! The tool interfaces users' tools rely on: OMPT (callbacks and device
//! tracing) and the `LIBOMPTARGET_PROFILE` timeline.

pub mod hooks;
pub mod ompt;
pub mod profile;
