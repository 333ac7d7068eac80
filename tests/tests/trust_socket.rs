//! Issue 16, the client checks whom it talks to: a socket reached through a symlinked folder,
//! or in a folder others may write, is refused before anything is sent — the daemon never
//! sees the command (a marker proves it did not run).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;

use synapse_tests::{TestEnv, run};

#[test]
fn a_symlinked_or_group_writable_socket_folder_is_refused() {
    let env = TestEnv::new();
    env.start_daemon();
    let marker = env.root().join("pwned-through-link");
    let touch = format!("touch {}", marker.display());

    let alias = env.root().join("alias");
    std::os::unix::fs::symlink(env.paths().socket_dir(), &alias).unwrap();
    let mut cmd = env.synapse();
    cmd.env("SYNAPSE_SOCKET", alias.join("synapsed.sock"))
        .args(["exec", &touch]);
    let out = run(&mut cmd);
    assert!(!out.success(), "{out:?}");
    assert!(out.stderr.contains("it is a symlink"), "{}", out.stderr);
    assert!(!marker.exists(), "the command was sent through the link");

    let dir = env.paths().socket_dir();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o770)).unwrap();
    let out = run(env.synapse().args(["exec", &touch]));
    assert!(!out.success(), "{out:?}");
    assert!(
        out.stderr.contains("writable by group or others") && out.stderr.contains("chmod go-w"),
        "{}",
        out.stderr
    );
    assert!(
        !marker.exists(),
        "the command was sent to a loosened socket"
    );

    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    let out = run(env.synapse().args(["exec", "echo fine"]));
    assert!(out.success() && out.stdout.contains("fine"), "{out:?}");
}

#[test]
fn the_daemon_refuses_to_serve_in_a_symlinked_socket_folder() {
    let env = TestEnv::new();
    let real = env.root().join("real-run");
    fs::create_dir_all(&real).unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o700)).unwrap();
    let alias = env.root().join("alias-run");
    std::os::unix::fs::symlink(&real, &alias).unwrap();
    let mut cmd = env.synapsed();
    cmd.env("SYNAPSE_SOCKET", alias.join("synapsed.sock"));
    let log = env.root().join("synapsed.out");
    let file = fs::File::create(&log).unwrap();
    cmd.stdout(file.try_clone().unwrap()).stderr(file);
    let mut child = cmd.spawn().unwrap();
    let mut status = None;
    let exited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        synapse_tests::wait_until(synapse_tests::DEADLINE, "synapsed to refuse", || {
            status = child.try_wait().unwrap();
            status.is_some()
        })
    }));
    if exited.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("synapsed served in a symlinked folder");
    }
    assert!(!status.unwrap().success());
    let said = fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("refusing to serve") && said.contains("symlink"),
        "{said}"
    );
    assert!(!real.join("synapsed.sock").exists(), "a socket was bound");
}
