//! Issue 8 benchmarks, in-process:
//! - the stop hook's price on a completed turn while `skillEnhance.autoEnhance` is false
//!   (goal ≈ 0: one in-memory bool, no settings file, no session log), against no hook at all
//!   (criterion, `stop_hook/*`);
//! - the skill-search request to the sub-agent with 10,000 skills, BM25-prefiltered to the top
//!   candidates, against sending all skills' metadata (goal ≤ 20 KB, ratio reported), and the
//!   time the prefilter takes (a table after the criterion groups). Deterministic skills.
//!
//! Run: `cargo bench -p synapse-tests --bench growth`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use criterion::Criterion;
use futures::FutureExt;
use std::hint::black_box;
use synapse_daemon::agent::stop_hook::{StopHook, after_completed_turn};
use synapse_daemon::agent::subagent_context::SubAgentContexts;
use synapse_daemon::growth::enhance::EnhanceHook;
use synapse_daemon::growth::versions::Versions;
use synapse_daemon::growth::{SkillAgent, prompt, rank, search::PREFILTER_LIMIT};
use synapse_daemon::skills::{
    RootConfig, SkillPermission, SkillSource, SkillStore, SkillSummary, StorePaths,
};
use synapse_shared::settings::Settings;
use tokio_util::sync::CancellationToken;

const SKILLS: usize = 10_000;
const TOPICS: &[&str] = &[
    "pdf",
    "logs",
    "csv",
    "docker",
    "git",
    "images",
    "email",
    "invoices",
    "sql",
    "kubernetes",
    "markdown",
    "audio",
    "video",
    "excel",
    "json",
    "yaml",
    "terraform",
    "backup",
    "metrics",
    "dns",
];
const VERBS: &[&str] = &[
    "convert",
    "analyze",
    "summarize",
    "validate",
    "merge",
    "clean",
    "export",
];

fn skill(i: usize) -> SkillSummary {
    let topic = TOPICS[i % TOPICS.len()];
    let verb = VERBS[(i / TOPICS.len()) % VERBS.len()];
    let name = format!("{verb}-{topic}-{i}");
    SkillSummary {
        id: format!("user:{name}"),
        description: format!(
            "{verb} {topic} files: step-by-step procedure with scripts. Use when asked to {verb} {topic} data (variant {i})."
        ),
        name,
        source: SkillSource::User,
        dir: PathBuf::from("/skills"),
        skill_md: PathBuf::from("/skills/SKILL.md"),
        enabled: true,
        permission: SkillPermission::Allow,
        kind: Default::default(),
        commands: Vec::new(),
        scripts: Vec::new(),
        allowed_tools: Vec::new(),
        tags: vec![topic.to_string(), verb.to_string()],
        shadows: Vec::new(),
        warnings: Vec::new(),
        shadowed_dirs: Vec::new(),
        user_invocable: true,
        argument_hint: None,
        disable_model_invocation: false,
    }
}

/// The enhancer hook as the daemon builds it, on live settings with autoEnhance false;
/// counts the settings reads and the session-log reads (the log read starts with the
/// `maxEnhanceContextChars` read).
fn enhance_hook(home: &Path) -> (Arc<dyn StopHook>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let settings = Arc::new(RwLock::new(Settings::default()));
    assert!(!settings.read().unwrap().skill_enhance.auto_enhance);
    let (bool_reads, log_reads) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, reads) = (settings.clone(), bool_reads.clone());
    let auto_enhance = Arc::new(move || {
        reads.fetch_add(1, Ordering::Relaxed);
        s.read()
            .map(|s| s.skill_enhance.auto_enhance)
            .unwrap_or(false)
    });
    let (s, reads) = (settings, log_reads.clone());
    let max_enhance_chars = Arc::new(move || {
        reads.fetch_add(1, Ordering::Relaxed);
        s.read()
            .map(|s| s.skill_enhance.max_enhance_context_chars)
            .unwrap_or(0)
    });
    let (store, _) = SkillStore::open(
        StorePaths {
            skills_dir: home.join("skills"),
            bin_dir: home.join("bin"),
            index_file: home.join("skills/index.json"),
            settings_file: home.join("settings.json"),
        },
        RootConfig {
            synapse_skills: home.join("skills"),
            ..RootConfig::default()
        },
    );
    let agent = Arc::new(SkillAgent {
        store,
        subagents: Arc::new(NoSubAgents),
        meta_dir: home.join("skills"),
        versions: Versions::new(home.join("skill-versions")),
        contexts: Arc::new(SubAgentContexts::default()),
        sessions_dir: home.join("sessions"),
        auto_enhance,
        max_enhance_chars,
    });
    (Arc::new(EnhanceHook { agent }), bool_reads, log_reads)
}

