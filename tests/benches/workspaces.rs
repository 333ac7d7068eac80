//! Issue 15 benchmarks: the settings freshness check that runs before every turn and command
//! (goal ≤ 20 µs; criterion, in process), and the daemon's open fds and RSS before and after 500
//! finished `synapse run` sessions (goal: within 10% of the baseline; whole processes against
//! the fake model); and how often the idle daemon wakes up, fresh and after the runs (no goal:
//! a daemon left running for months should sleep). Needs release binaries: `cargo build
//! --release --bins` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use criterion::{Criterion, criterion_group, criterion_main};
use synapse_daemon::workspace::SettingsHandle;
use synapse_tests::fake_llm::{FakeLlm, Reply, Step};
use synapse_tests::report::{size, value};
use synapse_tests::{DEADLINE, TestEnv, wait_until};

fn settings_check(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"model": "m", "skillEnhance": {"autoEnhance": false}}"#,
    )
    .unwrap();
    let handle = SettingsHandle::open(path);
    c.bench_function("settings_freshness_check", |b| {
        b.iter(|| handle.current().skill_enhance.auto_enhance)
    });
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Context switches so far of each thread of `pid`, by thread id (each switch is one wakeup).
fn switches(pid: u32) -> std::collections::HashMap<String, u64> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Default::default();
    };
    tasks
        .flatten()
        .filter_map(|t| {
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            let n = status
                .lines()
                .filter(|l| l.contains("ctxt_switches:"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            Some((t.file_name().to_string_lossy().into_owned(), n))
        })
        .collect()
}

/// How often the idle daemon wakes up (per second, over a quiet window). Threads that come
/// (a blocking-pool thread) count from zero; threads that go count up to their last look.
fn idle_wakeups(pid: u32) -> f64 {
    let window = std::time::Duration::from_millis(size(5000, 500) as u64);
    let before = switches(pid);
    std::thread::sleep(window);
    let woke: u64 = switches(pid)
        .iter()
        .map(|(tid, n)| n.saturating_sub(before.get(tid).copied().unwrap_or(0)))
        .sum();
    woke as f64 / window.as_secs_f64()
}

/// 500 runs, each running one command in its shell; the daemon's fds and RSS before and after.
fn sessions_leave_nothing() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let env = TestEnv::new();
        let fake = FakeLlm::start_with(|r| {
            if r.last_tool_result().is_some() {
                Step::Reply(Reply::new().text("done"))
            } else {
                Step::Reply(Reply::new().tool_call("echo ran"))
            }
        })
        .await
        .unwrap();
        let run = |prompt: String| {
            let mut cmd = env.synapse_with_model(&fake);
            cmd.args(["run", &prompt])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            tokio::process::Command::from(cmd).status()
        };
        let pid = env.start_daemon();
        // A fresh daemon that nobody uses: how often does it wake up?
        let fresh = idle_wakeups(pid);
        assert!(run("warm up".into()).await.unwrap().success());
        let (fds_before, rss_before) = (fds(pid), rss_kb(pid));
        let runs = size(500, 20);
        for i in 0..runs {
            assert!(run(format!("task {i}")).await.unwrap().success());
        }
        // Released sessions close asynchronously: wait for the count to settle.
        wait_until(DEADLINE, "fds back near the baseline", || {
            fds(pid) <= fds_before + fds_before / 10
        });
        let (fds_after, rss_after) = (fds(pid), rss_kb(pid));
        // After the runs, their project's workspace still up (its idle period not over).
        let after = idle_wakeups(pid);
        value("workspaces.idle_wakeups_fresh", fresh, "/s");
        value("workspaces.idle_wakeups_after", after, "/s");
        println!("idle daemon wakeups: {fresh:.1}/s fresh, {after:.1}/s after the runs");
        value("workspaces.fds_before", fds_before as f64, "fds");
        value("workspaces.fds_after", fds_after as f64, "fds");
        value("workspaces.rss_before", rss_before as f64 / 1024.0, "MB");
        value("workspaces.rss_after", rss_after as f64 / 1024.0, "MB");
        println!(
            "{runs} runs: daemon fds {fds_before} → {fds_after}, RSS {:.1} → {:.1} MB",
            rss_before as f64 / 1024.0,
            rss_after as f64 / 1024.0
        );
    });
}

fn benches(c: &mut Criterion) {
    settings_check(c);
    sessions_leave_nothing();
}

criterion_group!(workspaces, benches);
criterion_main!(workspaces);
