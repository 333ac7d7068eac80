//! Issue 28, the agent commands as the model is told about them, through the real daemon: every
//! example of the system prompt and of each agent command's `-h`/`--help` runs (collected from
//! what the daemon shows, so a new command's examples are run too), `task:skill:search` takes its
//! query positionally, `bash --timeout` composes, a silent command reads `(no output, exit 0)`,
//! `job wait` waits, and a refusal's `--allow '…'` is valid shell.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use std::sync::Mutex;
use synapse_daemon::shell::examples::examples_in;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Reply, Script, Step};

const MAIN_ROLE: &str = "You are Synapse, a general-purpose agent";

/// The scripted model, with the runtime its server runs on (kept for the whole test).
fn fake(script: Script) -> (tokio::runtime::Runtime, FakeLlm) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(FakeLlm::start(script)).unwrap();
    (rt, fake)
}

/// The files the examples work on.
fn fixtures(env: &TestEnv) {
    let work = env.workdir();
    let write = |rel: &str, text: &str| {
        let path = work.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "src/main.rs",
        "fn main() {\n    // TODO: greet\n    println!(\"hi\");\n}\n",
    );
    write("src/lib.rs", "pub fn old_name() {}\n");
    write("src/mod.rs", "// FIXME\n");
    let log: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    write("logs/app.log", &log);
    write("notes.md", "first line\n- [ ] ship\n- [ ] ship\n");
    write("docs/guide.md", "# Guide\n");
    write("Makefile", "test:\n\t@echo all tests passed\n");
    env.write_skill(
        "csv-charts",
        "Turns a csv file into a chart. Use when the user wants a chart of a csv file.",
        "# CSV charts\n\nRun the script.\n",
    );
}

/// The agent command names the system prompt documents: `### name` sections and the
/// `- \`name\`:` lines of "More commands".
fn command_names(system: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in system.lines() {
        if let Some(name) = line.strip_prefix("### ") {
            if !name.contains(' ') {
                names.push(name.to_string());
            }
        } else if let Some(rest) = line.strip_prefix("- `")
            && let Some((name, _)) = rest.split_once("`:")
            && !name.contains(' ')
        {
            names.push(name.to_string());
        }
    }
    names
}

/// A request of the main agent in the run that executes the examples.
fn running(request: &synapse_tests::fake_llm::RecordedRequest) -> bool {
    request
        .system_text()
        .is_some_and(|s| s.starts_with(MAIN_ROLE))
        && request
            .messages()
            .first()
            .is_some_and(|m| m.to_string().contains("Run the examples."))
}

#[test]
fn every_example_of_the_prompt_and_of_each_commands_help_runs() {
    let env = TestEnv::new();
    fixtures(&env);
    let examples: Arc<Mutex<Vec<String>>> = Arc::default();
    let main_calls = Arc::new(AtomicUsize::new(0));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = {
        let examples = examples.clone();
        let main_calls = main_calls.clone();
        rt.block_on(FakeLlm::start_with(move |request| {
            let main = request
                .system_text()
                .is_some_and(|s| s.starts_with(MAIN_ROLE));
            if !main {
                // Sub-agents (task:*, the skill searcher) answer at once.
                return Step::Reply(Reply::new().text("Nothing more to report."));
            }
            let list = examples.lock().unwrap();
            // The first run only shows the prompt; in the second, each request runs the next.
            let k = if running(request) {
                request.commands_so_far().len()
            } else {
                usize::MAX
            };
            main_calls.fetch_add(1, Ordering::SeqCst);
            match list.get(k) {
                Some(example) => Step::Reply(Reply::new().tool_call(example.clone())),
                None => Step::Reply(Reply::new().text("done")),
            }
        }))
        .unwrap()
    };

    // First the prompt as the model receives it, with no example to run yet.
    let out = env.cli_with_model(&fake, &["run", "What can you do?"]);
    assert!(out.success(), "{out:?}");
    let system = fake.requests()[0].system_text().unwrap();
    let names = command_names(&system);
    for expected in ["read", "write", "bash", "job", "skill", "task:skill:search"] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    let is_command = |w: &str| names.iter().any(|n| n == w);
    let mut all = examples_in(&system, is_command);
    for name in &names {
        for flag in ["-h", "--help"] {
            let help = env.cli(&["exec", &format!("{name} {flag}")]);
            assert!(help.success(), "{name} {flag}: {help:?}");
            for e in examples_in(&help.stdout, is_command) {
                if !all.contains(&e) {
                    all.push(e);
                }
            }
        }
    }
    for needle in [
        "read src/main.rs",
        "write src/app.py <<'EOF'",
        "job wait 1 --timeout 30",
        "task:skill:search \"turn a csv file into a chart\"",
        "bash --timeout 300",
    ] {
        assert!(
            all.iter().any(|e| e.starts_with(needle)),
            "{needle} not collected: {all:#?}"
        );
    }
    *examples.lock().unwrap() = all.clone();

    // Then every example, in order, in one session (the jobs an example starts are the ones
    // the next examples read, wait for and kill).
    let before = fake.requests().len();
    let out = env.cli_with_model(&fake, &["run", "--yes", "Run the examples."]);
    assert!(out.success(), "{out:?}");
    let mains: Vec<_> = fake.requests()[before..]
        .iter()
        .filter(|r| running(r))
        .cloned()
        .collect();
    assert!(main_calls.load(Ordering::SeqCst) > all.len());
    let mut failed = Vec::new();
    for (i, example) in all.iter().enumerate() {
        let request = mains
            .iter()
            .find(|r| r.commands_so_far().len() == i + 1)
            .unwrap_or_else(|| panic!("{example} never ran"));
        assert_eq!(request.commands_so_far().last(), Some(example));
        let result = request.last_tool_result().unwrap_or_default();
        let name = example.split_whitespace().next().unwrap();
        // Without a network or a search key the web commands fail cleanly, not on their words.
        let web = name.starts_with("web_");
        let clean = if web {
            !result.contains("[exit code: 2]") && !result.contains("usage:")
        } else {
            !result.contains("[exit code:")
        };
        if !clean {
            failed.push(format!("{example}\n=> {result}"));
        }
    }
    assert!(
        failed.is_empty(),
        "examples that fail:\n{}",
        failed.join("\n\n")
    );
}

