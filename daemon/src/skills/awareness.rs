//! What the main agent is told about skills, in two parts that keep the prompt cache warm:
//!
//! - **The listing** ([`SkillStore::listing`]) in the system prompt: stable, never ranked
//!   against a message, so it is byte-identical at every turn of a session (and across sessions
//!   while the skills do not change). Skills fill it in a fixed order — project skills, then the
//!   most recently changed, then by name — each with its whole description (its "Use when …"
//!   sentence kept) and its `skill:<name>:<script>` commands, within the byte budget
//!   (settings.json `skills.awarenessBudgetBytes`, default [`AWARENESS_BUDGET_BYTES_DEFAULT`]),
//!   followed by how many were left out with the `skill search` hint, and a line naming how many
//!   skills could not be loaded.
//! - **The fitting skills** ([`SkillStore::fitting`]) of each new message, ranked against its
//!   words (BM25 over names, descriptions and tags), for the turn's own message: the best
//!   [`TOP_MATCHES`], in full when the listing left them out, by name when it has them.
//!
//! Listed: visible (enabled, not denied) regular skills; never meta skills and never skills with
//! `disable-model-invocation: true`. Each session is told the skills of its own view only
//! ([`super::scope`]): the user's skills and its project's, never another project's skills or
//! its copy of a user skill.
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
/// Skills named as fitting one message.
pub const TOP_MATCHES: usize = 3;
/// Longest description of a listed skill, in characters (a SKILL.md description may have 1024).
const DESCRIPTION_MAX_CHARS: usize = 600;
/// Script commands named per skill.
const COMMANDS_MAX: usize = 8;
/// Listing indexes kept (one per set of skills a workspace sees; most projects share one).
const INDEXES_KEPT: usize = 16;
/// Name words count this many times (a name is the strongest signal).
const NAME_WEIGHT: usize = 3;

const HEADER: &str = "# Available skills\n\nLoad a skill with `skill load <name>` before \
following it; its `skill:<name>:*` commands come with it.\n";

