//! The `synapse` binary's own surface: version, help and completions need no daemon.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn synapse(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_synapse"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn version_prints_the_crate_version() {
    let (ok, out) = synapse(&["--version"]);
    assert!(ok);
    assert_eq!(out.trim(), format!("synapse {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_lists_the_daemon_commands() {
    let (ok, out) = synapse(&["daemon", "--help"]);
    assert!(ok);
    for cmd in ["start", "stop", "status", "logs"] {
        assert!(out.contains(cmd), "`{cmd}` missing from:\n{out}");
    }
}

#[test]
fn completions_are_generated_for_bash_and_zsh() {
    let (ok, bash) = synapse(&["completions", "bash"]);
    assert!(ok && bash.contains("_synapse()"), "{bash}");
    let (ok, zsh) = synapse(&["completions", "zsh"]);
    assert!(ok && zsh.contains("#compdef synapse"), "{zsh}");
}
