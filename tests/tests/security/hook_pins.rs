//! Issue 40: what runs outside the sandbox is pinned by all of its content. A trusted hook
//! `sh .claude/hooks/fmt.sh` stops running once `fmt.sh` changes (a `git pull`, the agent's
//! own `>>`), and the user is told which file and `synapse trust`; `synapse trust` then lists
//! the change with its diff, asks (or takes `--yes`), and the hook runs again. A user-level
//! hook naming a project script is held in a project never trusted. Through the real daemon,
//! real bash and the scripted fake model.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;
use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

/// A project (a git checkout) with a PreToolUse hook running its own script, which appends a
/// line to `marker` outside the project.
struct Repo {
    env: TestEnv,
    root: PathBuf,
    script: PathBuf,
    settings: PathBuf,
    marker: PathBuf,
}

fn repo() -> Repo {
    let env = TestEnv::new();
    let root = env.root().join("repo");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
    let marker = env.root().join("hook-ran");
    let script = root.join(".claude/hooks/fmt.sh");
    std::fs::write(&script, format!("echo fmt >> '{}'\n", marker.display())).unwrap();
    let settings = root.join(".claude/settings.json");
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "",
        "hooks": [{"type": "command", "command": "sh .claude/hooks/fmt.sh"}]}]}});
    std::fs::write(&settings, hooks.to_string()).unwrap();
    let root = root.canonicalize().unwrap();
    Repo {
        script: root.join(".claude/hooks/fmt.sh"),
        settings: root.join(".claude/settings.json"),
        env,
        root,
        marker,
    }
}

