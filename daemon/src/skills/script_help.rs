//! What a script's own command-line parser says about it, found by reading its source (never by
//! running it): an argparse `description=` and `add_argument` names, click decorators and the
//! command's docstring, or a `usage:` string the script prints. Also whether the script answers
//! `--help` itself, in which case the wrapper passes `--help` through to it.

/// The static findings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParserHelp {
    /// argparse `description=`, click `help=` or the click command's docstring.
    pub description: Option<String>,
    /// `<positional> [--option]…` from the parser's declarations, or a printed `usage:` line.
    pub usage_args: Option<String>,
    /// The script handles `--help` itself (argparse, click, typer, docopt, or a `--help` case).
    pub own_help: bool,
}

/// Reads `source` (the first bytes of a script).
pub fn parser_help(source: &str) -> ParserHelp {
    let argparse = source.contains("ArgumentParser(");
    let click = source.contains("@click.command") || source.contains("@click.group");
    let own_help = argparse
        || click
        || source.contains("typer.")
        || source.contains("docopt")
        || source.contains("OptionParser(")
        || source.contains("yargs")
        || source.contains("commander")
        || (source.contains("--help") && source.to_ascii_lowercase().contains("usage"));
    let mut description = None;
    if argparse {
        description = keyword_string(source, "ArgumentParser(", "description=");
    }
    if click && description.is_none() {
        description =
            keyword_string(source, "@click.command(", "help=").or_else(|| click_docstring(source));
    }
    let mut args: Vec<String> = Vec::new();
    for call in [".add_argument(", "@click.argument(", "@click.option("] {
        for (i, _) in source.match_indices(call) {
            if let Some(first) = first_string(&source[i + call.len()..]) {
                args.push(arg_word(&first, source, i + call.len()));
            }
        }
    }
    let usage_args = if args.is_empty() {
        printed_usage(source)
    } else {
        // Positionals first, as argparse prints them after the options but users type them.
        args.sort_by_key(|a| a.starts_with('['));
        Some(args.join(" "))
    };
    ParserHelp {
        description: description.map(|d| one_line(&d)).filter(|d| !d.is_empty()),
        usage_args,
        own_help,
    }
}

/// `<name>` for a positional, `[--long]` for an option (its longest spelling).
fn arg_word(first: &str, source: &str, at: usize) -> String {
    if !first.starts_with('-') {
        return format!("<{first}>");
    }
    let call_end = source[at..].find(')').map_or(source.len(), |e| at + e);
    let mut longest = first.to_string();
    let mut rest = &source[at..call_end];
    while let Some((s, after)) = next_string(rest) {
        if s.starts_with("--") && s.len() > longest.len() {
            longest = s;
        }
        rest = after;
    }
    format!("[{longest}]")
}

/// The string value of `keyword` inside the first call that starts with `call`.
fn keyword_string(source: &str, call: &str, keyword: &str) -> Option<String> {
    let start = source.find(call)? + call.len();
    let window = &source[start..source.len().min(start + 2000)];
    let k = window.find(keyword)?;
    first_string(&window[k + keyword.len()..])
}

/// The docstring of the first `def` after `@click.command`.
fn click_docstring(source: &str) -> Option<String> {
    let at = source.find("@click.command")?;
    let def = source[at..].find("\ndef ")? + at;
    let body = &source[def..];
    let colon = body.find("):")? + 2;
    let after = body[colon..].trim_start();
    ["\"\"\"", "'''"].iter().find_map(|q| {
        let inner = after.strip_prefix(q)?;
        inner.find(q).map(|e| inner[..e].trim().to_string())
    })
}

/// The first string literal at the start of `text` (after spaces), if it starts with one.
fn first_string(text: &str) -> Option<String> {
    let t = text.trim_start();
    let t = t.strip_prefix(['f', 'r', 'u']).unwrap_or(t);
    let quote = t.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    next_string(t)
        .filter(|_| t.starts_with(quote))
        .map(|(s, _)| s)
}

/// The next string literal in `text` and what follows it.
fn next_string(text: &str) -> Option<(String, &str)> {
    let open = text.find(['"', '\''])?;
    let q = &text[open..];
    for delim in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = q.strip_prefix(delim) {
            let end = inner.find(delim)?;
            return Some((inner[..end].to_string(), &inner[end + delim.len()..]));
        }
    }
    None
}

/// A `usage:` line the script prints (`echo "Usage: $0 <file>"`, `console.log('usage: …')`).
fn printed_usage(source: &str) -> Option<String> {
    source.lines().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        let i = lower.find("usage:")?;
        let rest = line[i + "usage:".len()..].trim();
        let rest = rest
            .split(['"', '\'', '`'])
            .next()
            .unwrap_or("")
            .trim_end_matches("\\n")
            .trim();
        (!rest.is_empty()).then(|| rest.to_string())
    })
}

fn one_line(text: &str) -> String {
    let first = text.split("\n\n").next().unwrap_or(text);
    first.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn argparse_without_a_docstring() {
        let src = "import argparse\np = argparse.ArgumentParser(\n    description='Convert a DOCX file to PDF.')\np.add_argument('input')\np.add_argument('-o', '--output', help='x')\n";
        let h = parser_help(src);
        assert_eq!(
            h.description.as_deref(),
            Some("Convert a DOCX file to PDF.")
        );
        assert_eq!(h.usage_args.as_deref(), Some("<input> [--output]"));
        assert!(h.own_help);
    }

    #[test]
    fn click_docstring_and_printed_usage() {
        let src = "import click\n@click.command()\n@click.argument('path')\ndef main(path):\n    \"\"\"Count the words in PATH.\"\"\"\n";
        let h = parser_help(src);
        assert_eq!(h.description.as_deref(), Some("Count the words in PATH."));
        assert_eq!(h.usage_args.as_deref(), Some("<path>"));
        let sh = "set -e\n[ $# -eq 0 ] && { echo \"Usage: $0 <dir> [depth]\"; exit 1; }\n";
        let h = parser_help(sh);
        assert_eq!(h.usage_args.as_deref(), Some("$0 <dir> [depth]"));
        assert!(!h.own_help);
    }
}
