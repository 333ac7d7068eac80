//! Issue 39 benchmark: how much of a session's input a provider's prefix cache serves. A
//! 10-turn scripted session (each turn one command and an answer, a file edited in the repository
//! half way, so turn notes appear) through the real daemon and client, with the requests the fake
//! model received replayed through a model of Anthropic's prompt cache:
//!
//! - a request is a sequence of blocks (each tool, each system block, each message's content
//!   block, serialized without its `cache_control`); a block with `cache_control` is a
//!   breakpoint;
//! - each breakpoint writes the prefix that ends at it; a request reads the longest prefix a
//!   previous request wrote that ends at one of its breakpoints or up to 20 blocks before one;
//! - what lies between the read prefix and the last breakpoint is written, what follows the last
//!   breakpoint is uncached.
//!
//! Reported: the share of input bytes served from the cache from turn 2 on (goal ≥ 90 %), the
//! cache-weighted input per turn (read 0.1×, write 1.25×, uncached 1×) at turn 2 and turn 10 and
//! their ratio (goal: flat, ≤ 1.5× — it must not grow with the square of the turn number), and
//! the first request's size in a bare folder (goal ≤ 12 KB).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use synapse_tests::TestEnv;
use synapse_tests::fake_llm::{FakeLlm, RecordedRequest, Reply, Step};

/// How far back before a breakpoint Anthropic looks for a cached prefix, in blocks.
const LOOKBACK_BLOCKS: usize = 20;
const TURNS: usize = 10;

/// One request as the cache sees it: its blocks' sizes, each prefix's hash, its breakpoints.
struct Blocks {
    sizes: Vec<usize>,
    prefix_hashes: Vec<u64>,
    breakpoints: Vec<usize>,
}

fn blocks(body: &Value) -> Blocks {
    let mut items: Vec<Value> = Vec::new();
    items.extend(body["tools"].as_array().cloned().unwrap_or_default());
    items.extend(body["system"].as_array().cloned().unwrap_or_default());
    for m in body["messages"].as_array().cloned().unwrap_or_default() {
        for b in m["content"].as_array().cloned().unwrap_or_default() {
            items.push(serde_json::json!({"role": m["role"], "block": b}));
        }
    }
    let mut out = Blocks {
        sizes: Vec::new(),
        prefix_hashes: Vec::new(),
        breakpoints: Vec::new(),
    };
    let mut hasher = DefaultHasher::new();
    for (i, mut item) in items.into_iter().enumerate() {
        let target = if item.get("block").is_some() {
            &mut item["block"]
        } else {
            &mut item
        };
        let marked = target
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .is_some();
        let text = item.to_string();
        text.hash(&mut hasher);
        out.sizes.push(text.len());
        out.prefix_hashes.push(hasher.finish());
        if marked {
            out.breakpoints.push(i);
        }
    }
    out
}

/// Bytes read from the cache, written to it and left uncached by each request, in order.
fn replay(requests: &[RecordedRequest]) -> Vec<(usize, usize, usize)> {
    let mut cache: HashSet<u64> = HashSet::new();
    let mut out = Vec::new();
    for r in requests {
        let b = blocks(&r.body);
        let upto = |end: Option<usize>| end.map_or(0, |e| b.sizes[..=e].iter().sum::<usize>());
        let mut read_end: Option<usize> = None;
        for &bp in &b.breakpoints {
            let hit = (bp.saturating_sub(LOOKBACK_BLOCKS)..=bp)
                .rev()
                .find(|&p| cache.contains(&b.prefix_hashes[p]));
            if hit > read_end {
                read_end = hit;
            }
        }
        let last_bp = b.breakpoints.last().copied();
        let read = upto(read_end);
        let written = upto(last_bp).saturating_sub(read);
        let total: usize = b.sizes.iter().sum();
        out.push((read, written, total - read - written));
        for &bp in &b.breakpoints {
            cache.insert(b.prefix_hashes[bp]);
        }
    }
    out
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@e",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let env = TestEnv::new();
    env.start_daemon();
    let fake = rt
        .block_on(FakeLlm::start_with(|req| {
            let answered = req
                .messages()
                .last()
                .is_some_and(|m| m["content"][0]["type"] == "tool_result");
            if answered {
                Step::Reply(Reply::new().text("The notes say what they said; nothing else to do."))
            } else {
                Step::Reply(Reply::new().tool_call("cat notes.txt"))
            }
        }))
        .unwrap();
    let run = |dir: &Path, args: &[&str]| {
        let mut cmd = env.synapse_with_model(&fake);
        cmd.current_dir(dir).args(args);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };

    // The bare first request: a folder with nothing in it.
    let bare = env.workdir().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    run(&bare, &["run", "--quiet", "hello"]);
    let bare_size = fake.requests()[0].body_len;

    let project = env.workdir().join("project");
    std::fs::create_dir_all(&project).unwrap();
    git(&project, &["init", "-q"]);
    std::fs::write(project.join("notes.txt"), "Ship the release on Friday.\n").unwrap();
    git(&project, &["add", "notes.txt"]);
    git(&project, &["commit", "-q", "-m", "Add the notes"]);
    let first = fake.requests().len();
    let mut turn_starts = Vec::new();
    for turn in 1..=TURNS {
        if turn == TURNS / 2 {
            std::fs::write(project.join("notes.txt"), "Ship the release on Monday.\n").unwrap();
        }
        turn_starts.push(fake.requests().len() - first);
        let message = format!("Turn {turn}: what do the notes say now?");
        let mut args = vec!["run", "--quiet"];
        if turn > 1 {
            args.push("--continue");
        }
        args.push(&message);
        run(&project, &args);
    }
    let requests = fake.requests()[first..].to_vec();
    let costs = replay(&requests);
    turn_starts.push(costs.len());
    let turn_cost = |turn: usize| -> f64 {
        costs[turn_starts[turn - 1]..turn_starts[turn]]
            .iter()
            .map(|&(r, w, u)| 0.1 * r as f64 + 1.25 * w as f64 + u as f64)
            .sum()
    };
    let from_turn_2 = &costs[turn_starts[1]..];
    let read: usize = from_turn_2.iter().map(|c| c.0).sum();
    let total: usize = from_turn_2.iter().map(|c| c.0 + c.1 + c.2).sum();
    let share = read as f64 / total.max(1) as f64 * 100.0;
    let (second, last) = (turn_cost(2), turn_cost(TURNS));
    {
        use synapse_tests::report::value;
        value("prompt_cache.served_share", share, "%");
        value("prompt_cache.weighted_turn_2", second / 1024.0, "KB");
        value("prompt_cache.weighted_turn_10", last / 1024.0, "KB");
        value("prompt_cache.weighted_growth", last / second.max(1.0), "×");
        value(
            "prompt_cache.first_request_bare",
            bare_size as f64 / 1024.0,
            "KB",
        );
    }
    println!("| metric | goal | measured |");
    println!("| --- | --- | --- |");
    println!("| input bytes served by the prefix cache, turn 2 on | ≥ 90 % | {share:.1} % |");
    println!(
        "| cache-weighted input, turn 2 → turn {TURNS} | flat (≤ 1.5×) | {:.1} KB → {:.1} KB ({:.2}×) |",
        second / 1024.0,
        last / 1024.0,
        last / second.max(1.0)
    );
    println!(
        "| first request, bare folder | ≤ 12 KB | {:.1} KB |",
        bare_size as f64 / 1024.0
    );
}
