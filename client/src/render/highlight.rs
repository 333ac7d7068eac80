//! Syntax highlighting of fenced code blocks in the model's answers (syntect, its default
//! syntaxes and the `base16-ocean.dark` theme), as 24-bit colour escapes. Loaded on the first
//! code block, not at start-up. A language syntect does not know, or no colour (`NO_COLOR`, a
//! pipe), leaves the block to the Markdown renderer.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::{LinesWithEndings, as_24_bit_terminal_escaped};

/// Blocks longer than this many bytes are shown unhighlighted (highlighting is per line and
/// costs milliseconds per hundred lines).
const HIGHLIGHT_MAX_BYTES: usize = 200_000;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Theme,
}

fn assets() -> Option<&'static Assets> {
    static ASSETS: OnceLock<Option<Assets>> = OnceLock::new();
    ASSETS
        .get_or_init(|| {
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove("base16-ocean.dark")?;
            Some(Assets {
                syntaxes: SyntaxSet::load_defaults_newlines(),
                theme,
            })
        })
        .as_ref()
}

/// `code` highlighted as `lang` (a fence's info string: `rust`, `py`, `sh`, …), each line ending
/// with a colour reset; `None` when the language is unknown or the block too large.
pub fn highlight(lang: &str, code: &str) -> Option<String> {
    let token = lang.split_whitespace().next()?.trim_start_matches('.');
    if token.is_empty() || code.len() > HIGHLIGHT_MAX_BYTES {
        return None;
    }
    let assets = assets()?;
    let syntax = assets.syntaxes.find_syntax_by_token(token)?;
    let mut lines = HighlightLines::new(syntax, &assets.theme);
    let mut out = String::with_capacity(code.len() * 3);
    for line in LinesWithEndings::from(code) {
        let ranges = lines.highlight_line(line, &assets.syntaxes).ok()?;
        let text = as_24_bit_terminal_escaped(&ranges, false);
        out.push_str(text.trim_end_matches(['\n', '\r']));
        out.push_str("\x1b[0m\n");
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_are_coloured_and_unknown_ones_left_alone() {
        let out = highlight("rust", "fn main() {\n    let x = \"hi\";\n}\n").unwrap();
        assert!(out.contains("\x1b[38;2;"), "{out:?}");
        assert_eq!(out.lines().count(), 3);
        assert!(out.lines().all(|l| l.ends_with("\x1b[0m")), "{out:?}");
        // The text itself is all there once the escapes are gone.
        let plain: String = strip(&out);
        assert_eq!(plain, "fn main() {\n    let x = \"hi\";\n}\n");
        assert!(highlight("py", "print('x')\n").is_some());
        assert!(highlight("no-such-language", "x\n").is_none());
        assert!(highlight("", "x\n").is_none());
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
