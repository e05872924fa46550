//! Helpers shared by the integration tests: a small deterministic PRNG,
//! runtime start-up, and re-running the test binary as a child process for
//! cases that must abort (the runtime's fatal errors call `abort()`).
#![allow(dead_code)] // Each test binary uses a different subset.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Output};
use std::sync::Once;

/// xorshift64* — deterministic, dependency-free, good enough for test input.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // A zero state would stay zero forever.
        Rng((seed ^ 0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// The seed for a randomized test: `$var` (decimal or 0x-hex) if set,
/// otherwise derived from the clock. Printed so a failure can be replayed.
pub fn seed_from_env(var: &str) -> u64 {
    let seed = match std::env::var(var) {
        Ok(v) => {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{var}={v} is not a number"))
        }
        Err(_) => {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock after 1970");
            t.as_nanos() as u64 ^ (std::process::id() as u64).rotate_left(32)
        }
    };
    println!("seed = {seed:#x} (replay with {var}={seed:#x})");
    seed
}

/// Initialises the host plugin's devices once per process, so that the
/// offload policy (computed on first use) becomes "mandatory with 4 devices"
/// before any test runs a data or kernel call.
pub fn init_runtime() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        omptarget_rs::c_api::openmp::register::__tgt_init_all_rtls();
    });
    assert_eq!(omptarget_rs::c_api::openmp::device_api::omp_get_num_devices(), 4, "the host plugin exposes 4 devices");
}

/// Environment variable naming the child case a re-executed test binary runs.
pub const CHILD_ENV: &str = "OMPTARGET_RS_TEST_CHILD";

/// Exit code a child uses when a case that should have aborted returned.
pub const CHILD_RETURNED: i32 = 97;

/// The child case this process was started for, if any.
pub fn child_case() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// Re-runs this test binary for exactly `test_name`, with `CHILD_ENV=case`,
/// no core dumps, and captures its output.
pub fn run_child(test_name: &str, case: &str, extra_env: &[(&str, &str)]) -> Output {
    let exe = std::env::current_exe().expect("current_exe");
    let mut cmd = Command::new(exe);
    cmd.args([test_name, "--exact", "--include-ignored", "--nocapture", "--test-threads=1"]).env(CHILD_ENV, case);
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    // SAFETY: only async-signal-safe setrlimit runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    cmd.output().expect("spawn the test binary as a child")
}

fn describe(out: &Output) -> String {
    format!(
        "status: {:?}\n--- child stdout ---\n{}\n--- child stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `body` in a child process (this test binary, filtered to
/// `test_name`) and asserts that it died of SIGABRT with every string of
/// `expected` on stderr. In the child, `body` runs and must not return.
/// `expected` may use `{VAR}` placeholders that the child defines by printing
/// `CHILD VAR=value` lines on stdout before aborting (addresses differ between
/// processes). Returns the child's output.
pub fn expect_abort(test_name: &str, expected: &[&str], body: impl FnOnce()) -> Output {
    if child_case().as_deref() == Some(test_name) {
        body();
        eprintln!("child case {test_name}: returned instead of aborting");
        std::process::exit(CHILD_RETURNED);
    }
    let out = run_child(test_name, test_name, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "expected abort()\n{}", describe(&out));
    let vars: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|l| l[l.find("CHILD ")? + 6..].split_once('=').map(|(k, v)| (format!("{{{k}}}"), v.trim().to_owned())))
        .collect();
    for e in expected {
        let e = vars.iter().fold(e.to_string(), |acc, (k, v)| acc.replace(k, v));
        assert!(!e.contains('{'), "placeholder in {e:?} not defined by the child\n{}", describe(&out));
        assert!(stderr.contains(&e), "stderr lacks {e:?}\n{}", describe(&out));
    }
    out
}

/// Like [`expect_abort`] but the child must exit 0; returns its output.
pub fn expect_clean_child(test_name: &str, body: impl FnOnce()) -> Option<Output> {
    if child_case().as_deref() == Some(test_name) {
        body();
        return None;
    }
    let out = run_child(test_name, test_name, &[]);
    assert!(out.status.success(), "child failed\n{}", describe(&out));
    Some(out)
}

/// A `ident_t` with a static `psource`, as clang emits with `-g`.
pub fn ident(psource: &'static std::ffi::CStr) -> omptarget_rs::abi::ident_t {
    omptarget_rs::abi::ident_t {
        reserved_1: 0,
        flags: 2,
        reserved_2: 0,
        reserved_3: psource.to_bytes().len() as i32,
        psource: psource.as_ptr(),
    }
}

/// Runs each named `#[ignore]`d test of this binary in a child and asserts
/// that it still fails (style guide §8: an ignored test that starts passing
/// must be noticed). When a fix makes one pass, drop its `#[ignore]` and its
/// name here.
pub fn assert_ignored_tests_still_fail(names: &[&str]) {
    let exe = std::env::current_exe().expect("current_exe");
    for name in names {
        let mut cmd = Command::new(&exe);
        cmd.args([name, "--exact", "--include-ignored", "--test-threads=1"]).env_remove(CHILD_ENV);
        // SAFETY: only async-signal-safe setrlimit runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                Ok(())
            });
        }
        let out = cmd.output().expect("spawn the test binary");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("running 1 test"), "no test named {name} in this binary\n{stdout}");
        assert!(!out.status.success(), "the ignored test {name} passes now: remove its #[ignore] (and its name from this list)");
    }
}

/// build.rs hands the `VERS1.0` version script (naming every export) to
/// every link, test binaries included, and rust-lld rejects a script that
/// names undefined symbols. A test binary that uses nothing else from the
/// library calls this to pull the library's object (one codegen unit, so all
/// exports) into its link.
pub fn link_library() {
    let f = std::hint::black_box(omptarget_rs::c_api::openmp::device_api::__tgt_get_num_devices as *const () as usize);
    assert_ne!(f, 0);
}
