//! Another user is refused on the socket: first by the file system (0700 folder, 0600 socket),
//! then — with both loosened to 0777, as a careless `chmod` or a shared runtime folder would —
//! by the client, which talks only to a socket and folder of its own user (issue 16). The
//! daemon's own peer-uid check stays behind both.

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
    // Refused by the file system, or before that by the client: the home is not nobody's
    // (StrictModes, issue 27).
    assert!(
        out.stderr.contains("ermission denied")
            || out.stderr.contains("owned by uid 0, not by you"),
        "{}",
        out.stderr
    );

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
    // The client refuses first (issue 16): the home, the socket and its folder are not nobody's.
    for args in attempts {
        let out = as_nobody(&env, args);
        assert!(!out.success(), "{args:?} ran for another user: {out:?}");
        assert!(
            out.stderr.contains("belongs to uid 0, not to you")
                || out.stderr.contains("owned by uid 0, not by you"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert!(!marker.exists(), "a refused client's command ran");
    // The owner's own client refuses the loosened folder too, and works once it is tightened.
    let loose = env.cli(&["daemon", "status"]);
    assert!(
        !loose.success()
            && (loose.stderr.contains("writable by group or others")
                || loose.stderr.contains("writable by every user")),
        "{loose:?}"
    );
    for dir in [env.root(), env.home(), &env.paths().socket_dir()] {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).unwrap();
    }
    fs::set_permissions(env.paths().socket(), fs::Permissions::from_mode(0o600)).unwrap();
    assert!(
        env.cli(&["daemon", "status"]).success(),
        "the daemon stays healthy"
    );
}

#[test]
fn a_listener_of_another_uid_gets_not_one_byte() {
    use std::io::Read;
    use std::os::unix::net::UnixListener;
    if !nix::unistd::Uid::current().is_root() {
        eprintln!("skipped: dropping to another uid needs root (the suite runs as root in CI)");
        return;
    }
    // A socket and folder that look like nobody's own, but root listens on it: someone else's
    // process waiting for a client to send its command and environment.
    let env = TestEnv::new();
    let dir = env.root().join("nobodys-run");
    fs::create_dir(&dir).unwrap();
    let socket = dir.join("synapsed.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let nobody = Some(nix::unistd::Uid::from_raw(NOBODY));
    let nogroup = Some(nix::unistd::Gid::from_raw(NOBODY));
    for path in [&dir, &socket] {
        nix::unistd::chown(path.as_path(), nobody, nogroup).unwrap();
    }
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    fs::set_permissions(env.root(), fs::Permissions::from_mode(0o755)).unwrap();
    let received = std::thread::spawn(move || {
        let mut total = Vec::new();
        // One connection per attempt; each must close without a byte written.
        for _ in 0..2 {
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(std::time::Duration::from_secs(20)))
                .unwrap();
            let mut bytes = Vec::new();
            let _ = conn.read_to_end(&mut bytes);
            total.push(bytes.len());
        }
        total
    });
    for args in [&["daemon", "status"][..], &["skill", "list"][..]] {
        let mut cmd = env.synapse();
        cmd.current_dir("/")
            .uid(NOBODY)
            .gid(NOBODY)
            .env("SYNAPSE_SOCKET", &socket);
        let out = run(cmd.args(args));
        assert!(!out.success(), "{args:?}: {out:?}");
        assert!(
            out.stderr
                .contains("the process listening there runs as uid 0, not as you"),
            "{args:?}: {}",
            out.stderr
        );
    }
    assert_eq!(
        received.join().unwrap(),
        vec![0, 0],
        "bytes the listener got"
    );
}
