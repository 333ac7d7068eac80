//! Issue 31, MCP commands as a user and the model meet them: every `--help` example of real
//! servers (npm `server-everything`, `server-memory`, `server-filesystem`) runs as shown through
//! `synapse exec`; `mcp:<server>:resources|read` are real commands in pipelines and in the
//! user's own terminal, only for servers that offer resources; a long result is whole in the
//! user's pipeline and capped only for the model; media from a terminal call land in the user's
//! private temp folder; bash's errors read as bash's, not as `/dev/fd/7`; `mcp list` shows the
//! server's own pid.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use crate::mcp_support::{fixtures_dir, venv_python};
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

fn npm_server(name: &str) -> String {
    fixtures_dir()
        .join(format!(
            "node_modules/@modelcontextprotocol/server-{name}/dist/index.js"
        ))
        .display()
        .to_string()
}

/// `synapse <args>` with the daemon's temp dir (when it starts it) inside the test's root.
fn cli(env: &TestEnv, args: &[&str]) -> Run {
    run(env.synapse().env("TMPDIR", env.root()).args(args))
}

fn add(env: &TestEnv, name: &str, rest: &[&str]) {
    let mut words = vec!["mcp", "add", name];
    words.extend_from_slice(rest);
    let out = cli(env, &words);
    assert!(out.success(), "{out:?}");
}

fn wait_ready(env: &TestEnv, names: &[&str]) {
    wait_until(DEADLINE, "the servers to be ready", || {
        let list = cli(env, &["mcp", "list"]).stdout;
        names.iter().all(|n| {
            list.lines()
                .any(|l| l.split_whitespace().next() == Some(n) && l.contains("ready"))
        })
    });
}

fn exec(env: &TestEnv, line: &str) -> Run {
    cli(env, &["exec", line])
}

