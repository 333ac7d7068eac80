//! The runnable examples a piece of documentation shows the model — the system prompt, a
//! command's `-h` or `--help` — found the way a reader finds them, so a test can run every one
//! of them through the real daemon (an example that no longer works is a bug in the docs).
//!
//! An example is either an indented line that starts with an agent command (with the body of a
//! heredoc it opens), or an inline `` `code span` `` of two or more words that starts with one.
//! Templates are not examples: a line with a `<placeholder>`, an all-capitals placeholder word
//! (`ID`, `SECS`) or an ellipsis is left out.

/// Every runnable example in `doc`, in order, each once; `is_command` tells agent command names.
pub fn examples_in(doc: &str, is_command: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let lines: Vec<&str> = doc.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let body = line.trim_start();
        let indent = line.len() - body.len();
        if indent < 2 || !runnable(body, &is_command) {
            continue;
        }
        let mut example = body.trim_end().to_string();
        if let Some(marker) = heredoc_marker(body) {
            while i < lines.len() {
                let next = lines[i];
                i += 1;
                let next = next.get(indent..).unwrap_or_else(|| next.trim_start());
                example.push('\n');
                example.push_str(next);
                if next.trim() == marker {
                    break;
                }
            }
        }
        found.push(example);
    }
    found.extend(
        code_spans(doc)
            .filter(|span| span.split_whitespace().count() >= 2 && runnable(span, &is_command))
            .map(str::to_string),
    );
    let mut seen = std::collections::HashSet::new();
    found.retain(|e| seen.insert(e.clone()));
    found
}

/// True when `text` starts with an agent command and holds no placeholder.
fn runnable(text: &str, is_command: &impl Fn(&str) -> bool) -> bool {
    let Some(first) = text.split_whitespace().next() else {
        return false;
    };
    is_command(first) && !has_placeholder(text)
}

/// `<name>`, `…`, or a bare word in capitals such as `ID` or `SECS`.
fn has_placeholder(text: &str) -> bool {
    if text.contains('…') || text.contains("...") {
        return true;
    }
    let angle = text.match_indices('<').any(|(at, _)| {
        let rest = &text[at + 1..];
        rest.starts_with(|c: char| c.is_ascii_alphabetic())
            && rest.find('>').is_some_and(|end| {
                rest[..end]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '-' | '|' | '.'))
            })
    });
    angle
        || text.split_whitespace().any(|w| {
            w.len() <= 5 && w.chars().all(|c| c.is_ascii_uppercase()) && !w.is_empty() && w != "EOF"
        })
}

/// The end marker of a heredoc the line opens (`<<'EOF'`, `<<"EOF"`, `<<EOF`, `<<-EOF`).
fn heredoc_marker(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line[at + 2..].trim_start_matches('-');
    let word = rest.split_whitespace().next()?;
    let marker = word.trim_matches(|c| c == '\'' || c == '"');
    (!marker.is_empty()
        && marker
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| marker.to_string())
}

/// The text of each single-backtick span that stays within one line.
fn code_spans(doc: &str) -> impl Iterator<Item = &str> {
    doc.lines().flat_map(|line| {
        line.split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, span)| span)
            .collect::<Vec<_>>()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str) -> bool {
        matches!(name, "read" | "write" | "job" | "skill" | "bash")
    }

    #[test]
    fn indented_lines_heredocs_and_code_spans_are_examples_templates_are_not() {
        let doc = "\
Arguments:
  <path>        file to read
  --offset N    first line

Run `job list` or `job read ID`; `read` alone, `skill search \"<what>\"`.
For code, use the heredoc form:
  write src/app.py <<'EOF'
  print(\"hi\")
  EOF

Examples:
  read src/main.rs
  bash -c '…'
  read src/main.rs
  ls -la";
        assert_eq!(
            examples_in(doc, agent),
            vec![
                "write src/app.py <<'EOF'\nprint(\"hi\")\nEOF".to_string(),
                "read src/main.rs".to_string(),
                "job list".to_string(),
            ]
        );
    }

    #[test]
    fn placeholders_are_recognised() {
        assert!(has_placeholder("job read ID"));
        assert!(has_placeholder("skill load <name>"));
        assert!(has_placeholder("bash --timeout SECS '<cmd>'"));
        assert!(!has_placeholder("bash 'make test 2>&1 | tail -20'"));
        assert!(!has_placeholder("write f <<'EOF'"));
        assert!(!has_placeholder("search 'TODO|FIXME' -i --path src -C 2"));
    }
}
