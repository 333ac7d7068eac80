//! `@path` mentions: a word starting with `@` that names an existing file attaches it to the
//! message. A small text file goes in whole (in a `<file path="…">` block after the message);
//! a large or binary one is named with a hint to `read` it, so the model decides what to load.
//! Words that name no file (`@someone`) are left alone.

use std::path::Path;

/// Files up to this size are attached whole.
pub const ATTACH_WHOLE_MAX_BYTES: u64 = 32 * 1024;

/// What was attached, for the line the REPL prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub path: String,
    /// `None` when only a `read` hint was attached.
    pub lines: Option<usize>,
    pub bytes: u64,
}

/// The message with its mentioned files attached, and what was attached. Relative paths are
/// resolved against `cwd`.
pub fn attach_mentions(text: &str, cwd: &Path) -> (String, Vec<Attachment>) {
    let mut blocks = String::new();
    let mut attached: Vec<Attachment> = Vec::new();
    for word in text.split_whitespace() {
        let Some(raw) = word.strip_prefix('@') else {
            continue;
        };
        let path = raw.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
        if path.is_empty() || attached.iter().any(|a| a.path == path) {
            continue;
        }
        let full = super::complete::expand(path);
        let full = if full.is_absolute() {
            full
        } else {
            cwd.join(full)
        };
        let Ok(meta) = std::fs::metadata(&full) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let bytes = meta.len();
        let whole = (bytes <= ATTACH_WHOLE_MAX_BYTES)
            .then(|| std::fs::read(&full).ok())
            .flatten()
            .and_then(|b| String::from_utf8(b).ok())
            .filter(|s| !s.contains('\0'));
        match whole {
            Some(content) => {
                let lines = content.lines().count();
                blocks.push_str(&format!("\n\n<file path=\"{path}\">\n{content}"));
                if !content.ends_with('\n') {
                    blocks.push('\n');
                }
                blocks.push_str("</file>");
                attached.push(Attachment {
                    path: path.to_string(),
                    lines: Some(lines),
                    bytes,
                });
            }
            None => {
                blocks.push_str(&format!(
                    "\n\n(The user mentioned the file {path} ({bytes} bytes); it is too large or not text to include. Use `read {path} --offset N --limit N` or `search` to look at the parts you need.)"
                ));
                attached.push(Attachment {
                    path: path.to_string(),
                    lines: None,
                    bytes,
                });
            }
        }
    }
    (format!("{text}{blocks}"), attached)
}

/// The dim line printed for each attachment.
pub fn attachment_note(a: &Attachment) -> String {
    match a.lines {
        Some(lines) => {
            let noun = if lines == 1 { "line" } else { "lines" };
            format!("⎘ attached {} ({lines} {noun})\n", a.path)
        }
        None => format!(
            "⎘ mentioned {} ({} bytes, too large to attach; the model can read it)\n",
            a.path, a.bytes
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_go_in_whole_large_ones_as_a_hint() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "alpha\nbeta\n").unwrap();
        std::fs::write(
            dir.path().join("big.log"),
            "x".repeat(ATTACH_WHOLE_MAX_BYTES as usize + 1),
        )
        .unwrap();
        let (text, attached) =
            attach_mentions("see @notes.md, and @big.log and @nobody", dir.path());
        assert!(
            text.starts_with("see @notes.md, and @big.log and @nobody\n\n<file path=\"notes.md\">\nalpha\nbeta\n</file>"),
            "{text}"
        );
        assert!(text.contains("read big.log --offset"), "{text}");
        assert_eq!(attached.len(), 2);
        assert_eq!(attached[0].lines, Some(2));
        assert_eq!(attached[1].lines, None);
        assert_eq!(attach_mentions("hi @nobody", dir.path()).1, vec![]);
    }
}
