//! What an `edit` or `write` call changed, as a coloured diff under the tool line. The daemon
//! computes it from the file before and after (`FileChange` in the call's `ToolFinished`: the
//! file's own lines with their real numbers, a rewrite showing only the lines that differ); this
//! only draws it. Long diffs are cut.

use synapse_session::FileChange;

use super::theme::Theme;
use super::width::fit;

/// Diff lines shown before the rest is summarised.
pub const DIFF_LINES_MAX: usize = 24;

/// The diff block for `change`, indented under the tool line, no line wider than `width`.
pub fn diff_block(theme: &Theme, change: &FileChange, width: usize) -> String {
    let header = format!(
        "  ⎿  {} (+{} -{})",
        change.path, change.added, change.removed
    );
    let mut out = theme.dim(&fit(&header, width));
    out.push('\n');
    let lines: Vec<&str> = change.hunks.lines().collect();
    let room = width.saturating_sub(6).max(1);
    for line in lines.iter().take(DIFF_LINES_MAX) {
        let shown = format!("     {}", fit(&line.replace('\t', "    "), room));
        out.push_str(&match line.as_bytes().first() {
            Some(b'-') => theme.red(&shown),
            Some(b'+') => theme.green(&shown),
            _ => theme.dim(&shown),
        });
        out.push('\n');
    }
    if lines.len() > DIFF_LINES_MAX {
        let more = lines.len() - DIFF_LINES_MAX;
        out.push_str(&theme.dim(&format!("     … +{more} diff lines\n")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(hunks: &str, added: u32, removed: u32) -> FileChange {
        FileChange {
            path: "src/a.txt".into(),
            hunks: hunks.into(),
            added,
            removed,
        }
    }

    #[test]
    fn the_daemons_hunks_are_drawn_with_their_line_numbers() {
        let block = diff_block(
            &Theme::plain(),
            &change(
                "@@ -17,3 +17,3 @@\n line 17\n-line 18\n+line eighteen\n",
                1,
                1,
            ),
            usize::MAX,
        );
        assert_eq!(
            block,
            "  ⎿  src/a.txt (+1 -1)\n     @@ -17,3 +17,3 @@\n      line 17\n     -line 18\n     +line eighteen\n"
        );
    }

    #[test]
    fn a_long_diff_is_cut_and_says_how_much_is_left() {
        let hunks: String = std::iter::once("@@ -0,0 +1,40 @@\n".to_string())
            .chain((1..=40).map(|i| format!("+line {i}\n")))
            .collect();
        let block = diff_block(&Theme::plain(), &change(&hunks, 40, 0), 22);
        assert_eq!(block.lines().count(), 1 + DIFF_LINES_MAX + 1);
        assert!(block.ends_with("     … +17 diff lines\n"), "{block}");
        assert!(
            block.lines().all(|l| super::super::width::columns(l) <= 22),
            "{block}"
        );
    }
}
