//! Reads a script's own documentation without running it: the Python module docstring, a
//! leading `#` comment block (shell, Python, Ruby, …), or a JSDoc `/** … */` / `//` block
//! (JavaScript, TypeScript). From that text it takes the one-line summary and the usage line
//! (a `Usage:` section); the whole text is the `--help` document. A comment block that is only
//! boilerplate (`# Exit on error` above `set -e`, lint pragmas, licence lines) does not count.
//! A Python module docstring comes first, then the script's own argparse/click declarations or
//! printed `usage:` line ([`super::script_help`]), then the leading comment block. The summary
//! is the first sentence of the first paragraph, however many lines it is wrapped over.

/// What a script says about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScriptDoc {
    /// The first line of the description (for `-h` and `tools search`).
    pub summary: Option<String>,
    /// The arguments part of the usage line, without the program name.
    pub usage_args: Option<String>,
    /// The cleaned documentation text (for `--help`).
    pub full: String,
    /// The script answers `--help` itself (the wrapper passes `--help` through).
    pub own_help: bool,
}

/// Comment syntax to look for, chosen from the extension or the shebang.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocStyle {
    Python,
    Hash,
    Slash,
}

/// Bytes of a script read to find its documentation.
pub const DOC_READ_LIMIT_BYTES: usize = 64 * 1024;

/// Parses the documentation of a script whose text is `source` (its file is `file_name`).
///
/// The one-line summary comes from, in order: the Python module docstring, the script's own
/// parser (argparse `description=`, click), the leading comment block. The usage line from the
/// same places, the parser's `usage=` or declared arguments before a comment's `Usage:`.
pub fn parse(source: &str, style: DocStyle, file_name: &str) -> ScriptDoc {
    let clean = |t: String| dedent(&drop_boilerplate(&t));
    let (docstring, comment) = match style {
        DocStyle::Python => (
            python_docstring(source).map(clean),
            hash_block(source).map(clean),
        ),
        DocStyle::Hash => (None, hash_block(source).map(clean)),
        DocStyle::Slash => (None, slash_block(source).map(clean)),
    };
    let docstring = docstring.filter(|d| !d.trim().is_empty());
    let comment = comment.filter(|c| !c.trim().is_empty());
    let (doc_summary, doc_usage) = docstring
        .as_deref()
        .map(|d| sections(d, file_name))
        .unwrap_or_default();
    let (comment_summary, comment_usage) = comment
        .as_deref()
        .map(|c| sections(c, file_name))
        .unwrap_or_default();
    let parser = super::script_help::parser_help(source);
    let summary = doc_summary
        .or_else(|| parser.description.map(|d| sentence(&d)))
        .or(comment_summary);
    let usage_args = doc_usage
        .or_else(|| parser.usage_args.map(|u| strip_program(&u, file_name)))
        .or(comment_usage);
    ScriptDoc {
        summary,
        usage_args,
        full: docstring.or(comment).unwrap_or_default(),
        own_help: parser.own_help,
    }
}

/// The first sentence of `text` (all of it when it has one), ending in a full stop, at most
/// [`SUMMARY_MAX_CHARS`] characters.
fn sentence(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let after = &text[i + c.len_utf8()..];
        let word = text[..i].rsplit(' ').next().unwrap_or("");
        // "e.g. x" and "v1.2" are not sentence ends; ". Next" is.
        let abbreviation = word.contains('.') || word.len() <= 1 || ["etc", "vs"].contains(&word);
        if after.starts_with(' ')
            && after[1..].starts_with(|n: char| n.is_uppercase())
            && !abbreviation
        {
            end = i;
            break;
        }
    }
    let first = text[..end].trim_end_matches(['.', ' ', ':', ';', ',']);
    let mut out: String = first.chars().take(SUMMARY_MAX_CHARS).collect();
    if first.chars().count() > SUMMARY_MAX_CHARS {
        out = out.trim_end().to_string() + "…";
    } else if !out.ends_with(['!', '?']) {
        out.push('.');
    }
    out
}

/// Longest one-line summary, in characters.
const SUMMARY_MAX_CHARS: usize = 200;

