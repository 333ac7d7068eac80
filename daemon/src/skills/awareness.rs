//! The skills listing in the main agent's system prompt, ranked against the task: rebuilt at
//! the start of every turn from the user's words (the new message, then the conversation's
//! earlier ones, then the project folder's name, each weighing less), so the skill that fits
//! the request is in front of the model before it thinks of `skill search`.
//!
//! Listed: visible (enabled, not denied) regular skills; never meta skills and never skills with
//! `disable-model-invocation: true`. The best [`TOP_MATCHES`] matches are always listed in full:
//! the whole description (its "Use when …" sentence included) and their `skill:<name>:<script>`
//! commands. The rest fill the byte budget (settings.json `skills.awarenessBudgetBytes`, default
//! [`AWARENESS_BUDGET_BYTES_DEFAULT`]) one line each — project skills, then the most recently
//! changed — followed by how many were left out and the `skill search` hint, and a line naming
//! how many skills could not be loaded.
//!
//! Each session is told the skills of its own view only ([`super::scope`]): the user's skills
//! and its project's, never another project's skills or its copy of a user skill.
//!
//! The BM25 index behind the ranking is built once per set of skills and shared by every
//! session that sees that set ([`IndexCache`], the last [`INDEXES_KEPT`] sets); a turn only
//! scores its words against it.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::Value;
use synapse_shared::settings::Settings;
use synapse_shared::skill::SkillKind;

use super::bm25::{Bm25Index, tokens};
use super::record::SkillRecord;
use super::source::SkillSource;
use super::store::SkillStore;

/// Default size of the listing, in bytes (the top matches may go past it).
pub const AWARENESS_BUDGET_BYTES_DEFAULT: usize = 2048;
/// Matches always listed in full.
pub const TOP_MATCHES: usize = 5;
/// Longest description line of a skill that is not a top match, in characters.
const DESCRIPTION_LINE_MAX_CHARS: usize = 160;
/// Longest description of a top match, in characters (a SKILL.md description may have 1024).
const TOP_DESCRIPTION_MAX_CHARS: usize = 600;
/// Script commands named per top match.
const TOP_COMMANDS_MAX: usize = 8;
/// Listing indexes kept (one per set of skills a workspace sees; most projects share one).
const INDEXES_KEPT: usize = 16;
/// Weight of the new message's words, the earlier messages' and the project folder's.
const WEIGHT_NOW: f64 = 1.0;
const WEIGHT_EARLIER: f64 = 0.4;
const WEIGHT_FOLDER: f64 = 0.2;
/// Name words count this many times (a name is the strongest signal).
const NAME_WEIGHT: usize = 3;

const HEADER: &str = "# Available skills\n\nLoad a skill with `skill load <name>` before \
following it; its `skill:<name>:*` commands come with it.\n";

/// What the user asked for, newest first: the message a turn starts with, then the
/// conversation's earlier user messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskWords<'a> {
    pub now: &'a str,
    pub earlier: &'a [String],
}

/// `skills.awarenessBudgetBytes` from settings.json, else the default.
pub fn budget_from(settings: &Settings) -> usize {
    settings
        .other
        .get("skills")
        .and_then(|s| s.get("awarenessBudgetBytes"))
        .and_then(Value::as_u64)
        .map_or(AWARENESS_BUDGET_BYTES_DEFAULT, |b| b as usize)
}

/// The listable skills, indexed; shared by every session until the skills change.
pub struct ListingIndex {
    /// Identity of the records it was built from.
    key: u64,
    records: Vec<Arc<SkillRecord>>,
    bm25: Bm25Index,
    /// Record numbers in the order skills fill the listing when they match nothing: project
    /// skills, then the most recently changed, then by name.
    fallback: Vec<u32>,
}

/// The [`ListingIndex`]es built last, the most recently used first (a field of the
/// [`SkillStore`]).
pub type IndexCache = Mutex<Vec<Arc<ListingIndex>>>;

fn listable(r: &SkillRecord) -> bool {
    r.meta.kind == SkillKind::Regular && !r.meta.disable_model_invocation
}

impl ListingIndex {
    fn build(key: u64, records: Vec<Arc<SkillRecord>>) -> Self {
        let bm25 = Bm25Index::build(records.iter().map(|r| {
            let mut doc = Vec::new();
            let name = tokens(&r.meta.name);
            for _ in 0..NAME_WEIGHT {
                doc.extend(name.iter().cloned());
            }
            doc.extend(tokens(&r.meta.description));
            for t in &r.meta.tags {
                doc.extend(tokens(t));
            }
            doc
        }));
        let mut fallback: Vec<u32> = (0..records.len() as u32).collect();
        fallback.sort_by(|&a, &b| {
            let (a, b) = (&records[a as usize], &records[b as usize]);
            (a.source != SkillSource::Project)
                .cmp(&(b.source != SkillSource::Project))
                .then(b.modified.cmp(&a.modified))
                .then_with(|| a.meta.name.cmp(&b.meta.name))
        });
        Self {
            key,
            records,
            bm25,
            fallback,
        }
    }
}