/// Lines the hook has appended so far.
fn runs(marker: &Path) -> Vec<String> {
    std::fs::read_to_string(marker)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

async fn run_in(env: &TestEnv, fake: &FakeLlm, dir: &Path) -> Run {
    let mut cmd = env.synapse_with_model(fake);
    cmd.current_dir(dir)
        .args(["run", "--yes", "go"])
        .stdin(Stdio::null());
    Run::from(tokio::process::Command::from(cmd).output().await.unwrap())
}

fn trust(env: &TestEnv, args: &[&str], dir: &Path) -> Run {
    let mut all = vec!["trust"];
    all.extend_from_slice(args);
    let dir = dir.display().to_string();
    all.push(&dir);
    env.cli(&all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_hooks_script_changed_by_a_pull_is_held_until_trust_shows_the_change() {
    let r = repo();
    let root = r.root.display().to_string();

    // No terminal and no --yes: the listing, then nothing trusted.
    let refused = trust(&r.env, &[], &r.root);
    assert!(!refused.success(), "{refused:?}");
    assert!(
        refused.stdout.contains("hook script (new)")
            && refused.stdout.contains(&r.script.display().to_string())
            && refused
                .stdout
                .contains("PreToolUse hook `sh .claude/hooks/fmt.sh`"),
        "{refused:?}"
    );
    assert!(
        refused
            .stderr
            .contains(&format!("not trusted: run `synapse trust --yes {root}`")),
        "{refused:?}"
    );
    let listed = r.env.cli(&["trust", "--list"]);
    assert!(!listed.stdout.contains(&root), "{listed:?}");

    let accepted = trust(&r.env, &["--yes"], &r.root);
    assert!(
        accepted.success() && accepted.stdout.contains("Trusted:"),
        "{accepted:?}"
    );
    let fake = FakeLlm::start(Script::new().tool_call("true").text("done"))
        .await
        .unwrap();
    let out = run_in(&r.env, &fake, &r.root).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(runs(&r.marker), ["fmt"], "the trusted hook ran once");

    // A `git pull` appends to the script: the next tool call does not run it.
    let mut text = std::fs::read_to_string(&r.script).unwrap();
    text.push_str(&format!("echo pulled >> '{}'\n", r.marker.display()));
    std::fs::write(&r.script, &text).unwrap();
    let fake = FakeLlm::start(Script::new().tool_call("true").text("done"))
        .await
        .unwrap();
    let out = run_in(&r.env, &fake, &r.root).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(runs(&r.marker), ["fmt"], "the changed script ran: {out:?}");
    for part in [
        "PreToolUse hook `sh .claude/hooks/fmt.sh`",
        &r.settings.display().to_string(),
        &r.script.display().to_string(),
        "changed since you trusted the project",
        &format!("`synapse trust {root}`"),
    ] {
        assert!(out.stderr.contains(part), "{part}\n{}", out.stderr);
    }

    // `/hooks` says so too.
    let listed = synapse_shared::proto::daemon_client::DaemonClient::new(r.env.channel().await)
        .list_hooks(synapse_shared::proto::ListHooksRequest { cwd: root.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(
        listed
            .problems
            .iter()
            .any(|p| p.contains("is held, not run") && p.contains("fmt.sh")),
        "{listed:?}"
    );

    // Trust lists the change with its diff; without --yes it takes nothing.
    let refused = trust(&r.env, &[], &r.root);
    assert!(!refused.success(), "{refused:?}");
    assert!(
        refused
            .stdout
            .contains("1 new or changed since you last trusted it")
            && refused.stdout.contains("hook script (changed)")
            && refused.stdout.contains("+echo pulled"),
        "{refused:?}"
    );
    let accepted = trust(&r.env, &["--yes"], &r.root);
    assert!(accepted.success(), "{accepted:?}");
    assert!(accepted.stdout.contains("+echo pulled"), "{accepted:?}");
    let fake = FakeLlm::start(Script::new().tool_call("true").text("done"))
        .await
        .unwrap();
    let out = run_in(&r.env, &fake, &r.root).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(runs(&r.marker), ["fmt", "fmt", "pulled"], "{out:?}");

    let again = trust(&r.env, &[], &r.root);
    assert!(again.success(), "{again:?}");
    assert_eq!(
        again.stdout.trim(),
        format!("Already trusted: {root} — nothing new or changed since you last trusted it.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_appending_to_a_trusted_hooks_script_never_gets_it_run() {
    let r = repo();
    assert!(trust(&r.env, &["--yes"], &r.root).success());
    let append = format!(
        "echo \"echo agent >> '{}'\" >> .claude/hooks/fmt.sh",
        r.marker.display()
    );
    let fake = FakeLlm::start(
        Script::new()
            .tool_call(append)
            .tool_call("true")
            .text("done"),
    )
    .await
    .unwrap();
    let out = run_in(&r.env, &fake, &r.root).await;
    assert!(out.success(), "{out:?}");
    let script = std::fs::read_to_string(&r.script).unwrap();
    assert!(
        !runs(&r.marker).iter().any(|l| l == "agent"),
        "the agent's line ran outside the sandbox: {out:?}"
    );
    // The trusted hook's script is a rules file: the write asks in every mode (refused here,
    // nobody to ask), and the script is as the user trusted it.
    assert!(!script.contains("echo agent"), "{script}");
    let refused = fake.requests()[1].last_tool_result().unwrap_or_default();
    assert!(
        refused.contains("is a file you trusted with `synapse trust`"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_hook_naming_a_project_script_waits_for_that_project_to_be_trusted() {
    let env = TestEnv::new();
    let root = env.root().join("cloned");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
    let marker = env.root().join("user-hook-ran");
    let script = root.join(".claude/hooks/x.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho x >> '{}'\n", marker.display()),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let user_settings = env.user_home().join(".claude/settings.json");
    std::fs::create_dir_all(user_settings.parent().unwrap()).unwrap();
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "",
        "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/x.sh"}]}]}});
    std::fs::write(&user_settings, hooks.to_string()).unwrap();
    let root = root.canonicalize().unwrap();

    let fake = FakeLlm::start(Script::new().tool_call("true").text("done"))
        .await
        .unwrap();
    let out = run_in(&env, &fake, &root).await;
    assert!(out.success(), "{out:?}");
    assert!(!marker.exists(), "a project script ran untrusted: {out:?}");
    for part in [
        &user_settings.display().to_string(),
        &root.join(".claude/hooks/x.sh").display().to_string(),
        "not reviewed",
        &format!("`synapse trust {}`", root.display()),
    ] {
        assert!(out.stderr.contains(part), "{part}\n{}", out.stderr);
    }

    let accepted = trust(&env, &["--yes"], &root);
    assert!(accepted.success(), "{accepted:?}");
    assert!(accepted.stdout.contains("x.sh"), "{accepted:?}");
    let fake = FakeLlm::start(Script::new().tool_call("true").text("done"))
        .await
        .unwrap();
    let out = run_in(&env, &fake, &root).await;
    assert!(out.success(), "{out:?}");
    assert_eq!(runs(&marker), ["x"], "{out:?}");
}
