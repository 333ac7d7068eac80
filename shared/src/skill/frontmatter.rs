//! Splits a SKILL.md into its YAML frontmatter and Markdown body. We cut the `---` block
//! ourselves (serde-saphyr only sees the YAML) so line numbers can be mapped back to the file.

use std::path::Path;

use super::error::SkillFormatError;

/// The two halves of a SKILL.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the two `---` lines.
    pub yaml: &'a str,
    /// 1-based file line of the first YAML line.
    pub yaml_line: usize,
    /// Everything after the closing `---` line.
    pub body: &'a str,
    /// 1-based file line where the body starts.
    pub body_line: usize,
}

/// Cuts `text` at its frontmatter fences. A UTF-8 BOM and CRLF line ends are accepted; the block
/// may also be closed with `...` (YAML's document end marker).
pub fn split<'a>(path: &Path, text: &'a str) -> Result<Split<'a>, SkillFormatError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = LineIter { text, pos: 0 };
    let first = lines.next();
    if !matches!(first, Some((_, line)) if is_fence(line, false)) {
        return Err(SkillFormatError::MissingFrontmatter {
            path: path.to_path_buf(),
        });
    }
    let yaml_start = lines.pos;
    let mut line_no = 1;
    while let Some((start, line)) = lines.next() {
        line_no += 1;
        if is_fence(line, true) {
            return Ok(Split {
                yaml: &text[yaml_start..start],
                yaml_line: 2,
                body: &text[lines.pos..],
                body_line: line_no + 1,
            });
        }
    }
    Err(SkillFormatError::UnterminatedFrontmatter {
        path: path.to_path_buf(),
        line: 1,
    })
}

fn is_fence(line: &str, closing: bool) -> bool {
    let line = line.trim_end();
    line == "---" || (closing && line == "...")
}

/// Yields `(byte offset, line without its end)`; `pos` is the offset of the next line.
struct LineIter<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for LineIter<'a> {
    type Item = (usize, &'a str);
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let (line, advance) = match rest.find('\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.pos += advance;
        Some((start, line.strip_suffix('\r').unwrap_or(line)))
    }
}

/// The text of the first `# ` heading of a Markdown body, if any (used as the skill's title).
pub fn first_heading(body: &str) -> Option<&str> {
    let mut in_fence = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(h) = t.strip_prefix("# ") {
            let h = h.trim().trim_end_matches('#').trim();
            if !h.is_empty() {
                return Some(h);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn splits_yaml_and_body_with_lines() {
        let s = split(
            Path::new("S.md"),
            "\u{feff}---\r\nname: a\r\n---\r\n# T\nbody\n",
        )
        .unwrap();
        assert_eq!(s.yaml, "name: a\r\n");
        assert_eq!(s.body, "# T\nbody\n");
        assert_eq!(s.body_line, 4);
        assert_eq!(first_heading(s.body), Some("T"));
    }

    #[test]
    fn empty_block_and_dots_close() {
        let s = split(Path::new("S.md"), "---\n...\nx").unwrap();
        assert_eq!((s.yaml, s.body), ("", "x"));
    }

    #[test]
    fn missing_and_unterminated() {
        let e = split(Path::new("S.md"), "# no frontmatter\n").unwrap_err();
        assert!(
            e.to_string().starts_with("S.md:1: SKILL.md must start"),
            "{e}"
        );
        let e = split(Path::new("S.md"), "---\nname: a\n").unwrap_err();
        assert!(e.to_string().contains("never closed"), "{e}");
    }

    #[test]
    fn heading_skips_code_fences() {
        assert_eq!(
            first_heading("```\n# not\n```\n## sub\n# Yes #\n"),
            Some("Yes")
        );
        assert_eq!(first_heading("no heading"), None);
    }
}
