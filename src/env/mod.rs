//! Environment and diagnostics: configuration read once, debug/info output,
//! user-facing messages in LLVM's format, and the failure policy.

pub mod config;
pub mod diag;
pub mod slow;

pub use config::config;