/// Comment lines that say nothing about what the script does.
const BOILERPLATE: &[&str] = &[
    "exit on error",
    "exit on any error",
    "exit immediately",
    "exit if any command fails",
    "stop on error",
    "fail on error",
    "fail fast",
    "strict mode",
    "shellcheck ",
    "eslint-",
    "pylint:",
    "noqa",
    "type: ignore",
    "copyright",
    "spdx-license",
    "license",
    "set -e",
    "set -u",
    "set -o",
];

/// Drops boilerplate lines; what is left is the real documentation (maybe nothing).
fn drop_boilerplate(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let lower = l.trim().to_ascii_lowercase();
            !BOILERPLATE
                .iter()
                .any(|b| lower.starts_with(b) || lower == b.trim_end())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lines after the shebang and encoding/modeline comments.
fn body_lines(source: &str) -> impl Iterator<Item = &str> {
    let mut first = true;
    source.lines().skip_while(move |l| {
        let skip = (first && l.starts_with("#!"))
            || l.contains("-*- coding")
            || l.starts_with("# vim:")
            || l.trim().starts_with("// @ts-")
            || l.trim() == "\"use strict\";";
        first = false;
        skip
    })
}

fn python_docstring(source: &str) -> Option<String> {
    let rest: String = body_lines(source)
        .skip_while(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let t = rest.trim_start();
    let t = t.strip_prefix(['r', 'R', 'u', 'U']).unwrap_or(t);
    for quote in ["\"\"\"", "'''"] {
        if let Some(inner) = t.strip_prefix(quote) {
            return inner.find(quote).map(|end| inner[..end].to_string());
        }
    }
    None
}

fn hash_block(source: &str) -> Option<String> {
    let lines: Vec<&str> = body_lines(source)
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| l.trim_start().starts_with('#'))
        .map(|l| {
            let t = l.trim_start().trim_start_matches('#');
            t.strip_prefix(' ').unwrap_or(t)
        })
        .collect();
    nonempty(lines.join("\n"))
}

fn slash_block(source: &str) -> Option<String> {
    let mut lines = body_lines(source)
        .skip_while(|l| l.trim().is_empty())
        .peekable();
    let first = lines.peek()?.trim_start();
    if first.starts_with("/*") {
        let mut out = Vec::new();
        for line in lines {
            let t = line.trim();
            let done = t.contains("*/");
            let t = t.split("*/").next().unwrap_or("");
            let t = t.trim_start_matches("/**").trim_start_matches("/*");
            let t = t.trim_start().strip_prefix('*').unwrap_or(t);
            out.push(t.strip_prefix(' ').unwrap_or(t).trim_end().to_string());
            if done {
                break;
            }
        }
        return nonempty(out.join("\n"));
    }
    let out: Vec<&str> = lines
        .take_while(|l| l.trim_start().starts_with("//"))
        .map(|l| {
            let t = l.trim_start().trim_start_matches('/');
            t.strip_prefix(' ').unwrap_or(t)
        })
        .collect();
    nonempty(out.join("\n"))
}

fn nonempty(s: String) -> Option<String> {
    (!s.trim().is_empty()).then_some(s)
}

/// Removes common indentation and blank edges.
fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let l = if i == 0 {
                l.trim_start()
            } else {
                l.get(indent..).unwrap_or(l.trim_start())
            };
            l.trim_end().to_string()
        })
        .collect();
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// Section headers we recognise (`Usage:`, `## Examples`, `@usage`…), lower-cased.
const SECTIONS: &[&str] = &[
    "usage",
    "description",
    "parameters",
    "params",
    "arguments",
    "args",
    "options",
    "examples",
    "example",
    "returns",
    "output",
    "notes",
    "environment",
];

fn section_header(line: &str) -> Option<(&'static str, &str)> {
    let t = line
        .trim()
        .trim_start_matches('#')
        .trim_start()
        .trim_start_matches('@');
    let lower = t.to_ascii_lowercase();
    SECTIONS.iter().find_map(|s| {
        let rest_lower = lower.strip_prefix(s)?;
        let rest = &t[t.len() - rest_lower.len()..];
        if rest.is_empty() {
            Some((*s, ""))
        } else if let Some(r) = rest.strip_prefix(':') {
            Some((*s, r.trim()))
        } else if rest.starts_with(' ') && *s == "usage" && line.trim_start().starts_with('@') {
            Some((*s, rest.trim()))
        } else {
            None
        }
    })
}

