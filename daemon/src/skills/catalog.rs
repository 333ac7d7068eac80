//! The tool catalog behind `tools search`: every extension command (`skill:*` now, `mcp:*` when
//! the MCP manager registers itself) as `{command, description}`, searched by keyword or regex.
//!
//! Sources implement [`ToolSource`] and are added to a [`ToolCatalog`] once; searches visit them
//! without copying. Keyword search is case-insensitive over command and description, ranked by
//! how many query words match, then how well (exact command, a command part, a command substring,
//! a description word, a description substring), then by name. A query with regex characters
//! (`^$*+?()[]{}|\`) is a case-insensitive regex over command and description.

use parking_lot::RwLock;
use std::path::Path;
use std::sync::Arc;

/// One command the agent can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    pub command: String,
    pub description: String,
}

/// Who is searching: the caller's workspace (a project root; `None`: outside any project) and
/// its chat session (`None`: outside a session), whose own MCP servers count too.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolScope<'a> {
    pub workspace: Option<&'a Path>,
    pub session: Option<&'a str>,
}

impl<'a> ToolScope<'a> {
    /// A caller in `workspace`, outside any chat session.
    pub fn workspace(workspace: Option<&'a Path>) -> Self {
        Self {
            workspace,
            session: None,
        }
    }
}

/// Anything that contributes commands (the skill store, the MCP servers).
pub trait ToolSource: Send + Sync {
    /// Calls `f` once per command a caller in `scope` can run.
    fn visit_tools(&self, scope: ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry));
}

/// A fixed list, handy for tests and for sources that rebuild a list on change.
impl ToolSource for Vec<ToolEntry> {
    fn visit_tools(&self, _: ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry)) {
        self.iter().for_each(f);
    }
}

/// Results shown by default.
pub const SEARCH_LIMIT_DEFAULT: usize = 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Keyword,
    Regex,
}

/// A ranked search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutcome {
    pub mode: SearchMode,
    pub hits: Vec<ToolEntry>,
    /// Matches before the limit was applied.
    pub total: usize,
    /// Set when a regex-looking query did not compile (keyword search was used).
    pub note: Option<String>,
}

#[derive(Default, Clone)]
pub struct ToolCatalog {
    sources: Arc<RwLock<Vec<Arc<dyn ToolSource>>>>,
}

impl std::fmt::Debug for ToolCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCatalog").finish_non_exhaustive()
    }
}

impl ToolCatalog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a source; its commands appear in every later search.
    pub fn add_source(&self, source: Arc<dyn ToolSource>) {
        {
            let mut s = self.sources.write();
            s.push(source);
        }
    }

    /// Number of commands over all sources.
    pub fn count(&self) -> usize {
        let mut n = 0;
        self.visit(ToolScope::default(), &mut |_| n += 1);
        n
    }

    fn visit(&self, scope: ToolScope<'_>, f: &mut dyn FnMut(&ToolEntry)) {
        let sources: Vec<Arc<dyn ToolSource>> = self.sources.read().clone();
        for s in sources {
            s.visit_tools(scope, f);
        }
    }

    /// Searches every source; `limit` caps the hits returned.
    pub fn search(&self, query: &str, limit: usize) -> SearchOutcome {
        self.search_in(ToolScope::default(), query, limit)
    }

    /// [`search`](Self::search) for a caller in `scope`: its project's commands and its
    /// session's own, and none of another project's or session's.
    pub fn search_in(&self, scope: ToolScope<'_>, query: &str, limit: usize) -> SearchOutcome {
        let query = query.trim();
        let mut note = None;
        if looks_like_regex(query) {
            match regex::RegexBuilder::new(query)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
            {
                Ok(re) => return self.search_regex(scope, &re, limit),
                Err(e) => {
                    note = Some(format!(
                        "not a valid regex ({}); searched as keywords",
                        first_line(&e.to_string())
                    ))
                }
            }
        }
        let terms: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut scored: Vec<(usize, u32, ToolEntry)> = Vec::new();
        self.visit(scope, &mut |t| {
            if let Some((n, score)) = keyword_score(&terms, t) {
                scored.push((n, score, t.clone()));
            }
        });
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then_with(|| a.2.command.cmp(&b.2.command))
        });
        let total = scored.len();
        let hits = scored.into_iter().take(limit).map(|(_, _, t)| t).collect();
        SearchOutcome {
            mode: SearchMode::Keyword,
            hits,
            total,
            note,
        }
    }

    fn search_regex(&self, scope: ToolScope<'_>, re: &regex::Regex, limit: usize) -> SearchOutcome {
        let mut found: Vec<(bool, ToolEntry)> = Vec::new();
        self.visit(scope, &mut |t| {
            if re.is_match(&t.command) {
                found.push((true, t.clone()));
            } else if re.is_match(&t.description) {
                found.push((false, t.clone()));
            }
        });
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.command.cmp(&b.1.command)));
        let total = found.len();
        let hits = found.into_iter().take(limit).map(|(_, t)| t).collect();
        SearchOutcome {
            mode: SearchMode::Regex,
            hits,
            total,
            note: None,
        }
    }

    /// The text the model sees for `tools search <query>`.
    pub fn search_text(&self, query: &str) -> String {
        self.search_text_in(ToolScope::default(), query)
    }

    /// [`search_text`](Self::search_text) for a caller in `scope`.
    pub fn search_text_in(&self, scope: ToolScope<'_>, query: &str) -> String {
        if query.trim().is_empty() {
            return TOOLS_USAGE.to_string();
        }
        render_outcome(query, &self.search_in(scope, query, SEARCH_LIMIT_DEFAULT))
    }
}

