//! The `synapsed` binary's own surface.

use std::process::Command;

#[test]
fn version_and_help() {
    let exe = synapse_tests::bin("synapsed");
    let out = Command::new(&exe).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("synapsed {}", env!("CARGO_PKG_VERSION"))
    );
    let out = Command::new(&exe).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--foreground") && help.contains("SYNAPSE_HOME"),
        "{help}"
    );
}