/// The stop hook measured here never starts a sub-agent.
struct NoSubAgents;

impl synapse_daemon::agent::subagent::SubAgentRunner for NoSubAgents {
    fn run<'a>(
        &'a self,
        _: synapse_daemon::agent::subagent::SubAgentRequest,
        _: &'a tokio_util::sync::CancellationToken,
    ) -> futures::future::BoxFuture<
        'a,
        Result<synapse_daemon::agent::TurnOutcome, synapse_daemon::agent::AgentError>,
    > {
        Box::pin(async { Err(synapse_daemon::agent::AgentError::Stopping) })
    }
    fn commands_doc(&self) -> String {
        String::new()
    }
}

fn stop_hook(c: &mut Criterion) {
    let home = tempfile::tempdir().unwrap();
    let (hook, bool_reads, log_reads) = enhance_hook(home.path());
    let session_file = home.path().join("sessions/20261122-120102-3fa9c1.jsonl");
    let cwd = home.path().to_path_buf();
    let env: HashMap<String, String> = std::env::vars().collect();
    let cancel = CancellationToken::new();
    let mut g = c.benchmark_group("stop_hook");
    for (name, hook) in [("absent", None), ("auto_enhance_off", Some(&hook))] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let report = after_completed_turn(
                    black_box(hook),
                    "20261122-120102-3fa9c1",
                    &session_file,
                    &cwd,
                    &env,
                    &cancel,
                )
                .now_or_never();
                assert_eq!(report, Some(None));
            })
        });
    }
    g.finish();
    println!(
        "stop_hook/auto_enhance_off: autoEnhance reads (in-memory) {}, session-log reads {}, settings file reads 0",
        bool_reads.load(Ordering::Relaxed),
        log_reads.load(Ordering::Relaxed)
    );
    assert_eq!(log_reads.load(Ordering::Relaxed), 0);
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    stop_hook(&mut c);
    search_request_size();
    c.final_summary();
}

fn search_request_size() {
    let skills: Vec<SkillSummary> = (0..SKILLS).map(skill).collect();
    let query = "summarize the error lines in yesterday's logs";

    let mut times = Vec::new();
    let mut top = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        top = rank::top(&skills, query, PREFILTER_LIMIT);
        times.push(start.elapsed());
    }
    times.sort();
    // A search's request: its lean prompt (role, answer format, candidates) and the query.
    let request = |candidates: &[SkillSummary]| {
        prompt::search_system_prompt(candidates).len() + prompt::search_prompt(query).len()
    };
    let with_meta_filtered = request(&top);
    let with_meta_all = request(&skills);
    let empty = request(&[]);
    let filtered = with_meta_filtered - empty;
    let all = with_meta_all - empty;
    synapse_tests::report::value(
        "growth.search_request_kb",
        with_meta_filtered as f64 / 1024.0,
        "KB",
    );
    synapse_tests::report::value(
        "growth.search_request_all_kb",
        with_meta_all as f64 / 1024.0,
        "KB",
    );
    synapse_tests::report::samples("growth.bm25_prefilter", &times);
    println!("| metric | goal | measured |");
    println!("| --- | --- | --- |");
    println!(
        "| skill metadata sent for one search, {SKILLS} skills, top {PREFILTER_LIMIT} | ≤ 20 KB | {:.1} KB (all metadata: {:.0} KB, {:.0}× smaller) |",
        filtered as f64 / 1024.0,
        all as f64 / 1024.0,
        all as f64 / filtered as f64
    );
    println!(
        "| whole search request text (role, answer format, candidates, query) | ≤ 20 KB | {:.1} KB (all metadata: {:.0} KB) |",
        with_meta_filtered as f64 / 1024.0,
        with_meta_all as f64 / 1024.0
    );
    println!(
        "| BM25 prefilter over {SKILLS} skills, median of 20 | — | {:.2} ms |",
        times[10].as_secs_f64() * 1000.0
    );
    assert!(
        top.iter().any(|s| s.name.contains("logs")),
        "ranking found no log skill"
    );
}
