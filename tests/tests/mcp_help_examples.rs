//! Issue 38, MCP `--help` examples that run, through the real daemon and real servers (npm
//! `server-everything`, `server-filesystem`, `server-memory`, the Python fixtures `py_server.py`
//! and `big_mcp_server.py`): every example every command's `--help` prints is run as shown and
//! counted: run as printed means exit status 0, and at least 89 % must (the rest fail for what
//! the tool is, e.g. one that always fails or asks a sampling model); none may be refused for its
//! arguments (a usage error, or the server's schema validation). And `mcp:<server>:resources`/`read` exist only for a server
//! that lists resources: the Python SDK's servers declare the capability and list none.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::{fixtures_dir, venv_python};
use synapse_tests::{DEADLINE, Run, TestEnv, run, wait_until};

/// The share of examples that must run, in percent (the goal: 110 of 124).
const EXAMPLES_RUN_MIN_PERCENT: usize = 89;

fn npm_server(name: &str) -> String {
    fixtures_dir()
        .join(format!(
            "node_modules/@modelcontextprotocol/server-{name}/dist/index.js"
        ))
        .display()
        .to_string()
}

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

/// Every example line of a command's `--help` (the lines under `Example…:` that start with
/// the command).
fn examples_of(env: &TestEnv, command: &str) -> Vec<String> {
    let help = cli(env, &["exec", &format!("{command} --help")]);
    assert!(help.success(), "{command} --help: {help:?}");
    let mut out = Vec::new();
    let mut under = false;
    for line in help.stdout.lines() {
        if line.starts_with("Example") {
            under = true;
            continue;
        }
        let trimmed = line.trim();
        if under && trimmed.starts_with(command) {
            out.push(trimmed.to_string());
        } else if !line.starts_with(' ') {
            under = false;
        }
    }
    out
}

/// Whether a run was refused for its arguments: our usage error (exit 2) or the server's
/// validation of them against its schema.
fn refused_for_arguments(out: &Run) -> bool {
    let text = format!("{}{}", out.stdout, out.stderr).to_lowercase();
    out.code == Some(2)
        || text.contains("-32602")
        || text.contains("invalid arguments")
        || text.contains("input validation")
        || text.contains("validation error")
        || text.contains("invalid_type")
        || text.contains("invalid params")
}

#[test]
fn help_examples_of_the_fixture_servers_run_and_resources_only_where_listed() {
    let env = TestEnv::new();
    let memory_file = env.root().join("memory.jsonl");
    let fs_root = env.root().join("files");
    std::fs::create_dir_all(&fs_root).unwrap();
    let python = venv_python().display().to_string();
    add(
        &env,
        "everything",
        &["--", "node", &npm_server("everything"), "stdio"],
    );
    add(
        &env,
        "memory",
        &[
            "-e",
            &format!("MEMORY_FILE_PATH={}", memory_file.display()),
            "--",
            "node",
            &npm_server("memory"),
        ],
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
    let py = fixtures_dir().join("py_server.py").display().to_string();
    add(&env, "py", &["--", &python, &py, "stdio"]);
    let big = fixtures_dir()
        .join("big_mcp_server.py")
        .display()
        .to_string();
    add(&env, "big", &["--", &python, &big]);
    let servers = ["everything", "memory", "fs", "py", "big"];
    wait_ready(&env, &servers);
    let bin = env.home().join("bin");
    wait_until(DEADLINE, "the wrappers", || {
        bin.join("mcp:fs:write_file").exists()
            && bin.join("mcp:memory:create_entities").exists()
            && bin.join("mcp:py:echo").exists()
            && bin.join("mcp:big:big").exists()
            && bin.join("mcp:everything:resources").exists()
    });

    // Resources: only servers that list some have the commands. The Python SDK's servers
    // declare the capability and list none; the filesystem server does not declare it.
    for quiet in ["py", "big", "fs"] {
        assert!(
            !bin.join(format!("mcp:{quiet}:resources")).exists(),
            "{quiet} lists no resources"
        );
        assert!(!bin.join(format!("mcp:{quiet}:read")).exists(), "{quiet}");
    }
    let found = cli(&env, &["tools", "search", "resources"]).stdout;
    assert!(!found.contains("mcp:py:resources"), "{found}");

    let mut names: Vec<String> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| servers.iter().any(|s| n.starts_with(&format!("mcp:{s}:"))))
        .collect();
    // What creates first, what deletes or moves last, as a person would try them.
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
    let mut total = 0;
    let mut ran = 0;
    let mut refused = Vec::new();
    let mut report = String::new();
    for command in &names {
        for example in examples_of(&env, command) {
            total += 1;
            assert!(
                !example.contains('<') && !example.contains('>'),
                "{command}: a placeholder in {example:?}"
            );
            let out = cli(&env, &["exec", &example]);
            let verdict = if refused_for_arguments(&out) {
                refused.push(format!("{example}: {}{}", out.stdout, out.stderr));
                "REFUSED"
            } else if out.success() {
                ran += 1;
                "ran"
            } else {
                "failed"
            };
            report.push_str(&format!("{verdict:8} {:?} {example}\n", out.code));
        }
    }
    eprintln!("{report}{ran} of {total} examples ran as printed");
    assert!(
        total >= names.len(),
        "{total} examples for {} commands",
        names.len()
    );
    assert!(
        refused.is_empty(),
        "refused for their arguments:\n{}",
        refused.join("\n")
    );
    assert!(
        ran * 100 >= total * EXAMPLES_RUN_MIN_PERCENT,
        "{ran} of {total} examples ran as printed:\n{report}"
    );
}
