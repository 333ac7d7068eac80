//! Issue 8 benchmarks, in-process: the skill-search request to the sub-agent with 10,000 skills,
//! BM25-prefiltered to the top candidates, against sending all skills' metadata (goal ≤ 20 KB,
//! ratio reported), and the time the prefilter takes. Deterministic generated skills.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use synapse_daemon::growth::{meta, prompt, rank, search::PREFILTER_LIMIT};
use synapse_daemon::skills::{SkillPermission, SkillSource, SkillSummary};

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
        allowed_tools: Vec::new(),
        tags: vec![topic.to_string(), verb.to_string()],
        shadows: Vec::new(),
        warnings: Vec::new(),
    }
}

fn main() {
    let skills: Vec<SkillSummary> = (0..SKILLS).map(skill).collect();
    let meta: String = meta::META_SKILLS
        .iter()
        .map(|(_, text)| *text)
        .collect::<Vec<_>>()
        .join("\n");
    let query = "summarize the error lines in yesterday's logs";
    let dir = Path::new("/home/u/.synapse/skills");

    let mut times = Vec::new();
    let mut top = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        top = rank::top(&skills, query, PREFILTER_LIMIT);
        times.push(start.elapsed());
    }
    times.sort();
    let doc = synapse_daemon::shell::builtin_registry().system_prompt_section();
    let with_meta_filtered =
        prompt::system_prompt(dir, &doc, &meta, &top).len() + prompt::search_prompt(query).len();
    let with_meta_all =
        prompt::system_prompt(dir, &doc, &meta, &skills).len() + prompt::search_prompt(query).len();
    let empty =
        prompt::system_prompt(dir, &doc, &meta, &[]).len() + prompt::search_prompt(query).len();
    let filtered = with_meta_filtered - empty;
    let all = with_meta_all - empty;
    println!("| metric | goal | measured |");
    println!("| --- | --- | --- |");
    println!(
        "| skill metadata sent for one search, {SKILLS} skills, top {PREFILTER_LIMIT} | ≤ 20 KB | {:.1} KB (all metadata: {:.0} KB, {:.0}× smaller) |",
        filtered as f64 / 1024.0,
        all as f64 / 1024.0,
        all as f64 / filtered as f64
    );
    println!(
        "| whole search request text (role, commands, meta skills, candidates, query) | ≤ 20 KB | {:.1} KB (all metadata: {:.0} KB) |",
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
