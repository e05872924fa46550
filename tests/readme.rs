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
