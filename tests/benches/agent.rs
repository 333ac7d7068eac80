//! Issue 6 benchmarks, whole processes against a warm daemon and the fake LLM answering at once:
//! `synapse run` two-turn task (`cat` a file, then answer; goal ≤ 12 ms median), tool overhead from
//! the tool_use response to the next request with the session's shell running (goal ≤ 3 ms; and
//! ≤ 2 ms for a new session's first call, which takes over the workspace's pre-started spare
//! shell instead of waiting for its own to start (issue 39); also with a no-op
//! PreToolUse + PostToolUse hook: one process start per event), spawn to first request (goal ≤ 15 ms),
//! first request size (goal ≤ 10 KB; ≤ 12.5 KB with a 2 KB `AGENTS.md`), peak RSS of client and
//! daemon (goal ≤ 30 MB each).
//! Needs release binaries: `cargo build --release --bins` first. Prints one table.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, Reply, Step};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn max_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// An `AGENTS.md` of 2,048 bytes, as a project would write one: build, test and style rules.
fn two_kb_of_instructions() -> String {
    let mut text = String::from("# Project notes for agents\n\n");
    let rules = [
        "- Build with `make build`; the release build is `make release`.",
        "- Run the tests with `make test` before every commit; they must pass.",
        "- Format with `make fmt`; CI rejects unformatted code.",
        "- Keep functions short and name them after what they do.",
        "- Never commit secrets; configuration lives in `config/local.toml`.",
    ];
    let mut i = 0;
    while text.len() < 2048 {
        text.push_str(rules[i % rules.len()]);
        text.push('\n');
        i += 1;
    }
    text.truncate(2048);
    text
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let env = TestEnv::new();
    let daemon_pid = env.start_daemon();
    std::fs::write(env.workdir().join("notes.txt"), "hello from the bench\n").unwrap();
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = arrivals.clone();
    let fake = rt
        .block_on(FakeLlm::start_with(move |req| {
            seen.lock().unwrap().push(Instant::now());
            // "twice": two tool calls, the second finding the session's shell running.
            let calls = if req.messages()[0].to_string().contains("twice") {
                2
            } else {
                1
            };
            if req.commands_so_far().len() >= calls {
                Step::Reply(Reply::new().text("The file says hello."))
            } else {
                Step::Reply(Reply::new().tool_call("cat notes.txt"))
            }
        }))
        .unwrap();

    // One `synapse run` of `prompt`: when it started, how long it took, and when each model
    // request arrived.
    let run_task = |prompt: &str| -> (Instant, Duration, Vec<Instant>) {
        arrivals.lock().unwrap().clear();
        let mut cmd = env.synapse();
        cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "bench")
            .args(["run", "--quiet", prompt]);
        let start = Instant::now();
        let out = cmd.output().unwrap();
        let took = start.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (start, took, arrivals.lock().unwrap().clone())
    };
    let runs = synapse_tests::report::size(40, 4);
    let mut totals = Vec::new();
    let mut first_request = Vec::new();
    let mut tool_overhead = Vec::new();
    for _ in 0..runs {
        let (start, took, times) = run_task("what does notes.txt say?");
        totals.push(took);
        first_request.push(times[0] - start);
        tool_overhead.push(times[1] - times[0]);
    }
    let request_size = fake.requests()[0].body_len;
    // The same with the session's shell already running: what each later tool call costs. The
    // first call above runs in the workspace's spare shell, started while the previous run
    // ended (only the very first run starts its own).
    let mut warm_tool_overhead = Vec::new();
    for _ in 0..runs {
        let (_, _, times) = run_task("read notes.txt twice");
        warm_tool_overhead.push(times[2] - times[1]);
    }
    // The same first request with a 2 KB AGENTS.md in the project (issue 28: ≤ 12.5 KB).
    let agents_md = env.workdir().join("AGENTS.md");
    std::fs::write(&agents_md, two_kb_of_instructions()).unwrap();
    let before = fake.requests().len();
    run_task("what does notes.txt say?");
    let request_size_agents_md = fake.requests()[before].body_len;
    std::fs::remove_file(&agents_md).unwrap();
    // The warm tool call again with a no-op PreToolUse and PostToolUse hook (issue 30): what a
    // hook costs is about one process start per event.
    let claude_settings = env.user_home().join(".claude").join("settings.json");
    std::fs::create_dir_all(claude_settings.parent().unwrap()).unwrap();
    let noop =
        serde_json::json!([{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]);
    std::fs::write(
        &claude_settings,
        serde_json::json!({"hooks": {"PreToolUse": noop, "PostToolUse": noop}}).to_string(),
    )
    .unwrap();
    let mut hooked_tool_overhead = Vec::new();
    for _ in 0..runs {
        let (_, _, times) = run_task("read notes.txt twice");
        hooked_tool_overhead.push(times[2] - times[1]);
    }
    std::fs::remove_file(&claude_settings).unwrap();
    let client_rss = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map(|u| u.max_rss())
        .unwrap_or(0);

    {
        use synapse_tests::report::{samples, value};
        samples("agent.run_two_turn", &totals);
        samples("agent.tool_overhead", &tool_overhead);
        samples("agent.tool_overhead_warm_shell", &warm_tool_overhead);
        samples("agent.tool_overhead_noop_hooks", &hooked_tool_overhead);
        samples("agent.first_request", &first_request);
        value(
            "agent.first_request_size",
            request_size as f64 / 1024.0,
            "KB",
        );
        value(
            "agent.first_request_size_agents_md",
            request_size_agents_md as f64 / 1024.0,
            "KB",
        );
        value("agent.client_rss", client_rss as f64 / 1024.0, "MB");
        value(
            "agent.daemon_rss",
            max_rss_kb(daemon_pid) as f64 / 1024.0,
            "MB",
        );
    }
    println!("| metric | goal | measured |");
    println!("| --- | --- | --- |");
    println!(
        "| `synapse run` two-turn task, median of {runs} | ≤ 12 ms | {} |",
        ms(median(totals))
    );
    println!(
        "| tool_use response → next request (incl. `cat`), shell running | ≤ 3 ms | {} |",
        ms(median(warm_tool_overhead))
    );
    println!(
        "| the same for a new session's first call (spare shell handed over) | ≤ 2 ms | {} |",
        ms(median(tool_overhead))
    );
    println!(
        "| the same, shell running, with a no-op PreToolUse + PostToolUse hook | — | {} |",
        ms(median(hooked_tool_overhead))
    );
    println!(
        "| process spawn → first model request | ≤ 15 ms | {} |",
        ms(median(first_request))
    );
    println!(
        "| first request size | ≤ 10 KB | {:.1} KB |",
        request_size as f64 / 1024.0
    );
    println!(
        "| first request size with a 2 KB AGENTS.md | ≤ 12.5 KB | {:.1} KB |",
        request_size_agents_md as f64 / 1024.0
    );
    println!(
        "| peak RSS, client | ≤ 30 MB | {:.1} MB |",
        client_rss as f64 / 1024.0
    );
    println!(
        "| peak RSS, daemon | ≤ 30 MB | {:.1} MB |",
        max_rss_kb(daemon_pid) as f64 / 1024.0
    );
}
