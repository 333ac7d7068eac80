//! Misbehaving servers (the `bad_mcp` binary): crash then reconnect, hang then timeout, garbage
//! isolated, pagination and list_changed, refresh after a config edit, and no orphan processes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support;

use std::time::Duration;

use mcp_support::*;
use serde_json::json;
use synapse_mcp::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_UNAVAILABLE, EXIT_USAGE, StateKind};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_then_reconnect_on_next_call() {
    let home = Home::new();
    let tag = unique_tag("crash");
    home.write_config(&json!({"mcpServers": {
        "bad": stdio(&bad_mcp(), &["--crash-after", "2", "--tag", &tag])
    }}));
    let m = home.manager(&[]);
    m.start();
    wait_ready(&m, "bad").await;
    let first_pid = m.list()[0].pid.unwrap();

    let o = m
        .call_argv("bad", "echo", &args(&["one"]), None, &Default::default())
        .await;
    assert_eq!((out(&o), o.exit_code), ("one\n".into(), EXIT_OK));
    // The second call kills the server mid-call: unavailable, with the reason.
    let o = m
        .call_argv("bad", "echo", &args(&["two"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_UNAVAILABLE, "{}", err(&o));
    assert!(
        err(&o).contains("MCP server bad is unavailable"),
        "{}",
        err(&o)
    );
    wait_until(
        Duration::from_secs(10),
        "bad marked failed with a reason",
        // The reason depends on who noticed first: the failed call or the exit watcher.
        || matches!(state_of(&m, "bad"), Some((StateKind::Failed, r)) if !r.is_empty()),
    )
    .await;
    // The next call reconnects to a fresh process.
    let o = m
        .call_argv("bad", "echo", &args(&["three"]), None, &Default::default())
        .await;
    assert_eq!(
        (out(&o), o.exit_code),
        ("three\n".into(), EXIT_OK),
        "{}",
        err(&o)
    );
    let status = m.list();
    assert_eq!(status[0].state, StateKind::Ready);
    assert_ne!(status[0].pid.unwrap(), first_pid);
    m.shutdown().await;
    assert!(processes_with(&tag).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_call_times_out_and_keeps_the_server() {
    let home = Home::new();
    let tag = unique_tag("hang");
    let mut entry = stdio(&bad_mcp(), &["--hang-calls", "--tag", &tag]);
    entry["toolTimeoutSec"] = json!(0.5);
    home.write_config(&json!({"mcpServers": {"hang": entry}}));
    let m = home.manager(&[]);
    m.start();
    wait_ready(&m, "hang").await;
    let pid = m.list()[0].pid;
    let o = m
        .call_argv("hang", "echo", &args(&["x"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_TOOL_ERROR);
    assert!(err(&o).contains("call timeout of 0.5 s"), "{}", err(&o));
    // A slow answer is not a dead server: it stays connected (same process), and -h still
    // answers from the cached schema.
    let (state, _) = state_of(&m, "hang").unwrap();
    assert_eq!(state, StateKind::Ready);
    assert_eq!(m.list()[0].pid, pid);
    assert_eq!(processes_with(&tag).len(), 1);
    let o = m
        .call_argv("hang", "echo", &args(&["-h"]), None, &Default::default())
        .await;
    assert_eq!(
        out(&o),
        "Usage: mcp:hang:echo <text>\nEcho the text back.\n  --text <string> (required)\n"
    );
    m.shutdown().await;
    assert!(processes_with(&tag).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_silent_servers_are_isolated() {
    let home = Home::new();
    let mut garbage = stdio(&bad_mcp(), &["--garbage"]);
    garbage["startupTimeoutSec"] = json!(1);
    let mut silent = stdio(&bad_mcp(), &["--hang-start"]);
    silent["startupTimeoutSec"] = json!(1);
    home.write_config(&json!({"mcpServers": {
        "garbage": garbage,
        "silent": silent,
        "noisy": stdio(&bad_mcp(), &["--noise"]),
        "missing": {"command": "/nonexistent/server-binary"},
        "good": stdio(&bad_mcp(), &[]),
    }}));
    let m = home.manager(&[]);
    let summary = m.refresh().await;
    let failed: Vec<&str> = summary.failed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(failed, vec!["garbage", "missing", "silent"], "{summary:?}");
    let reason = |n: &str| {
        summary
            .failed
            .iter()
            .find(|(s, _)| s == n)
            .unwrap()
            .1
            .clone()
    };
    assert!(
        reason("garbage").contains("start-up timeout"),
        "{}",
        reason("garbage")
    );
    assert!(
        reason("missing").contains("cannot start"),
        "{}",
        reason("missing")
    );
    for ok in ["good", "noisy"] {
        let o = m
            .call_argv(ok, "echo", &args(&["hi"]), None, &Default::default())
            .await;
        assert_eq!(
            (out(&o), o.exit_code),
            ("hi\n".into(), EXIT_OK),
            "{ok}: {}",
            err(&o)
        );
    }
    // A call to a failed server answers at once with exit 3 and the reason (backoff running).
    let o = m
        .call_argv("garbage", "echo", &args(&["x"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_UNAVAILABLE, "{}", err(&o));
    assert_eq!(
        home.wrappers()
            .iter()
            .filter(|w| w.starts_with("mcp:good:"))
            .count(),
        3
    );
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paginated_tools_and_list_changed_update_wrappers() {
    let home = Home::new();
    home.write_config(&json!({"mcpServers": {
        "paged": stdio(&bad_mcp(), &["--page-size", "2", "--extra-tools", "7"])
    }}));
    let m = home.manager(&[]);
    m.refresh().await;
    assert_eq!(m.list()[0].tool_count, 10);
    assert_eq!(home.wrappers().len(), 10);
    let o = m
        .call_argv(
            "paged",
            "grow",
            &args(&["fresh_tool"]),
            None,
            &Default::default(),
        )
        .await;
    assert_eq!(out(&o), "added fresh_tool\n");
    wait_until(
        Duration::from_secs(10),
        "wrapper for the grown tool",
        || home.bin().join("mcp:paged:fresh_tool").exists(),
    )
    .await;
    assert!(
        m.catalog_entries()
            .iter()
            .any(|e| e.command == "mcp:paged:fresh_tool")
    );
    let o = m
        .call_command("mcp:paged:fresh_tool", &[], None, &Default::default())
        .await
        .unwrap();
    assert_eq!(out(&o), "fresh_tool ran\n");
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_after_config_edit_adds_and_removes_wrappers() {
    let home = Home::new();
    home.write_config(&json!({"mcpServers": {"a": stdio(&bad_mcp(), &[])}}));
    let m = home.manager(&[]);
    let s = m.refresh().await;
    assert_eq!(s.added, vec!["a"]);
    assert_eq!(
        home.wrappers(),
        vec!["mcp:a:echo", "mcp:a:grow", "mcp:a:sleep_ms"]
    );

    let mut b = stdio(&bad_mcp(), &["--extra-tools", "1"]);
    b["disabledTools"] = json!(["grow", "sleep*"]);
    home.write_config(&json!({"mcpServers": {"b": b}}));
    let s = m.refresh().await;
    assert_eq!(
        (s.added.clone(), s.removed.clone()),
        (vec!["b".to_string()], vec!["a".to_string()])
    );
    assert_eq!(home.wrappers(), vec!["mcp:b:echo", "mcp:b:tool_0"]);
    assert_eq!(
        s.wrappers.removed,
        vec!["mcp:a:echo", "mcp:a:grow", "mcp:a:sleep_ms"]
    );
    let o = m
        .call_argv("b", "grow", &args(&["x"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);
    assert!(err(&o).contains("not exposed"), "{}", err(&o));
    let o = m
        .call_argv("a", "echo", &args(&["x"]), None, &Default::default())
        .await;
    assert_eq!(o.exit_code, EXIT_USAGE);

    // Unchanged config: nothing reconnects, nothing is rewritten.
    let pid = m.list()[0].pid;
    let s = m.refresh().await;
    assert_eq!(s.unchanged, vec!["b"]);
    assert!(
        s.wrappers.written.is_empty() && s.wrappers.removed.is_empty(),
        "{s:?}"
    );
    assert_eq!(m.list()[0].pid, pid);
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_restart_cycles_leave_no_orphans() {
    let home = Home::new();
    let tag = unique_tag("cycles");
    home.write_config(&json!({"mcpServers": {
        "s1": stdio(&bad_mcp(), &["--spawn-child", "--tag", &tag]),
        "s2": stdio(&bad_mcp(), &["--tag", &tag]),
    }}));
    for cycle in 0..100 {
        let m = home.manager(&[]);
        let s = m.refresh().await;
        assert!(s.failed.is_empty(), "cycle {cycle}: {s:?}");
        if cycle % 10 == 0 {
            let o = m
                .call_argv("s1", "echo", &args(&["x"]), None, &Default::default())
                .await;
            assert_eq!(o.exit_code, EXIT_OK);
        }
        m.shutdown().await;
    }
    // Killed processes take a moment to disappear under load: wait for it, with a deadline.
    // The grandchild `sleep` does not carry the tag; count it by its parent group being gone.
    synapse_tests::wait_until(synapse_tests::DEADLINE, "no orphaned MCP server", || {
        processes_with(&tag).is_empty()
    });
    synapse_tests::wait_until(synapse_tests::DEADLINE, "no orphaned grandchild", || {
        processes_with("sleep 300")
            .iter()
            .all(|pid| !carries_tag(*pid, &tag))
    });
}

/// Whether `pid` is a `sleep` grandchild of this test's servers (it carries their tag in its
/// environment; a `sleep 300` of anyone else on the machine does not).
fn carries_tag(pid: u32, tag: &str) -> bool {
    let needle = format!("BAD_MCP_TAG={tag}");
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
}
