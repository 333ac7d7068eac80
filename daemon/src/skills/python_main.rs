//! Reads a Python module's top-level `if __name__ == "__main__":` block, without running
//! anything, to tell a program from a library module that refuses to be run: a block whose
//! statements only `raise` an exception built from literals (`raise RuntimeError("should not be
//! run directly")`), `pass` or hold a string is no entry point. `raise SystemExit(main())` calls
//! something, so it runs. Triple-quoted strings are skipped, so an example inside a docstring is
//! never taken for the real block.

/// What the module's `__main__` block does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainBlock {
    /// No top-level `if __name__ == "__main__":` line.
    Absent,
    /// The block only raises (or is empty): running the file does nothing useful.
    OnlyRaises,
    /// The block runs something: the file is a program.
    Runs,
}

/// Finds and judges the top-level `__main__` block of `source`.
pub fn main_block(source: &str) -> MainBlock {
    let lines: Vec<&str> = source.lines().collect();
    let mut in_string: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some(q) = in_string {
            if line.matches(q).count() % 2 == 1 {
                in_string = None;
            }
            continue;
        }
        if let Some(inline) = guard_line(line) {
            if !inline.is_empty() {
                return judge(&[inline.to_string()]);
            }
            return judge(&block_body(&lines[i + 1..]));
        }
        for q in ["\"\"\"", "'''"] {
            if line.matches(q).count() % 2 == 1 {
                in_string = Some(q);
                break;
            }
        }
    }
    MainBlock::Absent
}

/// `if __name__ == "__main__":` at column 0 (either quote, either order); `Some(rest)` holds
/// what follows the colon on the same line (empty for a block).
fn guard_line(line: &str) -> Option<&str> {
    let code = line.strip_prefix("if")?;
    if !code.starts_with([' ', '(']) {
        return None;
    }
    let colon = code.find(':')?;
    let cond: String = code[..colon]
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '\'' | '"'))
        .collect();
    if cond != "__name__==__main__" && cond != "__main__==__name__" {
        return None;
    }
    let rest = code[colon + 1..].trim();
    Some(if rest.starts_with('#') { "" } else { rest })
}

/// The statements of the block that starts at `lines[0]`: lines indented like its first line,
/// each joined with its deeper-indented (or bracket-closing) continuation lines.
fn block_body(lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut indent: Option<usize> = None;
    for line in lines {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let here = line.len() - t.len();
        if here == 0 {
            break;
        }
        let block = *indent.get_or_insert(here);
        if here < block {
            break;
        }
        match out.last_mut() {
            Some(last) if here > block || t.starts_with([')', ']', '}']) => {
                last.push(' ');
                last.push_str(t.trim_end());
            }
            _ => out.push(t.trim_end().to_string()),
        }
    }
    out
}

fn judge(statements: &[String]) -> MainBlock {
    if statements.is_empty() {
        return MainBlock::OnlyRaises;
    }
    let inert = |s: &str| {
        let s = s.split(" #").next().unwrap_or(s).trim();
        s == "pass"
            || s == "..."
            || s.starts_with(['"', '\''])
            || s.strip_prefix("raise")
                .is_some_and(|rest| rest.is_empty() || raise_builds_only(rest))
    };
    if statements.iter().all(|s| inert(s)) {
        MainBlock::OnlyRaises
    } else {
        MainBlock::Runs
    }
}

/// ` RuntimeError("text")` / ` ValueError` / `(Err)`: an exception name with literal arguments
/// (strings, numbers), no call of anything else.
fn raise_builds_only(rest: &str) -> bool {
    if !rest.starts_with([' ', '(']) {
        return false;
    }
    let rest = rest.trim();
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(rest.len());
    if name_end == 0 {
        return false;
    }
    let args = without_strings(&rest[name_end..]);
    let args = args.trim();
    if args.is_empty() {
        return true;
    }
    let Some(inner) = args.strip_prefix('(').and_then(|a| a.strip_suffix(')')) else {
        return false;
    };
    // A call inside (`main()`), or a line that continues on the next (we cannot see it).
    !inner.contains(['(', ')']) && !inner.ends_with('\\')
}

/// `text` with every string literal's content removed (quotes kept as `""`).
fn without_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' || c == '\'' {
            out.push_str("\"\"");
            let mut escaped = false;
            for d in chars.by_ref() {
                if escaped {
                    escaped = false;
                } else if d == '\\' {
                    escaped = true;
                } else if d == c {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_and_modules_that_refuse_to_run() {
        let raises = "\"\"\"Validators.\"\"\"\nclass V:\n    pass\n\nif __name__ == \"__main__\":\n    raise RuntimeError(\"This module should not be run directly.\")\n";
        assert_eq!(main_block(raises), MainBlock::OnlyRaises);
        let cli = "def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n";
        assert_eq!(main_block(cli), MainBlock::Runs);
        assert_eq!(
            main_block("if __name__ == '__main__':\n    raise SystemExit(main())\n"),
            MainBlock::Runs
        );
        assert_eq!(
            main_block("if __name__ == '__main__':  # no\n    # only a comment\n    pass\n"),
            MainBlock::OnlyRaises
        );
        assert_eq!(
            main_block("if \"__main__\" == __name__: raise ImportError(f'use {x} instead')\n"),
            MainBlock::OnlyRaises
        );
        assert_eq!(
            main_block(
                "if __name__ == '__main__':\n    import sys\n    sys.exit(run(sys.argv[1:]))\n"
            ),
            MainBlock::Runs
        );
        assert_eq!(
            main_block(
                "if __name__ == '__main__':\n    raise RuntimeError(\n        'not a program'\n    )\nX = 1\n"
            ),
            MainBlock::OnlyRaises
        );
        // An example inside a docstring is not the module's block; nested guards do not count.
        let doc = "\"\"\"Use it like this:\n\nif __name__ == '__main__':\n    raise RuntimeError('x')\n\"\"\"\ndef f():\n    if __name__ == '__main__':\n        pass\n";
        assert_eq!(main_block(doc), MainBlock::Absent);
        assert_eq!(main_block("import os\n"), MainBlock::Absent);
    }
}