/// Formats a search result: one `command  description` line per hit.
pub fn render_outcome(query: &str, o: &SearchOutcome) -> String {
    let mut out = String::new();
    if let Some(n) = &o.note {
        out.push_str(&format!("note: {n}\n"));
    }
    if o.hits.is_empty() {
        out.push_str(&format!(
            "No tools match {query:?}. Try fewer or other words, or a regex such as \"skill:.*\".\n"
        ));
        return out;
    }
    let width = o
        .hits
        .iter()
        .map(|h| h.command.chars().count())
        .max()
        .unwrap_or(0)
        .min(48);
    for h in &o.hits {
        let desc = h.description.lines().next().unwrap_or("");
        out.push_str(&format!("{:<width$}  {desc}\n", h.command));
    }
    if o.total > o.hits.len() {
        out.push_str(&format!(
            "… {} more match; narrow the query to see them.\n",
            o.total - o.hits.len()
        ));
    }
    out
}

/// Usage of the `tools` agent command.
pub const TOOLS_USAGE: &str = "\
Usage: tools search <keywords|regex>

Finds extension commands (skill:<skill>:<script>, mcp:<server>:<tool>) by keywords (case-insensitive,
matched against command names and descriptions, best first) or by a regex when the query contains
regex characters, e.g. tools search \"skill:pdf-.*\". Each result is one line: the command and what it
does. Run `<command> -h` for its usage or `<command> --help` for its full documentation.
";

fn looks_like_regex(q: &str) -> bool {
    q.chars().any(|c| "^$*+?()[]{}|\\".contains(c))
}

fn first_line(s: &str) -> &str {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
}

/// (query words matched, score) or `None` when no word matches.
fn keyword_score(terms: &[String], t: &ToolEntry) -> Option<(usize, u32)> {
    if terms.is_empty() {
        return None;
    }
    let (mut matched, mut score) = (0usize, 0u32);
    for term in terms {
        let s = term_score(term, &t.command, &t.description);
        if s > 0 {
            matched += 1;
            score += s;
        }
    }
    (matched > 0).then_some((matched, score))
}

/// How well one lower-cased query word matches a command and its description. ASCII words are
/// compared without allocating (this runs for every command on every search).
fn term_score(term: &str, command: &str, description: &str) -> u32 {
    if !term.is_ascii() {
        return term_score_unicode(term, &command.to_lowercase(), &description.to_lowercase());
    }
    let eq = |a: &str| a.eq_ignore_ascii_case(term);
    if eq(command) {
        100
    } else if command.split(':').any(eq) {
        50
    } else if let Some(i) = find_ascii_ci(command, term) {
        let at_boundary = i == 0 || matches!(command.as_bytes()[i - 1], b':' | b'-' | b'_' | b'.');
        if at_boundary { 30 } else { 20 }
    } else if description.split(|c: char| !c.is_alphanumeric()).any(eq) {
        10
    } else if find_ascii_ci(description, term).is_some() {
        5
    } else {
        0
    }
}

fn term_score_unicode(term: &str, cmd: &str, desc: &str) -> u32 {
    if cmd == term {
        100
    } else if cmd.split(':').any(|p| p == term) {
        50
    } else if cmd.contains(term) {
        20
    } else if desc
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == term)
    {
        10
    } else if desc.contains(term) {
        5
    } else {
        0
    }
}

/// Byte offset of the first ASCII-case-insensitive occurrence of `needle` (lower-case ASCII).
fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    if n.len() > h.len() {
        return None;
    }
    (0..=h.len() - n.len())
        .find(|&i| h[i].to_ascii_lowercase() == first && h[i..i + n.len()].eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn catalog() -> ToolCatalog {
        let c = ToolCatalog::new();
        let e = |c: &str, d: &str| ToolEntry {
            command: c.into(),
            description: d.into(),
        };
        c.add_source(Arc::new(vec![
            e(
                "skill:pdf-editor:extract_text",
                "Extract text from PDF files.",
            ),
            e("skill:pdf-editor:merge", "Merge PDFs."),
            e("skill:notes:grep", "Search notes for a PDF mention."),
            e("skill:x:pdf", "Other."),
        ]));
        c.add_source(Arc::new(vec![e("mcp:git-tools:commit", "Commit changes")]));
        c
    }

    fn commands(o: &SearchOutcome) -> Vec<&str> {
        o.hits.iter().map(|h| h.command.as_str()).collect()
    }

    #[test]
    fn keyword_ranking() {
        let c = catalog();
        let o = c.search("PDF", 10);
        assert_eq!(
            commands(&o),
            vec![
                "skill:x:pdf",
                "skill:pdf-editor:extract_text",
                "skill:pdf-editor:merge",
                "skill:notes:grep"
            ]
        );
        let o = c.search("extract pdf", 10);
        assert_eq!(commands(&o)[0], "skill:pdf-editor:extract_text");
        assert_eq!(c.search("commit", 10).hits.len(), 1);
        assert_eq!(c.search("nothing-here", 10).total, 0);
        assert_eq!(c.count(), 5);
    }

    #[test]
    fn regex_and_limits() {
        let c = catalog();
        let o = c.search("mcp:git-.*", 10);
        assert_eq!(
            (o.mode, commands(&o)),
            (SearchMode::Regex, vec!["mcp:git-tools:commit"])
        );
        let o = c.search("skill:.*", 2);
        assert_eq!((o.hits.len(), o.total), (2, 4));
        let text = render_outcome("skill:.*", &o);
        assert!(text.contains("… 2 more match"), "{text}");
        let o = c.search("pdf(", 10);
        assert!(o.note.is_some() && o.total == 0);
        assert!(c.search_text("zzz").starts_with("No tools match \"zzz\""));
        assert!(c.search_text("  ").starts_with("Usage: tools search"));
    }
}
