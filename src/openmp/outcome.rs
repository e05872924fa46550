//! `handleTargetOutcome`: what a construct's success or failure means under
//! the offload policy, with LLVM's messages and source locations.

use crate::abi::ptr::{Loc, SourceLoc};
use crate::base::config::config;
use crate::base::diag::{CStream, Policy, c_write, fatal, report};

/// What `handleTargetOutcome` does after an offload attempt. `dump_tables`
/// prints the mapping tables (INFO 0x4) and returns true when it did.
pub fn target_outcome(success: bool, policy: Policy, loc: &Loc, dump_tables: impl FnOnce(&SourceLoc) -> bool) {
    match (policy, success) {
        (Policy::Disabled, true) => fatal(1, "expected no offloading while offloading is disabled"),
        (Policy::Disabled, false) => {}
        (Policy::Mandatory, true) => {
            if config().info_on(crate::base::config::info::DUMP_TABLE) {
                dump_tables(&loc.source());
            }
        }
        (Policy::Mandatory, false) => {
            let loc = loc.source();
            if !(config().info_on(crate::base::config::info::DUMP_TABLE) && dump_tables(&loc)) {
                report("Consult https://openmp.llvm.org/design/Runtimes.html for debugging options.");
            }
            fatal_at(&loc, 1, "failure of target construct while offloading is mandatory")
        }
    }
}

/// A fatal error with the source-location prefix LLVM prints (or its
/// "not present" note when built without `-g`).
pub fn fatal_at(loc: &SourceLoc, code: i64, text: &str) -> ! {
    if loc.is_available() {
        c_write(CStream::Stderr, &format!("{loc}: "));
    } else {
        report("Source location information not present. Compile with -g or -gline-tables-only.");
    }
    fatal(code, text)
}
