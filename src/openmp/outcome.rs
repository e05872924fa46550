//! The offload policy and `handleTargetOutcome`: what a construct's success
//! or failure means, with LLVM's messages and source locations, and the
//! mapping-table dumps of INFO 0x4.

use super::Runtime;
use super::device::OmpDevice;
use super::mapping;
use crate::abi::ptr::{Loc, SourceLoc};
use crate::base::config::{config, info};
use crate::base::diag::{self, CStream, Policy, c_write, fatal, report};
use crate::base::libomp;

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

impl Runtime {
    /// The offload policy, computed once.
    #[inline]
    pub fn policy(&self) -> Policy {
        diag::policy(libomp::target_offload, || {
            // Computed once, at the first construct: with no device, say why
            // (offloading disabled by the environment records no lines).
            let n = self.num_devices();
            if n == 0 {
                self.explain_no_device();
            }
            n
        })
    }

    /// `handleTargetOutcome`.
    #[inline]
    pub fn handle_outcome(&self, success: bool, loc: &Loc) {
        // A successful offload without INFO table dumps has nothing to do.
        if success && diag::policy_if_known() == Some(Policy::Mandatory) && !Self::info_on(info::DUMP_TABLE) {
            return;
        }
        self.handle_outcome_slow(success, loc);
    }

    #[cold]
    #[inline(never)]
    fn handle_outcome_slow(&self, success: bool, loc: &Loc) {
        if !success && self.num_devices() == 0 {
            self.explain_no_device();
        }
        let policy = self.policy();
        if !success && policy == Policy::Mandatory && self.num_devices() == 0 {
            let reg = self.registry.read();
            let archs: Vec<String> = reg.libs.iter().flat_map(|l| l.images.iter().map(|i| i.arch())).collect();
            diag::report("Consult https://openmp.llvm.org/design/Runtimes.html for debugging options.");
            diag::report(&format!(
                "No images found compatible with the installed hardware. Found {} image(s): ({})",
                archs.len(),
                archs.join(",")
            ));
            fatal_at(&loc.source(), 1, "failure of target construct while offloading is mandatory");
        }
        target_outcome(success, policy, loc, |loc| {
            self.dump_tables(&loc.to_string(), false);
            true
        });
    }

    /// Prints every device's mapping table (INFO 0x4 / `ompx_dump_mapping_tables`).
    pub fn dump_tables(&self, location: &str, to_stdout: bool) {
        self.dump_device_tables(&self.devices.all(), location, to_stdout);
    }

    pub(super) fn dump_tables_reversed(&self, location: &str) {
        let mut devices = self.devices.all();
        devices.reverse();
        self.dump_device_tables(&devices, location, false);
    }

    fn dump_device_tables(&self, devices: &[&'static OmpDevice], location: &str, to_stdout: bool) {
        let mut out = String::new();
        for dev in devices {
            let prefix = format!("omptarget device {} info: ", dev.id);
            let entries = dev.table.snapshot();
            if entries.is_empty() {
                out += &format!("{prefix}OpenMP Host-Device pointer mappings table empty\n");
                continue;
            }
            out += &format!("{prefix}OpenMP Host-Device pointer mappings after block at {location}:\n");
            out += &format!(
                "{prefix}{:<18} {:<18} {} {} {} {}\n",
                "Host Ptr", "Target Ptr", "Size (B)", "DynRefCount", "HoldRefCount", "Declaration"
            );
            for e in entries {
                let count = |c: u64| if c == mapping::INF { "INF".to_string() } else { c.to_string() };
                // SAFETY: entry names are compiler-emitted static strings or our leaked ones.
                let (name, decl) = unsafe { crate::abi::ptr::var_info(e.name) };
                out += &format!(
                    "{prefix}{} {} {:<8} {:<11} {:<12} {} at {}\n",
                    diag::ptr(e.host_begin as u64),
                    diag::ptr(e.tgt_begin),
                    e.size(),
                    count(e.dyn_count()),
                    count(e.hold_count()),
                    name,
                    decl
                );
            }
        }
        diag::c_write(if to_stdout { diag::CStream::Stdout } else { diag::CStream::Stderr }, &out);
    }
}