impl SkillStore {
    /// The skills listing for a session in `cwd` whose user asked for `task` (empty when no
    /// skill may be listed and none is broken).
    pub fn awareness_section(
        &self,
        cwd: &Path,
        budget_bytes: usize,
        task: TaskWords<'_>,
    ) -> String {
        let index = self.listing_index(cwd);
        let query = query_words(task, cwd);
        let st = self.read();
        let visible = |r: &SkillRecord| st.is_visible(r);
        let mut out = render(&index, &query, budget_bytes, &visible);
        drop(st);
        let broken = self.broken_in(cwd).len();
        if broken > 0 {
            if out.is_empty() {
                out.push_str("# Available skills\n\n");
            }
            let noun = if broken == 1 { "skill" } else { "skills" };
            let _ = writeln!(
                out,
                "{broken} {noun} could not be loaded; `skill list` shows why."
            );
        }
        out
    }

    /// The index for the skills a caller in `cwd` sees as they are now: a cached one when that
    /// set did not change.
    fn listing_index(&self, cwd: &Path) -> Arc<ListingIndex> {
        let st = self.read();
        let view = super::scope::view_from(&st, cwd);
        let records: Vec<Arc<SkillRecord>> = view
            .active
            .values()
            .filter(|r| listable(r))
            .cloned()
            .collect();
        drop(st);
        // A cheap fingerprint (this runs at every turn's start): a changed skill is a new
        // record, with a new address and usually a new mtime.
        let mut key: u64 = 0xcbf2_9ce4_8422_2325;
        for r in &records {
            let mtime = r
                .modified
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            key = (key.rotate_left(7) ^ (Arc::as_ptr(r) as usize as u64) ^ mtime)
                .wrapping_mul(0x0100_0000_01b3);
        }
        let mut cache = self.listing_index.lock();
        if let Some(at) = cache.iter().position(|index| index.key == key) {
            let index = cache.remove(at);
            cache.insert(0, index.clone());
            return index;
        }
        drop(cache);
        let index = Arc::new(ListingIndex::build(key, records));
        let mut cache = self.listing_index.lock();
        cache.insert(0, index.clone());
        cache.truncate(INDEXES_KEPT);
        index
    }
}

/// Words too common in requests and descriptions to say what a task is about ("the user",
/// "use when …" are in most descriptions).
const STOPWORDS: &[&str] = &[
    "a", "about", "add", "all", "an", "and", "any", "are", "as", "at", "be", "but", "by", "can",
    "could", "do", "does", "for", "from", "get", "has", "have", "help", "how", "i", "if", "in",
    "into", "is", "it", "its", "let", "me", "my", "need", "now", "of", "on", "or", "our", "please",
    "so", "some", "that", "the", "their", "them", "then", "there", "these", "this", "to", "up",
    "us", "use", "user", "using", "want", "wants", "was", "we", "what", "when", "where", "which",
    "who", "why", "will", "with", "would", "you", "your",
];

/// [`tokens`] of `text` without its [`STOPWORDS`].
fn task_tokens(text: &str) -> Vec<String> {
    let kept: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !STOPWORDS.contains(&w.to_lowercase().as_str()))
        .collect();
    tokens(&kept.join(" "))
}

/// The weighted words of the task and of the project folder's last two names.
fn query_words(task: TaskWords<'_>, cwd: &Path) -> Vec<(String, f64)> {
    let mut q: Vec<(String, f64)> = task_tokens(task.now)
        .into_iter()
        .map(|t| (t, WEIGHT_NOW))
        .collect();
    for text in task.earlier {
        q.extend(task_tokens(text).into_iter().map(|t| (t, WEIGHT_EARLIER)));
    }
    for c in cwd.components().rev().take(2) {
        let words = task_tokens(&c.as_os_str().to_string_lossy());
        q.extend(
            words
                .into_iter()
                .filter(|w| w.len() >= 3)
                .map(|t| (t, WEIGHT_FOLDER)),
        );
    }
    q
}

fn render(
    index: &ListingIndex,
    query: &[(String, f64)],
    budget_bytes: usize,
    visible: &dyn Fn(&SkillRecord) -> bool,
) -> String {
    let total = index.records.iter().filter(|r| visible(r)).count();
    if total == 0 {
        return String::new();
    }
    let mut out = String::from(HEADER);
    let mut listed = vec![false; index.records.len()];
    let mut shown = 0;
    for (i, _) in index
        .bm25
        .top(query, TOP_MATCHES, |i| visible(&index.records[i as usize]))
    {
        out.push_str(&top_entry(&index.records[i as usize]));
        listed[i as usize] = true;
        shown += 1;
    }
    for &i in &index.fallback {
        if shown == total {
            break;
        }
        let r = &index.records[i as usize];
        if listed[i as usize] || !visible(r) {
            continue;
        }
        let line = format!("- {}: {}\n", r.meta.name, one_line(&r.meta.description));
        // Room for the closing hint must stay when skills are left out.
        let reserve = if shown + 1 < total {
            tail(total).len()
        } else {
            0
        };
        if out.len() + line.len() + reserve > budget_bytes {
            break;
        }
        out.push_str(&line);
        listed[i as usize] = true;
        shown += 1;
    }
    if shown < total {
        out.push_str(&tail(total - shown));
    }
    out
}

