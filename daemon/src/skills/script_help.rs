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
    let mut usage = None;
    if argparse {
        description = keyword_string(source, "ArgumentParser(", "description");
        usage = keyword_string(source, "ArgumentParser(", "usage")
            .map(|u| u.trim().trim_start_matches("usage:").trim().to_string())
            .filter(|u| !u.is_empty());
    }
    if click && description.is_none() {
        description =
            keyword_string(source, "@click.command(", "help").or_else(|| click_docstring(source));
    }
    let mut args: Vec<String> = Vec::new();
    for call in [".add_argument(", "@click.argument(", "@click.option("] {
        for (i, _) in source.match_indices(call) {
            if let Some(first) = first_string(&source[i + call.len()..]) {
                args.push(arg_word(&first, source, i + call.len()));
            }
        }
    }
    let usage_args = if let Some(u) = usage {
        Some(u.replace("%(prog)s", "$0"))
    } else if args.is_empty() {
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

/// The string value of the keyword argument `keyword` in the first call starting with `call`
/// that has one: a literal, adjacent literals (`("a " "b")`), a `textwrap.dedent(…)` of one,
/// or a module-level `NAME = "…"` the argument names. `__doc__` is left to the docstring.
fn keyword_string(source: &str, call: &str, keyword: &str) -> Option<String> {
    source.match_indices(call).find_map(|(i, _)| {
        let args = call_args(&source[i + call.len()..]);
        let value = keyword_value(args, keyword)?;
        string_expr(value).or_else(|| named_string(source, value.trim()))
    })
}

/// The text of a call's arguments up to its closing parenthesis (strings skipped over).
fn call_args(text: &str) -> &str {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &text[..i],
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    // Never closed (the head was cut): the rest of what was read.
    text
}

/// What follows `keyword=` at the call's top level (`description = (` … up to the next `,` at
/// depth 0), when the call has that keyword.
fn keyword_value<'a>(args: &'a str, keyword: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(k) = args[from..].find(keyword) {
        let at = from + k;
        from = at + keyword.len();
        let before_ok = args[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let rest = args[from..].trim_start();
        if !before_ok || !rest.starts_with('=') || rest.starts_with("==") {
            continue;
        }
        let value = &rest[1..];
        let end = call_args_split(value);
        return Some(&value[..end]);
    }
    None
}

/// Length of the first argument in `text` (up to a `,` or `)` at depth 0).
fn call_args_split(text: &str) -> usize {
    let inner = call_args(text);
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in inner.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return i,
            _ => {}
        }
    }
    inner.len()
}

/// A string expression made of literals only: `"a"`, `("a " "b")`, `textwrap.dedent("""…""")`.
fn string_expr(expr: &str) -> Option<String> {
    let mut t = expr.trim();
    for wrapper in [
        "textwrap.dedent(",
        "dedent(",
        "inspect.cleandoc(",
        "cleandoc(",
    ] {
        if let Some(inner) = t.strip_prefix(wrapper) {
            t = call_args(inner).trim();
        }
    }
    while let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        t = inner.trim();
    }
    let mut out = String::new();
    let mut rest = t;
    let mut any = false;
    while !rest.is_empty() {
        let lit = rest.trim_start_matches(['r', 'R', 'f', 'F', 'u', 'U', 'b', 'B']);
        if !lit.starts_with(['"', '\'']) {
            return None;
        }
        let (text, after) = next_string(lit)?;
        out.push_str(&text);
        any = true;
        rest = after.trim_start();
        // Implicit concatenation, or `"a" + "b"`, across lines.
        rest = rest.strip_prefix('+').map_or(rest, str::trim_start);
        rest = rest.strip_prefix('\\').map_or(rest, str::trim_start);
    }
    any.then_some(out)
}

/// The value of a module-level `NAME = <string expression>` for the identifier `name`.
fn named_string(source: &str, name: &str) -> Option<String> {
    if name.is_empty()
        || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
        || name == "__doc__"
    {
        return None;
    }
    source.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.trim_start();
        let rest = rest.strip_prefix('=').filter(|r| !r.starts_with('='))?;
        // `rest` lies inside `source`: its offset is where the value starts.
        let at = rest.as_ptr() as usize - source.as_ptr() as usize;
        let value = source.get(at..)?;
        string_expr(&value[..value_end(value)])
    })
}

/// Where a module-level assignment's value ends: the first newline at bracket depth 0 outside
/// strings.
fn value_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"\"\"\"") || rest.starts_with(b"'''") {
            let q = &rest[..3];
            match rest[3..].windows(3).position(|w| w == q) {
                Some(e) => i += 3 + e + 3,
                None => return text.len(),
            }
            continue;
        }
        match bytes[i] {
            b'"' | b'\'' => {
                let q = bytes[i];
                i += 1;
                while i < bytes.len() && bytes[i] != q && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    text.len()
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
    fn argparse_descriptions_in_every_shape() {
        let wrapped = "import argparse\n\ndef main():\n    parser = argparse.ArgumentParser(\n        description=(\n            \"Inspect failing checks, fetch their logs, and extract a \"\n            \"failure snippet.\"\n        ),\n        formatter_class=argparse.RawTextHelpFormatter,\n    )\n    parser.add_argument('--pr')\n";
        assert_eq!(
            parser_help(wrapped).description.as_deref(),
            Some("Inspect failing checks, fetch their logs, and extract a failure snippet.")
        );
        let named = "import argparse\nDESCRIPTION = '''Merge two CSV files\non a key column.'''\np = argparse.ArgumentParser(prog='merge', description=DESCRIPTION)\n";
        assert_eq!(
            parser_help(named).description.as_deref(),
            Some("Merge two CSV files on a key column.")
        );
        let dedented = "import argparse, textwrap\np = argparse.ArgumentParser(description=textwrap.dedent(\"\"\"\n    Render a chart.\n\n    More.\n\"\"\"))\n";
        assert_eq!(
            parser_help(dedented).description.as_deref(),
            Some("Render a chart.")
        );
        let usage = "import argparse\np = argparse.ArgumentParser(usage='%(prog)s <input.pdf> [--pages N]')\np.add_argument('input')\n";
        let h = parser_help(usage);
        assert_eq!(h.description, None);
        assert_eq!(h.usage_args.as_deref(), Some("$0 <input.pdf> [--pages N]"));
        let accents = "# -*- coding: utf-8 -*-\r\nimport argparse\r\nNOTE = \"Résumé café\"\r\nDESC = (\"Génère un résumé \"\r\n        \"des factures.\")\r\np = argparse.ArgumentParser(description=DESC)\r\n";
        assert_eq!(
            parser_help(accents).description.as_deref(),
            Some("Génère un résumé des factures.")
        );
        // `description=` inside another call is not the parser's.
        let sub = "import argparse\np = argparse.ArgumentParser()\nsub = p.add_subparsers()\nsub.add_parser('x', description='Sub.')\n";
        assert_eq!(parser_help(sub).description, None);
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
