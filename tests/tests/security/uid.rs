//! Another user is refused on the socket: first by the file system (0700 folder, 0600 socket),
//! then — with both loosened to 0777, as a careless `chmod` or a shared runtime folder would —
//! by the daemon's own peer-uid check, for every service, with a line in the daemon's log.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use synapse_tests::{Run, TestEnv, run};

/// `nobody` on Debian and most distributions.
const NOBODY: u32 = 65534;

/// `synapse <args>` as uid/gid 65534 with no supplementary groups (std drops them when root
/// changes uid), from `/` so the test's own folders play no part.
fn as_nobody(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.current_dir("/").uid(NOBODY).gid(NOBODY);
    run(cmd.args(args))
}

#[test]
fn another_uid_is_refused_even_on_a_loosened_socket() {
    if !nix::unistd::Uid::current().is_root() {
        eprintln!("skipped: dropping to another uid needs root (the suite runs as root in CI)");
        return;
    }
    let env = TestEnv::new();
    env.start_daemon();
    let out = as_nobody(&env, &["daemon", "status"]);
    assert!(!out.success(), "{out:?}");
    assert!(out.stderr.contains("ermission denied"), "{}", out.stderr);

    for dir in [env.root(), env.home(), &env.paths().socket_dir()] {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
    }
    fs::set_permissions(env.paths().socket(), fs::Permissions::from_mode(0o777)).unwrap();
    let marker = env.root().join("pwned-by-nobody");
    let touch = format!("touch {}", marker.display());
    let attempts: [&[&str]; 5] = [
        &["daemon", "status"],
        &["exec", &touch],
        &["skill", "list"],
        &["sessions", "list"],
        &["mcp", "list"],
    ];
    for args in attempts {
        let out = as_nobody(&env, args);
        assert!(!out.success(), "{args:?} ran for another user: {out:?}");
        assert!(
            out.stderr
                .contains(&format!("clients of uid {NOBODY} are refused")),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert!(!marker.exists(), "a refused client's command ran");
    assert!(
        env.cli(&["daemon", "status"]).success(),
        "the daemon stays healthy"
    );
    let logs = env.cli(&["daemon", "logs"]).stdout;
    let refusals = logs
        .lines()
        .filter(|l| l.contains("refused a client of another user") && l.contains("peer_uid=65534"))
        .count();
    assert!(
        refusals >= attempts.len(),
        "{refusals} refusals logged:\n{logs}"
    );
}
