//! Issue 17, end to end: one output policy. Output over the cap keeps head and tail and saves
//! the whole to a file the model can `read` (removed with the session); a 20 MB MCP result comes
//! back capped without hitting the gRPC limit or the call timeout and leaves the server ready; a
//! tool with a 5,000-character name is skipped beside working ones; file names that are not
//! UTF-8 can be read.

use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

fn exec(env: &TestEnv, args: &[&str]) -> Run {
    let mut cmd = env.synapse();
    cmd.arg("exec").args(args);
    run(&mut cmd)
}

/// The spill file a capped result names (`... is in PATH; ...`).
fn spill_path(out: &str) -> std::path::PathBuf {
    let after = out
        .split(" is in ")
        .nth(1)
        .unwrap_or_else(|| panic!("no spill path in: {}", &out[..out.len().min(2000)]));
    after.split(';').next().unwrap().trim().into()
}

#[test]
fn five_megabytes_of_output_are_capped_with_a_readable_spill_file() {
    let env = TestEnv::new();
    env.start_daemon();
    let r = exec(
        &env,
        &["head -c 5000000 /dev/zero | tr '\\0' x | fold -w 100 | nl -ba -w7 -s' '"],
    );
    assert_eq!(r.code, Some(0), "{}", &r.stdout[..r.stdout.len().min(500)]);
    assert!(r.stdout.len() < 32_000, "{} bytes", r.stdout.len());
    assert!(r.stdout.contains("bytes of output omitted"), "capped");
    let path = spill_path(&r.stdout);
    assert!(path.starts_with(env.home()), "{}", path.display());
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved.lines().count(), 50_000);
    // The model reads the middle it did not see.
    let read = exec(
        &env,
        &[&format!("read {} --offset 25000 --limit 1", path.display())],
    );
    assert_eq!(read.code, Some(0), "{}", read.stdout);
    assert!(read.stdout.contains(" 25001 xxxx"), "{}", read.stdout);
    // The file goes with its session.
    env.stop_daemon();
    assert!(!path.exists(), "{} outlived its session", path.display());
}

#[test]
fn a_file_name_that_is_not_utf8_can_be_read() {
    let env = TestEnv::new();
    env.start_daemon();
    let r = exec(&env, &["printf 'inside\\n' > $'caf\\xe9.txt'; ls"]);
    assert_eq!(r.stdout, "caf\\xe9.txt\n");
    // As the listing shows it (fast path), and as bash passes the raw bytes (in a pipeline).
    let r = exec(&env, &["read 'caf\\xe9.txt'"]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(r.stdout.ends_with("inside\n"), "{}", r.stdout);
    let r = exec(&env, &["read $'caf\\xe9.txt' | grep -c inside"]);
    assert_eq!(r.stdout, "1\n");
}

fn big_server_env() -> TestEnv {
    let env = TestEnv::new();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let python = fixtures.join("venv/bin/python");
    assert!(
        python.exists(),
        "run tests/fixtures/install.sh first (the venv with the mcp package)"
    );
    let config = serde_json::json!({"mcpServers": {"big": {
        "command": python,
        "args": [fixtures.join("big_mcp_server.py")],
    }}});
    let dir = env.home().join("mcp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    env.start_daemon();
    wait_until(DEADLINE, "the big server to be ready", || {
        env.cli(&["mcp", "list"]).stdout.contains("ready")
    });
    env
}

#[test]
fn a_twenty_megabyte_mcp_result_returns_capped_and_the_server_stays_ready() {
    let env = big_server_env();
    wait_until(DEADLINE, "the wrappers to be written", || {
        env.home().join("bin/mcp:big:echo").exists()
    });
    // The 5,000-character tool has no wrapper; the others work.
    let wrappers: Vec<String> = std::fs::read_dir(env.home().join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(wrappers.iter().all(|w| w.len() < 255), "{wrappers:?}");
    assert!(wrappers.contains(&"mcp:big:big".to_owned()), "{wrappers:?}");
    assert_eq!(exec(&env, &["mcp:big:echo hello"]).stdout, "hello\n");

    // In-process and through the wrapper executable (a pipeline), with a short line timeout:
    // the result must come back well before it.
    for line in ["mcp:big:big 20", "mcp:big:big 20 | tail -n 3"] {
        let r = exec(&env, &["--timeout", "60", line]);
        assert_eq!(
            r.code,
            Some(0),
            "{line}: {}",
            &r.stdout[..r.stdout.len().min(2000)]
        );
        assert!(r.stdout.len() < 40_000, "{line}: {} bytes", r.stdout.len());
        assert!(r.stdout.contains("END OF BIG RESULT"), "{line}");
    }
    let r = exec(&env, &["mcp:big:big 20"]);
    let path = spill_path(&r.stdout);
    let read = exec(
        &env,
        &[&format!(
            "read {} --offset 100000 --limit 1",
            path.display()
        )],
    );
    assert!(read.stdout.contains("000100000 xxx"), "{}", read.stdout);
    let list = env.cli(&["mcp", "list"]);
    assert!(list.stdout.contains("ready"), "{}", list.stdout);
    assert_eq!(exec(&env, &["mcp:big:echo still"]).stdout, "still\n");
}

#[test]
fn a_huge_skill_md_is_capped_when_loaded() {
    let env = TestEnv::new();
    let body: String = (0..200_000).map(|i| format!("step {i}\n")).collect();
    env.write_skill("huge", "A skill whose document is very long.", &body);
    env.start_daemon();
    let r = exec(&env, &["skill load huge"]);
    assert_eq!(r.code, Some(0), "{}", &r.stdout[..r.stdout.len().min(500)]);
    assert!(r.stdout.len() < 40_000, "{} bytes", r.stdout.len());
    assert!(r.stdout.contains("step 0\n"), "head kept");
    assert!(r.stdout.contains("step 199999"), "tail kept");
    let path = spill_path(&r.stdout);
    assert!(
        std::fs::read_to_string(path)
            .unwrap()
            .contains("step 100000\n")
    );
}
