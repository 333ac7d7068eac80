//! What an `edit` or `write` call changed, as a coloured unified diff under the tool line. The
//! change is read from the command itself (`edit <path> <old> <new>`, `write <path> <content>`
//! or `write <path> <<'EOF' … EOF`), so it needs nothing from the daemon; the hunk header's line
//! number comes from the file when the client can read it. Long diffs are cut.

use super::theme::Theme;

/// Diff lines shown before the rest is summarised.
pub const DIFF_LINES_MAX: usize = 24;

/// The change one command made, when it is a simple `edit` or `write`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub old: String,
    pub new: String,
}

/// Reads an `edit`/`write` command; `None` for anything else (pipelines, other commands).
pub fn change_of(command: &str) -> Option<Change> {
    let first = command.lines().next()?;
    let words = shlex::split(first)?;
    match words.first().map(String::as_str)? {
        "edit" => {
            let args = shlex::split(command)?;
            match args.as_slice() {
                [_, path, old, new] | [_, path, old, new, _] => Some(Change {
                    path: path.clone(),
                    old: old.clone(),
                    new: new.clone(),
                }),
                _ => None,
            }
        }
        "write" => {
            if let [_, path, marker] = words.as_slice()
                && let Some(delimiter) = marker.strip_prefix("<<")
            {
                let delimiter = delimiter.trim_start_matches('-');
                let body: Vec<&str> = command.lines().skip(1).collect();
                let end = body.iter().rposition(|l| l.trim() == delimiter)?;
                let mut new = body[..end].join("\n");
                new.push('\n');
                return Some(Change {
                    path: path.clone(),
                    old: String::new(),
                    new,
                });
            }
            let args = shlex::split(command)?;
            match args.as_slice() {
                [_, path, content] => Some(Change {
                    path: path.clone(),
                    old: String::new(),
                    new: content.clone(),
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The diff lines (`-`/`+`/` `), common leading and trailing lines kept as context.
pub fn diff_lines(old: &str, new: &str) -> Vec<(char, String)> {
    let a: Vec<&str> = if old.is_empty() {
        Vec::new()
    } else {
        old.lines().collect()
    };
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = Vec::new();
    out.extend(a[..prefix].iter().map(|l| (' ', l.to_string())));
    out.extend(
        a[prefix..a.len() - suffix]
            .iter()
            .map(|l| ('-', l.to_string())),
    );
    out.extend(
        b[prefix..b.len() - suffix]
            .iter()
            .map(|l| ('+', l.to_string())),
    );
    out.extend(a[a.len() - suffix..].iter().map(|l| (' ', l.to_string())));
    out
}

/// The diff block for `change`, indented under the tool line; `cwd` locates the file for the
/// hunk's line number.
pub fn diff_block(theme: &Theme, change: &Change, cwd: &std::path::Path) -> String {
    let lines = diff_lines(&change.old, &change.new);
    if lines.is_empty() {
        return String::new();
    }
    let removed = lines.iter().filter(|(k, _)| *k == '-').count();
    let added = lines.iter().filter(|(k, _)| *k == '+').count();
    let start = start_line(cwd, change).unwrap_or(1);
    let old_len = lines.iter().filter(|(k, _)| *k != '+').count();
    let new_len = lines.iter().filter(|(k, _)| *k != '-').count();
    let old_start = if old_len == 0 { 0 } else { start };
    let mut out = theme.dim(&format!(
        "  ⎿  {} (+{added} -{removed})\n     @@ -{old_start},{old_len} +{start},{new_len} @@\n",
        change.path
    ));
    for (kind, text) in lines.iter().take(DIFF_LINES_MAX) {
        let line = format!("     {kind} {}", text.replace('\t', "    "));
        out.push_str(&match kind {
            '-' => theme.red(&line),
            '+' => theme.green(&line),
            _ => theme.dim(&line),
        });
        out.push('\n');
    }
    if lines.len() > DIFF_LINES_MAX {
        let more = lines.len() - DIFF_LINES_MAX;
        out.push_str(&theme.dim(&format!("     … +{more} diff lines\n")));
    }
    out
}

/// The 1-based line where the new text starts in the file as it is now.
fn start_line(cwd: &std::path::Path, change: &Change) -> Option<usize> {
    let path = std::path::Path::new(&change.path);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let text = std::fs::read_to_string(path).ok()?;
    let at = text.find(&change.new)?;
    Some(text[..at].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_and_write_commands_are_read() {
        let c = change_of("edit src/a.rs 'let x = 1;' 'let x = 2;'").unwrap();
        assert_eq!(
            (c.path.as_str(), c.old.as_str()),
            ("src/a.rs", "let x = 1;")
        );
        let w = change_of("write notes.md <<'EOF'\none\ntwo\nEOF").unwrap();
        assert_eq!(w.new, "one\ntwo\n");
        assert_eq!(change_of("write x 'hi'").unwrap().new, "hi");
        assert_eq!(change_of("edit a b c | cat"), None);
        assert_eq!(change_of("ls -la"), None);
    }

    #[test]
    fn diff_keeps_common_lines_as_context() {
        let d = diff_lines("a\nb\nc", "a\nB\nc");
        assert_eq!(
            d,
            vec![
                (' ', "a".into()),
                ('-', "b".into()),
                ('+', "B".into()),
                (' ', "c".into())
            ]
        );
        let block = diff_block(
            &Theme::plain(),
            &Change {
                path: "x.txt".into(),
                old: "b".into(),
                new: "B".into(),
            },
            std::path::Path::new("/nonexistent"),
        );
        assert_eq!(
            block,
            "  ⎿  x.txt (+1 -1)\n     @@ -1,1 +1,1 @@\n     - b\n     + B\n"
        );
    }
}
