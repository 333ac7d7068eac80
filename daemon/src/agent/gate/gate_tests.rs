//! A session's gate deciding in-process: real rule files in a temp folder, the session's
//! approver answered from the test.

use super::*;
use crate::agent::session::SessionEvent;
use std::time::Duration;
use tokio::sync::broadcast;

struct Fixture {
    dir: tempfile::TempDir,
    gate: Arc<SessionGate>,
    approver: Arc<SessionApprover>,
    events: broadcast::Receiver<SessionEvent>,
}

fn fixture(settings: serde_json::Value, options: GateOptions) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let project = home.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let user_settings = dir.path().join("synapse/settings.json");
    std::fs::create_dir_all(user_settings.parent().unwrap()).unwrap();
    std::fs::write(&user_settings, settings.to_string()).unwrap();
    let env = GateEnv {
        synapse_home: dir.path().join("synapse"),
        user_settings: Arc::new(crate::workspace::SettingsHandle::open(user_settings)),
        trust_file: dir.path().join("synapse/trusted.json"),
        home,
        temp_dir: dir.path().join("tmp"),
        mcp_hints: Arc::new(|_| (None, None)),
        last_good_rules: Default::default(),
        agent_commands: Arc::new(crate::shell::builtin_registry().agent_commands()),
    };
    let (tx, events) = broadcast::channel(16);
    let approver = Arc::new(SessionApprover::new("s1".into(), tx));
    let (gate, problems) = SessionGate::new(
        env,
        project,
        options,
        approver.clone(),
        Arc::new(Audit::new("s1".into(), None)),
        Arc::new(|_| {}),
    );
    assert!(problems.is_empty(), "{problems:?}");
    Fixture {
        dir,
        gate: Arc::new(gate),
        approver,
        events,
    }
}

async fn check(f: &Fixture, command: &str) -> GateVerdict {
    let cwd = f.dir.path().join("home/proj");
    let info = GateInfo {
        cwd: &cwd,
        is_session_pid: &|_| false,
        sandboxed: true,
        shell_pid: Some(1),
        call_seq: 1,
        hook: Default::default(),
    };
    f.gate.check(GateAction::Native { command }, info).await
}

fn refused(v: &GateVerdict) -> bool {
    matches!(v, GateVerdict::Refuse(_))
}

#[tokio::test]
async fn auto_mode_runs_reads_and_project_writes_and_a_deny_rule_wins() {
    let f = fixture(
        serde_json::json!({"permissions": {"bash": {"deny": ["curl:*"]}}}),
        GateOptions {
            non_interactive: true,
            ..GateOptions::default()
        },
    );
    assert_eq!(check(&f, "ls -la").await, GateVerdict::Run);
    assert_eq!(check(&f, "echo hi > notes.txt").await, GateVerdict::Run);
    let v = check(&f, "ls; curl https://example.com").await;
    assert!(
        matches!(&v, GateVerdict::Refuse(why) if why.contains("curl")),
        "{v:?}"
    );
}

#[tokio::test]
async fn what_asks_is_refused_without_a_user_and_asked_with_one() {
    let f = fixture(
        serde_json::json!({}),
        GateOptions {
            non_interactive: true,
            ..GateOptions::default()
        },
    );
    assert!(refused(&check(&f, "rm -rf ~/Documents").await));

    let mut f = fixture(serde_json::json!({}), GateOptions::default());
    let gate = f.gate.clone();
    let cwd = f.dir.path().join("home/proj");
    let asked = tokio::spawn(async move {
        let info = GateInfo {
            cwd: &cwd,
            is_session_pid: &|_| false,
            sandboxed: true,
            shell_pid: Some(1),
            call_seq: 1,
            hook: Default::default(),
        };
        gate.check(
            GateAction::Native {
                command: "rm -rf ~/Documents",
            },
            info,
        )
        .await
    });
    let id = loop {
        match tokio::time::timeout(Duration::from_secs(10), f.events.recv())
            .await
            .unwrap()
            .unwrap()
        {
            SessionEvent::Approval { id, title, .. } => {
                assert!(title.contains("rm"), "{title}");
                break id;
            }
            _ => continue,
        }
    };
    assert!(f.approver.answer(&id, "no"));
    assert!(refused(&asked.await.unwrap()));
}

#[tokio::test]
async fn read_only_mode_refuses_writes_and_a_broken_rules_file_fails_closed() {
    let f = fixture(
        serde_json::json!({}),
        GateOptions {
            mode: Some(Mode::ReadOnly),
            non_interactive: true,
            ..GateOptions::default()
        },
    );
    assert_eq!(check(&f, "cat a.txt").await, GateVerdict::Run);
    assert!(refused(&check(&f, "echo hi > notes.txt").await));

    // A rules file that does not parse at first start: nothing risky runs unasked.
    let f = fixture(
        serde_json::json!({"permissions": {"bash": {"deny": "rm:*"}}}),
        GateOptions {
            non_interactive: true,
            ..GateOptions::default()
        },
    );
    assert!(refused(&check(&f, "rm -f notes.txt").await));
}

#[tokio::test]
async fn a_caller_without_flags_is_told_the_rule_and_the_file_that_allow_it() {
    let f = fixture(
        serde_json::json!({"permissions": {"defaultMode": "ask"}}),
        GateOptions {
            non_interactive: true,
            refusal_hint: super::RefusalHint::SettingsRule,
            ..GateOptions::default()
        },
    );
    let v = check(&f, "touch notes.txt").await;
    let GateVerdict::Refuse(why) = &v else {
        panic!("not refused: {v:?}");
    };
    let file = f.dir.path().join("synapse/settings.json");
    assert!(why.starts_with("Permission denied: "), "{why}");
    assert!(
        why.contains("to permissions.bash.allow in ") && why.contains(&file.display().to_string()),
        "{why}"
    );
    assert!(!why.contains("--allow") && !why.contains("--yes"), "{why}");
}
