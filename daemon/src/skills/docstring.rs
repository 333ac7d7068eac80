//! Reads a script's own documentation without running it: the Python module docstring, a
//! leading `#` comment block (shell, Python, Ruby, …), or a JSDoc `/** … */` / `//` block
//! (JavaScript, TypeScript). From that text it takes the one-line summary and the usage line
//! (a `Usage:` section); the whole text is the `--help` document. A comment block that is only
//! boilerplate (`# Exit on error` above `set -e`, lint pragmas, licence lines) does not count.
//! When the script documents nothing, its own argparse/click declarations or printed `usage:`
//! line ([`super::script_help`]) supply the description and usage.

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
pub fn parse(source: &str, style: DocStyle, file_name: &str) -> ScriptDoc {
    let raw = match style {
        DocStyle::Python => python_docstring(source).or_else(|| hash_block(source)),
        DocStyle::Hash => hash_block(source),
        DocStyle::Slash => slash_block(source),
    };
    let full = raw
        .map(|t| dedent(&drop_boilerplate(&t)))
        .unwrap_or_default();
    let (mut summary, mut usage_args) = sections(&full, file_name);
    let parser = super::script_help::parser_help(source);
    if summary.is_none() {
        summary = parser
            .description
            .map(|d| d.trim_end_matches(['.', ' ']).to_string() + ".");
    }
    if usage_args.is_none() {
        usage_args = parser.usage_args.map(|u| strip_program(&u, file_name));
    }
    ScriptDoc {
        summary,
        usage_args,
        full,
        own_help: parser.own_help,
    }
}

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
    let mut summary = None;
    let mut description = None;
    let mut usage = None;
    let mut current: Option<&str> = None;
    for line in full.lines() {
        if let Some((name, inline)) = section_header(line) {
            current = Some(name);
            if !inline.is_empty() {
                match name {
                    "usage" if usage.is_none() => usage = Some(inline.to_string()),
                    "description" if description.is_none() => {
                        description = Some(inline.to_string())
                    }
                    _ => {}
                }
            }
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('@') {
            continue;
        }
        match current {
            None if summary.is_none() => summary = Some(t.to_string()),
            Some("usage") if usage.is_none() => usage = Some(t.to_string()),
            Some("description") if description.is_none() => description = Some(t.to_string()),
            _ => {}
        }
    }
    let summary = summary
        .or(description)
        .map(|s| s.trim_end_matches(['.', ' ']).to_string() + ".");
    let usage_args = usage.map(|u| strip_program(&u, file_name));
    (summary.filter(|s| s != "."), usage_args)
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