#[test]
fn task_skill_search_takes_the_query_positionally_and_as_prompt() {
    let env = TestEnv::new();
    fixtures(&env);
    for line in [
        "task:skill:search \"chart of a csv file\"",
        "task:skill:search --prompt \"chart of a csv file\" --description charts",
    ] {
        let out = env.cli(&["exec", line]);
        assert!(out.success(), "{line}: {out:?}");
        assert!(!out.stdout.contains("missing --prompt"), "{out:?}");
    }
}

#[test]
fn bash_timeout_composes_in_a_pipe_and_a_silent_command_says_so() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("bash --timeout 5 'echo hi' | cat")
            .tool_call("x=$(bash --timeout 5 'echo inner'); echo \"got $x\"")
            .tool_call("true")
            .tool_call("false")
            .text("done"),
    );
    let out = env.cli_with_model(&fake, &["run", "--yes", "go"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    assert_eq!(requests[1].last_tool_result().unwrap(), "hi\n");
    assert_eq!(requests[2].last_tool_result().unwrap(), "got inner\n");
    assert_eq!(
        requests[3].last_tool_result().unwrap(),
        "(no output, exit 0)"
    );
    assert_eq!(requests[4].last_tool_result().unwrap(), "[exit code: 1]");
}

#[test]
fn job_wait_waits_for_the_job_and_reports_its_status() {
    let env = TestEnv::new();
    let (_rt, fake) = fake(
        Script::new()
            .tool_call("job start 'sleep 1; echo built; exit 3'")
            .tool_call("job wait 1 --timeout 20")
            .tool_call("job start 'sleep 30'")
            .tool_call("job wait 2 --timeout 1")
            .tool_call("job kill 2")
            .text("done"),
    );
    let out = env.cli_with_model(&fake, &["run", "--yes", "go"]);
    assert!(out.success(), "{out:?}");
    let requests = fake.requests();
    let waited = requests[2].last_tool_result().unwrap();
    assert!(
        waited.contains("built") && waited.contains("exited with status 3"),
        "{waited}"
    );
    assert!(waited.ends_with("[exit code: 3]"), "{waited}");
    let running = requests[4].last_tool_result().unwrap();
    assert!(
        running.contains("still runs") && running.contains("[exit code: 124]"),
        "{running}"
    );
}

#[test]
fn a_refusals_suggested_allow_is_valid_shell_for_a_command_with_quotes() {
    let env = TestEnv::new();
    let command = "rm -rf \"$HOME/my dir\"";
    let (_rt, fake) = fake(Script::new().tool_call(command).text("done"));
    let out = env.cli_with_model(&fake, &["run", "--permission-mode", "ask", "clean up"]);
    let result = fake.requests()[1].last_tool_result().unwrap();
    let text = format!("{result}\n{}", out.stderr);
    let at = text
        .find("--allow ")
        .unwrap_or_else(|| panic!("no --allow suggested: {text}"));
    let rest = &text[at..];
    let end = rest.find(" or --yes").unwrap_or(rest.len());
    let suggested = &rest[..end];
    let check = std::process::Command::new("bash")
        .args(["-n", "-c", &format!("synapse run x {suggested}")])
        .output()
        .unwrap();
    assert!(check.status.success(), "{suggested}: {check:?}");
    let pattern = std::process::Command::new("bash")
        .args([
            "-c",
            &format!("set -- {suggested}; printf '%s|%s' \"$#\" \"$2\""),
        ])
        .output()
        .unwrap();
    let pattern = String::from_utf8_lossy(&pattern.stdout);
    assert!(
        pattern.starts_with("2|") && pattern.contains("'$HOME/my dir'"),
        "{suggested} => {pattern}"
    );
}