fn sections(full: &str, file_name: &str) -> (Option<String>, Option<String>) {
    // The summary is the first paragraph (lines up to a blank line or a section header), the
    // description section's likewise; a usage section's first line is the usage.
    let mut summary: Vec<&str> = Vec::new();
    let mut description: Vec<&str> = Vec::new();
    let mut usage = None;
    let mut current: Option<&str> = None;
    let mut paragraph_done = false;
    for line in full.lines() {
        if let Some((name, inline)) = section_header(line) {
            current = Some(name);
            paragraph_done = !summary.is_empty() || !description.is_empty();
            if !inline.is_empty() {
                match name {
                    "usage" if usage.is_none() && !is_code(inline) => {
                        usage = Some(inline.to_string())
                    }
                    "description" if description.is_empty() => description.push(inline),
                    _ => {}
                }
            }
            continue;
        }
        let t = line.trim();
        if t.is_empty() {
            paragraph_done |= !summary.is_empty() || !description.is_empty();
            continue;
        }
        if t.starts_with('@') {
            continue;
        }
        match current {
            None if !paragraph_done => summary.push(t),
            Some("usage") if usage.is_none() && !is_code(t) => usage = Some(t.to_string()),
            Some("description") if !paragraph_done || description.is_empty() => description.push(t),
            _ => {}
        }
    }
    let mut summary = if summary.is_empty() {
        description
    } else {
        summary
    };
    // "Excel Formula Recalculation Script" above the prose: the heading is a sentence of its own.
    if summary.len() > 1 && is_heading(summary[0]) {
        summary.truncate(1);
    }
    let summary = (!summary.is_empty()).then(|| sentence(&summary.join(" ")));
    let usage_args = usage.map(|u| strip_program(&u, file_name));
    (summary.filter(|s| s != "."), usage_args)
}

/// A `Usage:` line that shows Python code (`from office.soffice import run`, `x = f(y)`), not a
/// command line: a module's docstring telling importers how to use it.
fn is_code(line: &str) -> bool {
    let t = line.trim();
    let call = t
        .char_indices()
        .any(|(i, c)| c == '(' && t[..i].ends_with(|p: char| p.is_alphanumeric() || p == '_'));
    ["from ", "import ", ">>>", "#"]
        .iter()
        .any(|p| t.starts_with(p))
        || t.contains(" = ")
        || call
}

/// A title-case line without closing punctuation (`Skill Packager`, `MCP Server Harness`).
fn is_heading(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    (2..=8).contains(&words.len())
        && !line.ends_with(['.', ',', ':', ';', '!', '?', '-', '('])
        && words
            .iter()
            .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 4)
            .all(|w| w.starts_with(|c: char| c.is_uppercase()))
}

/// `python3 extract_text.py <pdf> [--pages N]` → `<pdf> [--pages N]`.
pub(super) fn strip_program(usage: &str, file_name: &str) -> String {
    let stem = synapse_shared::skill::naming::script_stem(file_name);
    let mut words: Vec<&str> = usage.split_whitespace().collect();
    let is_runner = |w: &str| {
        matches!(
            w,
            "python" | "python3" | "node" | "bash" | "sh" | "deno" | "ruby" | "perl" | "uv" | "run"
        )
    };
    let is_program = |w: &str| {
        let base = w.rsplit('/').next().unwrap_or(w);
        base == file_name
            || base == stem
            || matches!(base, "$0" | "%(prog)s" | "${0##*/}" | "$(basename")
            || base.starts_with("skill:")
    };
    let mut i = 0;
    while i < words.len() && is_runner(words[i]) {
        i += 1;
    }
    if i < words.len() && is_program(words[i]) {
        words.drain(..=i);
        if words.first() == Some(&"$0)") {
            words.remove(0);
        }
        return words.join(" ");
    }
    usage.trim().to_string()
}

#[cfg(test)]
#[path = "docstring_tests.rs"]
mod tests;
