//! Issue 16, `synapse exec --permission-mode M`: a user tries rules exactly as the agent meets
//! them — deny rules, the mode's refusals (non-interactive: what would ask is refused, saying
//! why) and the mode's OS sandbox — while plain `synapse exec` still runs as the user.

use synapse_tests::{Run, TestEnv, bin};

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.env("TMPDIR", env.root().join("tmp"))
        .arg("exec")
        .args(args);
    synapse_tests::run(&mut cmd)
}

fn setup() -> TestEnv {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::create_dir_all(env.root().join("tmp")).unwrap();
    std::fs::write(
        env.paths().settings_file(),
        r#"{"permissions": {"bash": {"deny": ["rm:*"]}}}"#,
    )
    .unwrap();
    env
}

#[test]
fn exec_with_a_mode_meets_the_rules_and_without_one_runs_as_the_user() {
    let env = setup();
    let victim = env.workdir().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    for mode in ["auto", "yolo", "read-only"] {
        let r = exec(&env, &["--permission-mode", mode, "rm victim.txt"]);
        assert_ne!(r.code, Some(0), "{mode}: {r:?}");
        assert!(
            r.stdout.contains("Permission denied") && r.stdout.contains("rm:*"),
            "{mode}: {r:?}"
        );
        assert!(victim.exists(), "{mode}: the deny rule did not hold");
    }
    let r = exec(
        &env,
        &["--permission-mode", "read-only", "echo x > out.txt"],
    );
    assert!(r.stdout.contains("read-only mode"), "{r:?}");
    assert!(!env.workdir().join("out.txt").exists());
    // An alias set by an earlier exec in the same session is resolved too.
    let r = exec(
        &env,
        &[
            "--permission-mode",
            "auto",
            "shopt -s expand_aliases; alias ll='rm -f'",
        ],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let r = exec(&env, &["--permission-mode", "auto", "ll victim.txt; true"]);
    assert!(r.stdout.contains("Permission denied"), "{r:?}");
    assert!(victim.exists());
    // Without a mode it is the user's own command: no rules apply.
    let r = exec(&env, &["rm victim.txt"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(!victim.exists());
    let help = env.cli(&["exec", "--help"]);
    assert!(
        help.stdout.contains("no permission rules and no sandbox")
            && help.stdout.contains("--permission-mode"),
        "{help:?}"
    );
}

#[test]
fn exec_with_a_mode_runs_in_that_modes_sandbox() {
    let probe = std::process::Command::new(bin("synapsed"))
        .args(["__sandbox", "--probe"])
        .output()
        .unwrap();
    if !probe.status.success() {
        return;
    }
    let env = setup();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // The target is only known at run time, so the rules let the sandbox decide.
    let line = format!("D={}; touch \"$D/escaped\"", outside.display());
    let r = exec(&env, &["--permission-mode", "auto", &line]);
    assert_ne!(r.code, Some(0), "{r:?}");
    assert!(
        !outside.join("escaped").exists(),
        "the auto sandbox let a write out"
    );
    let r = exec(&env, &[&line]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        outside.join("escaped").exists(),
        "plain exec runs as the user"
    );
}