/// A top match: its whole description and its commands.
fn top_entry(r: &SkillRecord) -> String {
    let mut out = format!(
        "- {}: {}\n",
        r.meta.name,
        full_description(&r.meta.description)
    );
    if !r.scripts.is_empty() {
        let mut commands: Vec<String> = r
            .scripts
            .iter()
            .take(TOP_COMMANDS_MAX)
            .map(|s| format!("`{}`", s.command))
            .collect();
        if r.scripts.len() > TOP_COMMANDS_MAX {
            commands.push(format!("+{} more", r.scripts.len() - TOP_COMMANDS_MAX));
        }
        let _ = writeln!(out, "  commands: {}", commands.join(", "));
    }
    out
}

fn tail(left_out: usize) -> String {
    format!(
        "({left_out} more skills not listed: find them with `skill search \"<what you need>\"`.)\n"
    )
}

fn flat(description: &str) -> String {
    description.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let kept: String = text.chars().take(max_chars - 1).collect();
    format!("{}…", kept.trim_end())
}

/// The first line of a description, cut at [`DESCRIPTION_LINE_MAX_CHARS`].
fn one_line(description: &str) -> String {
    cut(&flat(description), DESCRIPTION_LINE_MAX_CHARS)
}

/// A top match's description: whole up to [`TOP_DESCRIPTION_MAX_CHARS`]; a longer one keeps its
/// start and its whole "Use when …" sentence.
fn full_description(description: &str) -> String {
    let text = flat(description);
    if text.chars().count() <= TOP_DESCRIPTION_MAX_CHARS {
        return text;
    }
    let lower = text.to_lowercase();
    let Some(at) = lower.find("use when").filter(|&at| at > 0) else {
        return cut(&text, TOP_DESCRIPTION_MAX_CHARS);
    };
    let rest = &text[at..];
    let sentence_end = rest.find(". ").map_or(rest.len(), |e| e + 1);
    let when = cut(&rest[..sentence_end], TOP_DESCRIPTION_MAX_CHARS / 2);
    let head_room = TOP_DESCRIPTION_MAX_CHARS.saturating_sub(when.chars().count() + 2);
    format!("{} {when}", cut(text[..at].trim_end(), head_room.max(40)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::time::{Duration, SystemTime};
    use synapse_shared::skill::SkillMeta;

    fn rec(name: &str, desc: &str, age_secs: u64) -> Arc<SkillRecord> {
        Arc::new(SkillRecord {
            id: format!("user:{name}"),
            source: SkillSource::User,
            root: 0,
            dir: format!("/s/{name}").into(),
            skill_md: format!("/s/{name}/SKILL.md").into(),
            meta: SkillMeta {
                name: name.into(),
                description: desc.into(),
                ..SkillMeta::default()
            },
            scripts: Vec::new(),
            warnings: Vec::new(),
            modified: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 - age_secs),
        })
    }

    fn listing(records: Vec<Arc<SkillRecord>>, now: &str, budget: usize) -> String {
        let index = ListingIndex::build(0, records);
        let q = query_words(TaskWords { now, earlier: &[] }, Path::new("/w/p"));
        render(&index, &q, budget, &|_| true)
    }

    #[test]
    fn everything_fits_or_the_matches_and_a_count() {
        let few: Vec<_> = (0..10)
            .map(|i| rec(&format!("s{i}"), "Does a thing.", i))
            .collect();
        let text = listing(few, "hello", 2048);
        assert!(text.contains("- s9: Does a thing.\n"), "{text}");
        assert!(!text.contains("more skills"), "{text}");

        let many: Vec<_> = (0..10_000)
            .map(|i| rec(&format!("s{i}"), &"Does a thing. ".repeat(30), i))
            .chain([rec("invoice-tools", "Builds invoices.", 999_999)])
            .collect();
        let text = listing(many, "make an invoice for ACME", 2048);
        assert!(text.len() <= 2048, "{}", text.len());
        assert!(
            text.starts_with(&format!("{HEADER}- invoice-tools: Builds invoices.\n")),
            "{text}"
        );
        assert!(text.contains("more skills not listed"), "{text}");
        assert!(text.contains("skill search"), "{text}");
    }

    #[test]
    fn a_long_description_keeps_its_use_when_sentence() {
        let desc = format!(
            "{} Use when the user wants a quarterly report. Extra words.",
            "Long intro. ".repeat(80)
        );
        let full = full_description(&desc);
        assert!(
            full.chars().count() <= TOP_DESCRIPTION_MAX_CHARS + 2,
            "{full}"
        );
        assert!(
            full.ends_with("Use when the user wants a quarterly report."),
            "{full}"
        );
        assert!(full.starts_with("Long intro."), "{full}");
    }
}
