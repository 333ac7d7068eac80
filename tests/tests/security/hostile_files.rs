//! Issue 40, "no file type hangs anything": a cloned repository with a FIFO at every place the
//! daemon reads (a skill's `SKILL.md`, `.mcp.json`, `.vscode/mcp.json`, `mcp_servers.json`,
//! `AGENTS.md`, `CLAUDE.md`, a command, an agent, `.synapse/settings.json`): a `synapse run` there
//! completes and names the FIFOs it skipped; while that project is open, `synapse daemon status`
//! answers and a run in another project completes. And "instruction imports stay in the project":
//! a project's `CLAUDE.md` importing the user's credential stores, a transcript and a 1 MB file of
//! zeros gives the model none of them, and the user is told each one that was skipped.
//!
//! Every child runs under a deadline (and is killed with it): a regression fails these tests,
//! it never hangs them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use synapse_tests::fake_llm::{FakeLlm, Script};
use synapse_tests::{Run, TestEnv};

/// The most any one command of these tests may take.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);

/// The places a FIFO is planted, relative to the project.
const FIFO_PLACES: [&str; 9] = [
    ".claude/skills/x/SKILL.md",
    ".mcp.json",
    ".vscode/mcp.json",
    "mcp_servers.json",
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/commands/x.md",
    ".claude/agents/x.md",
    ".synapse/settings.json",
];

fn git_init(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
}

/// Runs `cmd` to its end, or fails the test (killing it) when it takes longer than the deadline.
async fn within_deadline(what: &str, cmd: std::process::Command) -> Run {
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    match tokio::time::timeout(CHILD_DEADLINE, cmd.output()).await {
        Ok(out) => Run::from(out.unwrap()),
        Err(_) => panic!("{what} did not finish within {CHILD_DEADLINE:?}: something hung"),
    }
}

