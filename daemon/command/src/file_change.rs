//! [`FileChange`]: what a command changed in one file, for the user's client to show under the
//! tool line — a unified diff of the file's own lines before and after, with their real line
//! numbers (`@@ -12,3 +12,4 @@`), computed where the change is made (the daemon reads the file
//! before it writes it). The model never reads it; it gets the command's own result text.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;
/// Files larger than this (before plus after) are not diffed: the client shows the tool line.
pub const DIFF_INPUT_MAX_BYTES: usize = 2 * 1024 * 1024;
/// A diff that takes longer than this gives up on the finest alignment (still correct).
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path as the command was given it (relative to the session's folder, or `~/…`).
    pub path: String,
    /// The unified diff's hunks: `@@ -a,b +c,d @@` headers, then lines starting with ` `, `-` or
    /// `+`, each ending in a newline.
    pub hunks: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

impl FileChange {
    /// The change from `before` (empty for a new file) to `after`; `None` when nothing changed
    /// or the file is too large to diff ([`DIFF_INPUT_MAX_BYTES`]).
    pub fn between(path: &str, before: &str, after: &str) -> Option<FileChange> {
        if before == after || before.len() + after.len() > DIFF_INPUT_MAX_BYTES {
            return None;
        }
        let diff = TextDiff::configure()
            .timeout(DIFF_DEADLINE)
            .diff_lines(before, after);
        let (mut added, mut removed) = (0u32, 0u32);
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => added += 1,
                ChangeTag::Delete => removed += 1,
                ChangeTag::Equal => {}
            }
        }
        let mut hunks = diff
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .missing_newline_hint(false)
            .to_string();
        if !hunks.is_empty() && !hunks.ends_with('\n') {
            hunks.push('\n');
        }
        Some(FileChange {
            path: path.to_string(),
            hunks,
            added,
            removed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_edit_deep_in_a_file_shows_its_real_line_numbers_and_context() {
        let before: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 20\n", "line twenty\nline 20b\n");
        let c = FileChange::between("src/a.txt", &before, &after).unwrap();
        assert_eq!((c.added, c.removed), (2, 1));
        assert_eq!(
            c.hunks,
            "@@ -17,7 +17,8 @@\n line 17\n line 18\n line 19\n-line 20\n+line twenty\n+line 20b\n line 21\n line 22\n line 23\n"
        );
    }

    #[test]
    fn a_write_over_a_file_shows_only_the_lines_that_differ() {
        let before = "a\nb\nc\n";
        let after = "a\nB\nc\n";
        let c = FileChange::between("f", before, after).unwrap();
        assert_eq!((c.added, c.removed), (1, 1));
        assert!(c.hunks.contains("-b\n+B\n"), "{}", c.hunks);
        assert!(
            !c.hunks.contains("+a"),
            "unchanged lines are context: {}",
            c.hunks
        );
    }

    #[test]
    fn a_new_file_is_all_additions_and_nothing_changed_is_no_change() {
        let c = FileChange::between("new.txt", "", "x\ny\n").unwrap();
        assert_eq!((c.added, c.removed), (2, 0));
        assert!(c.hunks.starts_with("@@ -0,0 +1,2 @@\n"), "{}", c.hunks);
        assert_eq!(FileChange::between("f", "same\n", "same\n"), None);
        let big = "x".repeat(DIFF_INPUT_MAX_BYTES);
        assert_eq!(FileChange::between("f", &big, "y"), None);
    }
}