/// The system prompt's skills listing and the names it lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillListing {
    /// Empty when no skill may be listed and none is broken.
    pub text: String,
    pub listed: Vec<String>,
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
    /// The stable skills listing for a session in `cwd`.
    pub fn listing(&self, cwd: &Path, budget_bytes: usize) -> SkillListing {
        let index = self.listing_index(cwd);
        let st = self.read();
        let visible = |r: &SkillRecord| st.is_visible(r);
        let mut listing = render_listing(&index, budget_bytes, &visible);
        drop(st);
        let broken = self.broken_in(cwd).len();
        if broken > 0 {
            if listing.text.is_empty() {
                listing.text.push_str("# Available skills\n\n");
            }
            let noun = if broken == 1 { "skill" } else { "skills" };
            let _ = writeln!(
                listing.text,
                "{broken} {noun} could not be loaded; `skill list` shows why."
            );
        }
        listing
    }

    /// The skills that fit `message` for a session in `cwd`, for the turn's reminder: those the
    /// listing left out in full, those in `listed` by name; empty when none fits.
    pub fn fitting(&self, cwd: &Path, message: &str, listed: &[String]) -> String {
        let query: Vec<(String, f64)> =
            task_tokens(message).into_iter().map(|t| (t, 1.0)).collect();
        if query.is_empty() {
            return String::new();
        }
        let index = self.listing_index(cwd);
        let st = self.read();
        let visible = |r: &SkillRecord| st.is_visible(r);
        render_fitting(&index, &query, listed, &visible)
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

fn render_listing(
    index: &ListingIndex,
    budget_bytes: usize,
    visible: &dyn Fn(&SkillRecord) -> bool,
) -> SkillListing {
    let total = index.records.iter().filter(|r| visible(r)).count();
    if total == 0 {
        return SkillListing::default();
    }
    let mut out = String::from(HEADER);
    let mut listed = Vec::new();
    for &i in &index.fallback {
        let r = &index.records[i as usize];
        if !visible(r) {
            continue;
        }
        let entry = entry(r);
        // Room for the closing hint must stay when skills are left out.
        let reserve = if listed.len() + 1 < total {
            tail(total).len()
        } else {
            0
        };
        if out.len() + entry.len() + reserve > budget_bytes {
            break;
        }
        out.push_str(&entry);
        listed.push(r.meta.name.clone());
    }
    if listed.len() < total {
        out.push_str(&tail(total - listed.len()));
    }
    SkillListing { text: out, listed }
}

fn render_fitting(
    index: &ListingIndex,
    query: &[(String, f64)],
    listed: &[String],
    visible: &dyn Fn(&SkillRecord) -> bool,
) -> String {
    let mut out = String::new();
    for (i, _) in index
        .bm25
        .top(query, TOP_MATCHES, |i| visible(&index.records[i as usize]))
    {
        let r = &index.records[i as usize];
        if listed.contains(&r.meta.name) {
            let _ = writeln!(out, "- {} (listed in the system prompt)", r.meta.name);
        } else {
            out.push_str(&entry(r));
        }
    }
    out
}

/// A skill's entry: its whole description and its commands.
fn entry(r: &SkillRecord) -> String {
    let mut out = format!(
        "- {}: {}\n",
        r.meta.name,
        full_description(&r.meta.description)
    );
    if !r.scripts.is_empty() {
        let mut commands: Vec<String> = r
            .scripts
            .iter()
            .take(COMMANDS_MAX)
            .map(|s| format!("`{}`", s.command))
            .collect();
        if r.scripts.len() > COMMANDS_MAX {
            commands.push(format!("+{} more", r.scripts.len() - COMMANDS_MAX));
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

/// A listed skill's description: whole up to [`DESCRIPTION_MAX_CHARS`]; a longer one keeps its
/// start and its whole "Use when …" sentence.
fn full_description(description: &str) -> String {
    let text = flat(description);
    if text.chars().count() <= DESCRIPTION_MAX_CHARS {
        return text;
    }
    let lower = text.to_lowercase();
    let Some(at) = lower.find("use when").filter(|&at| at > 0) else {
        return cut(&text, DESCRIPTION_MAX_CHARS);
    };
    let rest = &text[at..];
    let sentence_end = rest.find(". ").map_or(rest.len(), |e| e + 1);
    let when = cut(&rest[..sentence_end], DESCRIPTION_MAX_CHARS / 2);
    let head_room = DESCRIPTION_MAX_CHARS.saturating_sub(when.chars().count() + 2);
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

    fn listing(records: Vec<Arc<SkillRecord>>, budget: usize) -> SkillListing {
        render_listing(&ListingIndex::build(0, records), budget, &|_| true)
    }

    fn fitting(records: Vec<Arc<SkillRecord>>, message: &str, listed: &[String]) -> String {
        let index = ListingIndex::build(0, records);
        let q: Vec<(String, f64)> = task_tokens(message).into_iter().map(|t| (t, 1.0)).collect();
        render_fitting(&index, &q, listed, &|_| true)
    }

    #[test]
    fn everything_fits_or_the_newest_and_a_count() {
        let few: Vec<_> = (0..10)
            .map(|i| rec(&format!("s{i}"), "Does a thing.", i))
            .collect();
        let text = listing(few, 2048).text;
        assert!(text.contains("- s9: Does a thing.\n"), "{text}");
        assert!(!text.contains("more skills"), "{text}");

        let many: Vec<_> = (0..10_000)
            .map(|i| rec(&format!("s{i:05}"), &"Does a thing. ".repeat(30), i + 1))
            .chain([rec("invoice-tools", "Builds invoices.", 999_999)])
            .collect();
        let out = listing(many, 2048);
        assert!(out.text.len() <= 2048, "{}", out.text.len());
        assert!(
            out.text.starts_with(&format!("{HEADER}- s00000: Does")),
            "{}",
            out.text
        );
        assert_eq!(out.listed[0], "s00000");
        assert!(!out.text.contains("invoice-tools"), "{}", out.text);
        assert!(out.text.contains("more skills not listed"), "{}", out.text);
        assert!(out.text.contains("skill search"), "{}", out.text);
    }

    #[test]
    fn the_listing_does_not_depend_on_the_message_and_the_fitting_skills_do() {
        let skills = || {
            (0..40)
                .map(|i| {
                    rec(
                        &format!("filler-{i:02}"),
                        &"Calibrates widgets on lines. ".repeat(8),
                        i + 1,
                    )
                })
                .chain([rec(
                    "invoice-tools",
                    "Builds invoices. Use when the user asks for an invoice.",
                    999_999,
                )])
                .collect::<Vec<_>>()
        };
        let first = listing(skills(), 2048);
        assert_eq!(listing(skills(), 2048), first);
        assert!(!first.listed.contains(&"invoice-tools".to_string()));

        let fits = fitting(skills(), "make an invoice for ACME", &first.listed);
        assert_eq!(
            fits,
            "- invoice-tools: Builds invoices. Use when the user asks for an invoice.\n"
        );
        let named = fitting(skills(), "which line calibrates widgets", &first.listed);
        assert!(named.starts_with("- filler-"), "{named}");
        assert!(
            named.contains(" (listed in the system prompt)\n"),
            "{named}"
        );
        assert_eq!(named.lines().count(), TOP_MATCHES, "{named}");
        assert_eq!(fitting(skills(), "hello there", &first.listed), "");
    }

    #[test]
    fn a_long_description_keeps_its_use_when_sentence() {
        let desc = format!(
            "{} Use when the user wants a quarterly report. Extra words.",
            "Long intro. ".repeat(80)
        );
        let full = full_description(&desc);
        assert!(full.chars().count() <= DESCRIPTION_MAX_CHARS + 2, "{full}");
        assert!(
            full.ends_with("Use when the user wants a quarterly report."),
            "{full}"
        );
        assert!(full.starts_with("Long intro."), "{full}");
    }
}