/// `synapse run <prompt>` in `dir` against `fake`.
fn run_in(env: &TestEnv, fake: &FakeLlm, dir: &Path, prompt: &str) -> std::process::Command {
    let mut cmd = env.synapse_with_model(fake);
    cmd.current_dir(dir).args(["run", prompt]);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifos_in_every_config_place_are_named_and_hang_nothing() {
    let env = TestEnv::new();
    let hostile = env.workdir().join("cloned");
    let other = env.workdir().join("other");
    git_init(&hostile);
    git_init(&other);
    for place in FIFO_PLACES {
        mkfifo(&hostile.join(place));
    }
    std::fs::write(other.join("AGENTS.md"), "OTHER-PROJECT-RULES").unwrap();

    let fake = FakeLlm::start(Script::new().text("hostile-done"))
        .await
        .unwrap();
    let out = within_deadline(
        "a run in the hostile project",
        run_in(&env, &fake, &hostile, "hi"),
    )
    .await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("hostile-done"), "{out:?}");
    for name in ["AGENTS.md", "CLAUDE.md"] {
        let notice =
            format!("synapse: {name} not given to the model: it is a FIFO, not a regular file");
        assert!(
            out.stderr.contains(&notice),
            "{notice} not told:\n{}",
            out.stderr
        );
    }

    // While a session of that project is open (its model never answers), the daemon answers
    // and another project's run completes.
    let stuck = FakeLlm::start(Script::new().hang()).await.unwrap();
    let mut open = tokio::process::Command::from(run_in(&env, &stuck, &hostile, "stay"));
    let mut open = open
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    stuck.wait_for_requests(1, CHILD_DEADLINE).await;
    let status = within_deadline("`synapse daemon status`", {
        let mut c = env.synapse();
        c.args(["daemon", "status"]);
        c
    })
    .await;
    assert!(status.success(), "{status:?}");
    assert!(status.stdout.contains("cloned"), "{status:?}");
    let fine = FakeLlm::start(Script::new().text("other-done"))
        .await
        .unwrap();
    let out = within_deadline(
        "a run in another project",
        run_in(&env, &fine, &other, "hi"),
    )
    .await;
    assert!(
        out.success() && out.stdout.contains("other-done"),
        "{out:?}"
    );
    let system = fine.requests()[0].system_text().unwrap();
    assert!(system.contains("OTHER-PROJECT-RULES"), "{system}");
    open.kill().await.unwrap();
    let _ = open.wait().await;

    // The other places name their FIFOs where the user looks for each. (The untrusted folder's
    // `.synapse/settings.json` is never read: it does not count before `synapse trust`.)
    let fifo = "it is a FIFO, not a regular file";
    for (args, names) in [
        (&["skill", "list"][..], &[".claude/skills/x/SKILL.md"][..]),
        (
            &["mcp", "list"][..],
            &[".mcp.json", ".vscode/mcp.json", "mcp_servers.json"][..],
        ),
        (
            &["doctor"][..],
            &[
                "AGENTS.md not given",
                "CLAUDE.md not given",
                ".claude/commands/x.md is skipped",
                ".claude/agents/x.md is skipped",
            ][..],
        ),
    ] {
        let mut c = env.synapse();
        c.current_dir(&hostile).args(args);
        let out = within_deadline(&format!("`synapse {}`", args.join(" ")), c).await;
        let said = format!("{}{}", out.stdout, out.stderr);
        for name in names {
            assert!(
                said.lines().any(|l| l.contains(name) && l.contains(fifo)),
                "`synapse {}` does not name {name} as a FIFO:\n{said}",
                args.join(" ")
            );
        }
    }
    env.stop_daemon();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credential_imports_reach_neither_the_model_nor_silence() {
    let env = TestEnv::new();
    let work = env.workdir();
    git_init(&work);
    let home = env.user_home();
    let write = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        home.join(".claude/.credentials.json"),
        "SECRET-CLAUDE-OAUTH",
    );
    write(home.join(".codex/auth.json"), "SECRET-CODEX-AUTH");
    write(
        home.join(".claude/projects/-elsewhere/4f2a.jsonl"),
        "{\"text\":\"SECRET-OTHER-TRANSCRIPT\"}",
    );
    std::fs::write(work.join("zeros.md"), vec![0u8; 1024 * 1024]).unwrap();
    write(
        work.join("CLAUDE.md"),
        "PROJECT-RULES-VISIBLE\n@~/.claude/.credentials.json\n@~/.codex/auth.json\n\
         @~/.claude/projects/-elsewhere/4f2a.jsonl\n@zeros.md\n",
    );
    let fake = FakeLlm::start(Script::new().text("done")).await.unwrap();
    let out = within_deadline("the run", run_in(&env, &fake, &work, "hi")).await;
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let system = requests[0].system_text().unwrap();
    assert!(system.contains("PROJECT-RULES-VISIBLE"), "{system}");
    for request in &requests {
        let body = request.body.to_string();
        for secret in [
            "SECRET-CLAUDE-OAUTH",
            "SECRET-CODEX-AUTH",
            "SECRET-OTHER-TRANSCRIPT",
        ] {
            assert!(!body.contains(secret), "{secret} reached the model");
        }
        assert!(!body.contains("\\u0000"), "NUL bytes reached the model");
    }
    for notice in [
        "CLAUDE.md:2: `@~/.claude/.credentials.json` not imported: a credential store",
        "CLAUDE.md:3: `@~/.codex/auth.json` not imported: a credential store",
        "CLAUDE.md:4: `@~/.claude/projects/-elsewhere/4f2a.jsonl` not imported: a session log",
        "CLAUDE.md:5: `@zeros.md` not imported: binary content (1 MB), not text",
    ] {
        assert!(
            out.stderr.contains(notice),
            "{notice} not told:\n{}",
            out.stderr
        );
    }
    // `synapse doctor` says the same.
    let mut doctor = env.synapse();
    doctor.current_dir(&work).arg("doctor");
    let said = within_deadline("`synapse doctor`", doctor).await;
    let said = format!("{}{}", said.stdout, said.stderr);
    assert!(
        said.contains("`@~/.claude/.credentials.json` not imported: a credential store"),
        "{said}"
    );
    env.stop_daemon();
}
