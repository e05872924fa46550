//! The README opens with the two commands for a fresh machine, and `.ci/run`
//! runs the second one: keep them in sync.

mod common;

/// See `common::link_library`: without it this binary would not link.
#[test]
fn links_the_library() {
    common::link_library();
}

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn readme_opens_with_setup_and_test_commands() {
    let readme = read("README.md");
    let block = readme.split("```sh\n").nth(1).and_then(|b| b.split("```").next()).expect("README has a first sh block");
    let cmds: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(cmds, ["bash c-tests/example/run.sh", "bash c-tests/test-all.sh"], "first README block");
    let ci = read(".ci/run");
    assert!(ci.lines().any(|l| l.trim() == cmds[1]), ".ci/run must run the README's test command `{}`", cmds[1]);
}

/// Both README commands do their own set-up on a fresh machine through the
/// one set-up script, before anything that needs what it installs.
#[test]
fn readme_commands_run_the_setup_script_first() {
    for (script, mode) in [("c-tests/example/run.sh", "--example"), ("c-tests/test-all.sh", "")] {
        let text = read(script);
        let code: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        let call = format!("c-tests/setup.sh {mode}");
        let setup = code
            .iter()
            .position(|l| l.starts_with("bash ") && l.contains("c-tests/setup.sh") && l.ends_with(mode))
            .unwrap_or_else(|| panic!("{script} does not run `{call}`"));
        let first_use =
            code.iter().position(|l| l.starts_with("cargo ") || l.starts_with("clang-22 ")).expect("a cargo or clang-22 command");
        assert!(setup < first_use, "{script}: `{call}` must come before `{}`", code[first_use]);
    }
    assert!(!read(".ci/run").contains("apt-get"), ".ci/run installs nothing itself: c-tests/setup.sh does");
}
