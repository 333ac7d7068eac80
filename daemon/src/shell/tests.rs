//! In-process tests of the whole shell subsystem: real bash, real files, through
//! [`ShellSessions`] and the router, asserting the text the model would receive.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

use super::*;

pub(super) struct Fixture {
    dir: tempfile::TempDir,
    pub(super) sessions: Arc<ShellSessions>,
}

impl Fixture {
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let sessions = ShellSessions::new(Arc::new(builtin_registry()), Some(bin));
        Self {
            dir,
            sessions: Arc::new(sessions),
        }
    }

    pub(super) fn root(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    pub(super) async fn call_in(&self, session: &str, call: ToolCall) -> ToolResult {
        let origin = SessionOrigin {
            cwd: self.root(),
            env: Vec::new(),
            sandbox: None,
            workspace: None,
            private_tmp: None,
            spare_tmp: None,
        };
        self.sessions
            .execute(session, &origin, &call, &CancellationToken::new())
            .await
            .unwrap()
    }

    pub(super) async fn run_in(&self, session: &str, command: &str) -> ToolResult {
        self.call_in(
            session,
            ToolCall {
                command: command.into(),
                ..Default::default()
            },
        )
        .await
    }

    pub(super) async fn run(&self, command: &str) -> ToolResult {
        self.run_in("main", command).await
    }

    pub(super) async fn ok(&self, command: &str) -> String {
        let r = self.run(command).await;
        assert_eq!(r.exit_code, 0, "{command:?} failed:\n{}", r.output);
        r.output
    }
}

/// Processes whose command line is exactly `argv` (NUL-separated in /proc).
pub(super) fn count_processes(argv: &[&str]) -> usize {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == wanted))
        .filter(|e| {
            std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| !r.trim_start().starts_with('Z'))
            })
        })
        .count()
}

