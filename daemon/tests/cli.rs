//! The `synapsed` binary's own surface.
//! It lives beside the daemon (not in the e2e binary) so that `cargo test --workspace` builds the
//! real `synapsed` executable before the end-to-end suite runs it; `client/tests/cli.rs` does the
//! same for `synapse`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn version_and_help() {
    let exe = env!("CARGO_BIN_EXE_synapsed");
    let out = Command::new(exe).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("synapsed {}", env!("CARGO_PKG_VERSION"))
    );
    let out = Command::new(exe).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--foreground") && help.contains("SYNAPSE_HOME"),
        "{help}"
    );
}