/// A plain bash of the user's with the wrappers on PATH (no daemon in between but the wrappers').
fn user_bash(env: &TestEnv, script: &str) -> Run {
    let path = format!(
        "{}:{}",
        env.home().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    env.apply_env(&mut cmd);
    run(cmd
        .env("PATH", path)
        .env("TMPDIR", env.root())
        .args(["-c", script]))
}

/// The one example line of a command's `--help`.
fn example_of(env: &TestEnv, command: &str) -> String {
    let help = exec(env, &format!("{command} --help"));
    assert!(help.success(), "{command} --help: {help:?}");
    help.stdout
        .split("Example")
        .nth(1)
        .and_then(|rest| rest.lines().nth(1))
        .unwrap_or_else(|| panic!("{command} --help has no example:\n{}", help.stdout))
        .trim()
        .to_string()
}

/// The commands of `server` in the order a person would try them: what creates first, what
/// deletes or moves last.
fn commands_of(env: &TestEnv, server: &str) -> Vec<String> {
    let prefix = format!("mcp:{server}:");
    let mut names: Vec<String> = std::fs::read_dir(env.home().join("bin"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    let rank = |n: &str| {
        let tool = n.rsplit(':').next().unwrap_or("");
        if tool.starts_with("create") || tool.starts_with("write") {
            0
        } else if tool.starts_with("delete") || tool.starts_with("move") {
            2
        } else {
            1
        }
    };
    names.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    names
}

/// Runs every example of `server` as shown; `allowed` names the tools whose failure is the
/// server's own (with a word its message must hold).
fn run_every_example(env: &TestEnv, server: &str, allowed: &[(&str, &str)]) -> usize {
    let commands = commands_of(env, server);
    assert!(!commands.is_empty(), "no wrappers of {server}");
    for command in &commands {
        let example = example_of(env, command);
        assert!(
            !example.contains('<') && !example.contains('>'),
            "{command}: a placeholder in the example {example:?}"
        );
        assert!(example.starts_with(command.as_str()), "{example}");
        let out = exec(env, &example);
        let text = format!("{}{}", out.stdout, out.stderr);
        assert_ne!(out.code, Some(2), "{example}: arguments refused: {text}");
        if out.success() {
            continue;
        }
        let tool = command.rsplit(':').next().unwrap();
        match allowed.iter().find(|(t, _)| *t == tool) {
            Some((_, word)) => assert!(
                text.contains(word),
                "{example} failed for another reason than {word:?}: {text}"
            ),
            None => panic!("{example} failed: {text}"),
        }
    }
    commands.len()
}

#[test]
fn every_help_example_of_everything_memory_and_filesystem_runs_as_shown() {
    let env = TestEnv::new();
    let memory_file = env.root().join("memory.jsonl");
    let fs_root = env.root().join("files");
    std::fs::create_dir_all(&fs_root).unwrap();
    let everything = npm_server("everything");
    let memory = npm_server("memory");
    let filesystem = npm_server("filesystem");
    add(&env, "everything", &["--", "node", &everything, "stdio"]);
    add(
        &env,
        "memory",
        &[
            "-e",
            &format!("MEMORY_FILE_PATH={}", memory_file.display()),
            "--",
            "node",
            &memory,
        ],
    );
    add(
        &env,
        "fs",
        &["--", "node", &filesystem, &fs_root.display().to_string()],
    );
    wait_ready(&env, &["everything", "memory", "fs"]);
    wait_until(DEADLINE, "the wrappers", || {
        env.home().join("bin/mcp:fs:write_file").exists()
            && env.home().join("bin/mcp:memory:create_entities").exists()
    });

    let ran = run_every_example(
        &env,
        "everything",
        &[
            // Its default input is a URL on GitHub: no network here is the server's business.
            ("gzip-file-as-resource", "fetch"),
            // Sampling needs a chat session's model; `synapse exec` has none and says so.
            ("trigger-sampling-request", "not asked"),
        ],
    );
    assert!(ran >= 12, "{ran} commands");
    // The entity the create example made is the one the others name.
    let ran = run_every_example(&env, "memory", &[]);
    // Its nine tools, and `resources`/`read`: it lists resources when it connects (issue 38).
    assert_eq!(ran, 11, "nine tools and the two resource commands");
    let graph = std::fs::read_to_string(&memory_file).unwrap_or_default();
    assert!(
        !graph.contains("\"name\":\"example\""),
        "deleted at the end: {graph}"
    );

    run_every_example(
        &env,
        "fs",
        // A text file is not an image or audio file.
        &[("read_media_file", "")],
    );
    // The examples worked inside the server's root: the file was written, then moved.
    assert!(fs_root.join("example-moved.txt").is_file());
    assert!(fs_root.join("example-dir").is_dir());
    assert!(!Path::new(&env.workdir()).join("<path>").exists());
}

#[test]
fn resource_commands_are_real_commands_only_for_servers_with_resources() {
    let env = TestEnv::new();
    let fs_root = env.root().join("files");
    std::fs::create_dir_all(&fs_root).unwrap();
    add(
        &env,
        "everything",
        &["--", "node", &npm_server("everything"), "stdio"],
    );
    add(
        &env,
        "fs",
        &[
            "--",
            "node",
            &npm_server("filesystem"),
            &fs_root.display().to_string(),
        ],
    );
    wait_ready(&env, &["everything", "fs"]);
    let bin = env.home().join("bin");
    wait_until(DEADLINE, "the resource wrappers", || {
        bin.join("mcp:everything:resources").exists() && bin.join("mcp:fs:write_file").exists()
    });
    // The filesystem server offers no resources: no commands, and tools search lists none.
    assert!(!bin.join("mcp:fs:resources").exists());
    assert!(!bin.join("mcp:fs:read").exists());
    let found = cli(&env, &["tools", "search", "resources"]).stdout;
    assert!(found.contains("mcp:everything:resources"), "{found}");
    assert!(!found.contains("mcp:fs:resources"), "{found}");

    // In the agent's pipeline.
    let piped = exec(&env, "mcp:everything:resources | head -n 3");
    assert!(piped.success(), "{piped:?}");
    assert_eq!(piped.stdout.lines().count(), 3, "{}", piped.stdout);
    assert!(piped.stdout.starts_with("demo://"), "{}", piped.stdout);
    // In the user's own terminal, and the read example as its help shows it.
    let mine = user_bash(&env, "mcp:everything:resources | head -n 2");
    assert!(mine.success(), "{mine:?}");
    assert_eq!(mine.stdout.lines().count(), 2, "{}", mine.stdout);
    assert!(mine.stdout.starts_with("demo://"), "{}", mine.stdout);
    let example = example_of(&env, "mcp:everything:read");
    let read = user_bash(&env, &example);
    assert!(read.success(), "{example}: {read:?}");
    assert!(read.stdout.starts_with("# "), "{}", read.stdout);
    let resources_example = example_of(&env, "mcp:everything:resources");
    let listed = exec(&env, &resources_example);
    assert!(listed.stdout.contains("demo://"), "{listed:?}");
}

#[test]
fn a_long_result_is_whole_in_the_users_pipeline_and_capped_for_the_model() {
    let env = TestEnv::new();
    add(
        &env,
        "big",
        &[
            "--",
            &venv_python().display().to_string(),
            &fixtures_dir()
                .join("big_mcp_server.py")
                .display()
                .to_string(),
        ],
    );
    add(
        &env,
        "everything",
        &["--", "node", &npm_server("everything"), "stdio"],
    );
    wait_ready(&env, &["big", "everything"]);
    wait_until(DEADLINE, "the wrappers", || {
        env.home().join("bin/mcp:big:big").exists()
    });
    // 6 MB, over the old 1 MB inline limit and gRPC's default 4 MiB message.
    let lines = "60001";
    let mine = user_bash(&env, "mcp:big:big 6 | wc -l; mcp:big:big 6 | tail -n 1");
    assert!(mine.success(), "{mine:?}");
    assert_eq!(
        mine.stdout,
        format!("{lines}\nEND OF BIG RESULT\n"),
        "{mine:?}"
    );
    let client = synapse_tests::bin("synapse").display().to_string();
    let call = user_bash(&env, &format!("'{client}' mcp call big big 6 | wc -l"));
    assert_eq!(call.stdout.trim(), "60001", "{call:?}");
    // The agent's pipeline gets the whole output too: `wc` counts it.
    let piped = exec(&env, "mcp:big:big 6 | wc -l");
    assert_eq!(piped.stdout.trim(), lines, "{piped:?}");
    // What the model receives is capped, the rest spilled.
    let model = exec(&env, "mcp:big:big 6");
    assert!(model.stdout.len() < 40_000, "{} bytes", model.stdout.len());
    assert!(model.stdout.contains("omitted"), "capped");

    // An image from the user's terminal is saved in the user's private temp folder.
    let image = user_bash(&env, "mcp:everything:get-tiny-image");
    assert!(image.success(), "{image:?}");
    let saved = image
        .stdout
        .split("saved to ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no saved image named: {}", image.stdout));
    let saved = Path::new(saved);
    let uid = std::fs::metadata(env.root()).unwrap().uid();
    let folder = env.root().join(format!("synapse-{uid}")).join("mcp");
    assert_eq!(
        saved.parent(),
        Some(folder.as_path()),
        "{}",
        saved.display()
    );
    for dir in [&folder, &folder.parent().unwrap().to_path_buf()] {
        let meta = std::fs::metadata(dir).unwrap();
        assert_eq!(
            (meta.mode() & 0o777, meta.uid()),
            (0o700, uid),
            "{}",
            dir.display()
        );
    }
    assert!(!env.root().join("mcp-result").exists());
}

#[test]
fn bash_errors_read_as_the_command_the_model_ran() {
    let env = TestEnv::new();
    env.start_daemon();
    let out = exec(
        &env,
        "nosuch_command_xyz; cd /nonexistent-folder-xyz; echo after",
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(
        text.contains("bash: line 1: nosuch_command_xyz: command not found"),
        "{text}"
    );
    assert!(
        text.contains("bash: line 1: cd: /nonexistent-folder-xyz: No such file or directory"),
        "{text}"
    );
    assert!(text.contains("after"), "{text}");
    assert!(!text.contains("/dev/fd/"), "{text}");
    let multi = exec(&env, "echo one\nnosuch_command_xyz");
    assert!(
        multi
            .stdout
            .contains("bash: line 2: nosuch_command_xyz: command not found"),
        "{multi:?}"
    );
}

#[test]
fn mcp_list_shows_the_servers_own_pid() {
    let env = TestEnv::new();
    add(
        &env,
        "everything",
        &["--", "node", &npm_server("everything"), "stdio"],
    );
    wait_ready(&env, &["everything"]);
    let list = cli(&env, &["mcp", "list"]).stdout;
    let pid = list
        .split("pid ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no pid in: {list}"));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(
        cmdline.starts_with("node ") && cmdline.contains("server-everything"),
        "pid {pid} is {cmdline:?}, not the server"
    );
}