pub(super) async fn wait_until(deadline: Duration, what: &str, cond: impl Fn() -> bool) {
    let end = Instant::now() + deadline;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn cd_and_export_persist_between_calls() {
    let f = Fixture::new();
    f.ok("cd /tmp").await;
    f.ok("export X=1").await;
    assert_eq!(f.ok("pwd; echo $X").await, "/tmp\n1\n");
    let r = f.run("false").await;
    assert_eq!((r.exit_code, r.output.as_str()), (1, "[exit code: 1]"));
    assert_eq!(r.cwd, Path::new("/tmp"));
}

#[tokio::test]
async fn restart_gives_a_fresh_shell() {
    let f = Fixture::new();
    f.ok("export X=1; cd /").await;
    let r = f
        .call_in(
            "main",
            ToolCall {
                command: "echo \"[$X]\"; pwd".into(),
                restart: true,
                ..Default::default()
            },
        )
        .await;
    assert!(r.restarted);
    assert_eq!(r.output, format!("[]\n{}\n", f.root().display()));
    let r = f
        .call_in(
            "main",
            ToolCall {
                restart: true,
                ..Default::default()
            },
        )
        .await;
    assert_eq!(
        r.output,
        format!("Shell restarted in {}.", f.root().display())
    );
}

#[tokio::test]
async fn shell_environment_is_set_up_for_tools() {
    let f = Fixture::new();
    let out = f
        .ok("echo $NO_COLOR $TERM $PAGER $GIT_PAGER; echo ${PATH%%:*}; cat; echo eof")
        .await;
    assert_eq!(
        out,
        format!("1 dumb cat cat\n{}\neof\n", f.root().join("bin").display())
    );
}

#[tokio::test]
async fn write_read_and_relative_paths_follow_cd() {
    let f = Fixture::new();
    assert_eq!(
        f.ok("write d/a.txt 'L1\nL2\nL2'").await,
        "Created d/a.txt (3 lines, 8 bytes)"
    );
    assert_eq!(
        std::fs::read_to_string(f.root().join("d/a.txt")).unwrap(),
        "L1\nL2\nL2"
    );
    assert_eq!(
        f.ok("read d/a.txt --offset 1 --limit 1").await,
        "     2\tL2\n[lines 2-2 of 3; more with `read d/a.txt --offset 2`]\n"
    );
    f.ok("mkdir sub && echo inside > sub/a.txt").await;
    f.ok("cd sub").await;
    assert_eq!(f.ok("read a.txt").await, "     1\tinside\n");
    f.ok("write b.txt 'in sub'").await;
    assert!(f.root().join("sub/b.txt").is_file());
}

#[tokio::test]
async fn help_flags_count_only_as_first_argument() {
    let f = Fixture::new();
    f.ok(r#"write f "use ls -h here""#).await;
    assert_eq!(
        std::fs::read_to_string(f.root().join("f")).unwrap(),
        "use ls -h here"
    );
    assert_eq!(
        f.ok("read -h").await,
        "usage: read <path> [--offset N] [--limit N]\nShow a text file with numbered lines (like `cat -n`).\n"
    );
    let full = f.ok("read --help").await;
    assert!(
        full.starts_with("usage: read <path>") && full.contains("--offset N"),
        "{full}"
    );
    let r = f.run("read").await;
    assert_eq!(r.exit_code, 2);
    assert_eq!(
        r.output,
        "read: missing <path>\nusage: read <path> [--offset N] [--limit N]\nrun `read --help` for details\n[exit code: 2]"
    );
    insta::assert_snapshot!("read_help", full);
    insta::assert_snapshot!(
        "system_prompt_section",
        builtin_registry().system_prompt_section()
    );
}

#[tokio::test]
async fn edit_is_all_or_nothing() {
    let f = Fixture::new();
    let path = f.root().join("e.txt");
    std::fs::write(&path, "x = 1\ny = 1\nz = 2\n").unwrap();
    assert_eq!(
        f.ok("edit e.txt 'z = 2' 'z = 3'").await,
        "Replaced 1 occurrence in e.txt (line 3)"
    );
    let before = std::fs::read(&path).unwrap();
    let r = f.run("edit e.txt '= 1' '= 5'").await;
    assert_eq!(r.exit_code, 1);
    assert!(
        r.output
            .contains("occurs 2 times in e.txt (lines 1, 2); nothing changed"),
        "{}",
        r.output
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let r = f.run("edit e.txt 'absent' 'x'").await;
    assert!(
        r.output.contains("not found in e.txt; nothing changed"),
        "{}",
        r.output
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(
        f.ok("edit e.txt '= 1' '= 5' --all").await,
        "Replaced 2 occurrences in e.txt (lines 1, 2)"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "x = 5\ny = 5\nz = 3\n"
    );
}

#[tokio::test]
async fn heredoc_write_is_verbatim() {
    let f = Fixture::new();
    let out = f.ok("write s.sh <<'EOF'\necho \"$HOME\\n\"\nEOF").await;
    assert_eq!(out, "Created s.sh (1 line, 15 bytes)");
    assert_eq!(
        std::fs::read_to_string(f.root().join("s.sh")).unwrap(),
        "echo \"$HOME\\n\"\n"
    );
}

#[tokio::test]
async fn pipelines_and_redirects_go_to_bash() {
    let f = Fixture::new();
    assert_eq!(f.ok("echo abc | tr a-c x-z").await, "xyz\n");
    f.ok("echo hi > r.txt").await;
    assert_eq!(f.ok("read r.txt").await, "     1\thi\n");
    // Not simple: bash's own `read` builtin gets it.
    let r = f.run("read r.txt < /dev/null").await;
    assert!(r.output.contains("not a valid identifier"), "{}", r.output);
    let r = f.run("glob '*.txt' | wc -l").await;
    assert!(
        r.output.contains("`glob` is an agent command"),
        "{}",
        r.output
    );
    assert_eq!(f.ok("bash 'echo a | tr a b'").await, "b\n");
}

#[tokio::test]
async fn glob_and_search_run_in_process() {
    let f = Fixture::new();
    f.ok("mkdir -p src && printf 'fn main() {}\\n' > src/m.rs && printf 'x\\n' > n.txt")
        .await;
    assert_eq!(f.ok("glob '**/*.rs'").await, "src/m.rs\n");
    assert_eq!(
        f.ok("search 'fn \\w+' --glob '*.rs'").await,
        "src/m.rs:1:fn main() {}\n"
    );
}

#[tokio::test]
async fn tool_call_lookalikes_are_explained() {
    let f = Fixture::new();
    let r = f.run(r#"Bash(command="ls -la")"#).await;
    assert_eq!(r.exit_code, 2);
    assert!(
        r.output.contains("looks like a tool call") && r.output.contains("Did you mean: ls -la")
    );
}

#[tokio::test]
async fn big_output_is_capped_with_an_elision_line() {
    let f = Fixture::new();
    let out = f.ok("seq 1 1000000").await; // 6.9 MB
    assert!(out.starts_with("1\n2\n3\n"));
    assert!(out.ends_with("999999\n1000000\n"));
    assert!(
        out.contains("bytes of output omitted; total 6888896 bytes"),
        "{}",
        &out[14000..16000]
    );
    assert!(out.chars().count() < OUTPUT_CAP_CHARS + 700);
    let r = f.run("printf 'a\\0b\\0\\1\\2'").await;
    assert!(
        r.output.starts_with("[binary output (6 bytes)"),
        "{}",
        r.output
    );
    assert!(r.output.ends_with("a\\0b\\0\u{1}\u{2}"), "{}", r.output);
    let r = f.run("printf 'text\\0more\\n'").await;
    assert_eq!(r.output, "text\\0more\n");
}

#[tokio::test]
async fn sessions_do_not_share_cwd_or_env() {
    let f = Fixture::new();
    f.run_in("one", "cd /tmp; export ONLY=one").await;
    let r = f.run_in("two", "pwd; echo \"[$ONLY]\"").await;
    assert_eq!(r.output, format!("{}\n[]\n", f.root().display()));
    assert_eq!(
        f.run_in("one", "pwd; echo $ONLY").await.output,
        "/tmp\none\n"
    );
    assert_eq!(
        f.sessions.names(),
        vec!["one".to_string(), "two".to_string()]
    );
    assert!(f.sessions.close("one").await);
    assert_eq!(
        f.sessions.close_idle(Duration::ZERO).await,
        vec!["two".to_string()]
    );
}

#[tokio::test]
async fn closing_stdout_or_killing_the_shell_is_recoverable() {
    let f = Fixture::new();
    let r = f.run("exec 1>&-; echo lost").await;
    assert_eq!(r.exit_code, 1, "{}", r.output);
    assert_eq!(f.ok("echo back").await, "back\n");
    f.ok("cd /tmp").await;
    let r = f.run("kill $$").await;
    assert!(r.restarted, "{r:?}");
    assert!(
        r.output.contains("[the shell exited (status 143)]"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("a new shell was started in /tmp"),
        "{}",
        r.output
    );
    assert_eq!(f.ok("echo alive; pwd").await, "alive\n/tmp\n");
    let r = f.run("echo bye; exit 3").await;
    assert_eq!(r.exit_code, 3);
    assert!(
        r.output.starts_with("bye\n[the shell exited (status 3)]"),
        "{}",
        r.output
    );
    assert_eq!(f.ok("echo ok").await, "ok\n");
}

#[test]
fn model_api_keys_never_reach_the_shell() {
    let spec = ShellSpec {
        scratch: None,
        cwd: std::path::PathBuf::from("/"),
        env: vec![
            ("ANTHROPIC_API_KEY".into(), "sk-ant-secret".into()),
            ("OPENAI_API_KEY".into(), "sk-secret".into()),
            ("BRAVE_API_KEY".into(), "brave-secret".into()),
            ("MY_TOOL_TOKEN".into(), "kept".into()),
        ],
        secrets: super::spec::SecretVariables::with(["BRAVE_API_KEY"]),
        bin_dir: None,
        workspace: None,
        sandbox: None,
        agent: None,
        processes: Default::default(),
    };
    let env = spec.shell_env("tag");
    assert!(
        !env.iter().any(|(k, _)| k == "ANTHROPIC_API_KEY"
            || k == "OPENAI_API_KEY"
            || k == "BRAVE_API_KEY")
    );
    assert!(env.iter().any(|(k, v)| k == "MY_TOOL_TOKEN" && v == "kept"));
}
