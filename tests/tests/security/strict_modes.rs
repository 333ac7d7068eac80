//! Issue 27, "metadata is unconfined": a Synapse home or rules file that another local user
//! could change is refused, as ssh's StrictModes refuses a loose `~/.ssh`, naming the fix — so a
//! `settings.json` made world-writable (by a mistake, or before the sandbox refused `chmod`)
//! cannot be turned into `defaultMode: yolo` by someone else.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use synapse_tests::TestEnv;

fn chmod(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_world_writable_settings_file_is_refused_now_and_at_the_next_start() {
    let env = TestEnv::new();
    env.start_daemon();
    let settings = env.paths().settings_file();
    // Another user rewrites the loose file to run everything unasked.
    chmod(&settings, 0o666);
    std::fs::write(
        &settings,
        json!({"permissions": {"defaultMode": "yolo"}}).to_string(),
    )
    .unwrap();
    let refused = env.cli(&["daemon", "status"]);
    assert!(!refused.success(), "{refused:?}");
    assert!(
        refused.stderr.contains("settings.json")
            && refused.stderr.contains("writable by every user")
            && refused.stderr.contains("chmod go-w"),
        "{}",
        refused.stderr
    );
    // A restart does not take it in either: the daemon's own start refuses the home.
    chmod(&settings, 0o600);
    assert!(env.cli(&["daemon", "stop"]).success());
    chmod(&settings, 0o620);
    let start = env.cli(&["daemon", "start"]);
    assert!(!start.success(), "{start:?}");
    assert!(
        format!("{}{}", start.stdout, start.stderr).contains("writable by its group"),
        "{start:?}"
    );
    // Fixed as told, everything works again.
    chmod(&settings, 0o600);
    let ok = env.cli(&["daemon", "status"]);
    assert!(ok.success(), "{ok:?}");
}

#[test]
fn a_group_writable_home_is_refused_until_fixed() {
    let env = TestEnv::new();
    env.start_daemon();
    chmod(env.home(), 0o770);
    let refused = env.cli(&["skill", "list"]);
    assert!(!refused.success(), "{refused:?}");
    assert!(
        refused.stderr.contains("writable by its group") && refused.stderr.contains("chmod go-w"),
        "{}",
        refused.stderr
    );
    chmod(env.home(), 0o700);
    assert!(env.cli(&["skill", "list"]).success());
}
