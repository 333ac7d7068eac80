//! A session shell started with a sandbox: still one persistent bash (`cd` and `export`
//! persist), writes confined to the writable folder. Needs a built `synapsed` beside the test
//! binary (`cargo build --bins` first) and a Landlock kernel; skipped, with a note, otherwise.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::process::{BashProcess, ShellSpec};
use synapse_sandbox::{self as sandbox, SandboxSpec, Support};

/// The launcher, when it can sandbox here (a stale `synapsed` without `__sandbox` cannot).
fn usable_launcher() -> Option<PathBuf> {
    if let Support::Unavailable { reason } = sandbox::support() {
        eprintln!("skipping: Landlock unavailable ({reason})");
        return None;
    }
    let Some(exe) = sandbox::launcher() else {
        eprintln!("skipping: no synapsed built beside the test binary (cargo build --bins)");
        return None;
    };
    let probe = std::process::Command::new(&exe)
        .args([sandbox::SUBCOMMAND, "--probe"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&probe.stdout);
    if !said.starts_with("landlock ") {
        eprintln!("skipping: {} cannot sandbox: {said}", exe.display());
        return None;
    }
    Some(exe)
}

async fn run(shell: &mut BashProcess, command: &str) -> (i32, String) {
    let raw = shell
        .run(command, Duration::from_secs(20), &CancellationToken::new())
        .await
        .unwrap();
    (raw.exit_code.unwrap_or(-1), raw.output.render(100_000))
}

fn spec(cwd: &Path, writable: &Path) -> ShellSpec {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    ShellSpec {
        scratch: None,
        cwd: cwd.to_path_buf(),
        env: vec![("PATH".into(), path)],
        bin_dir: None,
        workspace: None,
        sandbox: Some(SandboxSpec {
            writable: vec![writable.to_path_buf()],
            read_only: false,
            protected: Vec::new(),
        }),
        agent: None,
        processes: Default::default(),
        secrets: Default::default(),
    }
}

#[tokio::test]
async fn sandboxed_shell_keeps_its_state_and_writes_only_in_its_folder() {
    if usable_launcher().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let other = dir.path().join("other");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let mut shell = BashProcess::start(&spec(dir.path(), &work)).await.unwrap();

    assert_eq!(run(&mut shell, "cd work && export GREETING=hi").await.0, 0);
    assert_eq!(
        run(&mut shell, "pwd; echo $GREETING").await,
        (0, format!("{}\nhi\n", work.display()))
    );
    assert_eq!(shell.cwd(), work);

    let (code, out) = run(&mut shell, "echo kept > inside.txt && cat inside.txt").await;
    assert_eq!((code, out.as_str()), (0, "kept\n"));

    let (code, out) = run(&mut shell, "echo lost > ../other/outside.txt").await;
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert!(!other.join("outside.txt").exists());

    // The shell itself is the confined process (same pid as the one started): no_new_privs.
    let (_, status) = run(&mut shell, "grep NoNewPrivs /proc/$$/status").await;
    assert_eq!(
        status.split_whitespace().collect::<Vec<_>>(),
        ["NoNewPrivs:", "1"]
    );
    assert_eq!(
        run(&mut shell, "echo $$").await.1.trim(),
        shell.pid().to_string()
    );
    shell.kill_all().await;
}
