//! A string matching a schema's `pattern`, for `--help` examples: enough of regular expressions
//! for the patterns tool schemas use (`^[A-Z]{3}$`, `^\d{4}-\d{2}-\d{2}$`, `^[a-z0-9_-]+$`,
//! `^(asc|desc)$`): anchors, literals, escapes (`\d \w \s \.`…), classes with ranges, `.`, groups
//! with alternatives (the first is taken) and the quantifiers `? * + {n} {n,} {n,m}` (the least
//! count, at least one for `*`). Anything else (look-arounds, back-references, negated classes)
//! gives `None`: the caller keeps its own sample rather than guess.

/// A string the (simple) `pattern` matches, or `None` when the pattern is beyond this module.
pub fn sample_matching(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut p = Parser { chars, pos: 0 };
    let out = p.alternatives()?;
    (p.pos == p.chars.len()).then_some(out)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    /// `a|b|c`: the first alternative's sample; the others are only checked to parse.
    fn alternatives(&mut self) -> Option<String> {
        let first = self.sequence()?;
        while self.peek() == Some('|') {
            self.pos += 1;
            self.sequence()?;
        }
        Some(first)
    }

    fn sequence(&mut self) -> Option<String> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            match c {
                '|' | ')' => break,
                '^' | '$' => {
                    self.pos += 1;
                }
                _ => {
                    let atom = self.atom()?;
                    let count = self.quantifier()?;
                    for _ in 0..count {
                        out.push_str(&atom);
                    }
                }
            }
        }
        Some(out)
    }

    fn atom(&mut self) -> Option<String> {
        match self.next()? {
            '(' => {
                // A non-capturing group `(?:…)` is a group; other `(?…)` forms are not handled.
                if self.peek() == Some('?') {
                    self.pos += 1;
                    if self.next()? != ':' {
                        return None;
                    }
                }
                let inner = self.alternatives()?;
                (self.next()? == ')').then_some(inner)
            }
            '[' => self.class().map(String::from),
            '\\' => escape(self.next()?).map(String::from),
            '.' => Some("a".into()),
            c if "*+?{}]".contains(c) => None,
            c => Some(c.to_string()),
        }
    }

    /// `[a-z0-9_]`: the first character the class allows; a negated class is not handled.
    fn class(&mut self) -> Option<char> {
        if self.peek() == Some('^') {
            return None;
        }
        let mut first = None;
        loop {
            let c = match self.next()? {
                ']' if first.is_some() => return first,
                '\\' => escape(self.next()?)?,
                c => c,
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|n| *n != ']') {
                self.pos += 1;
                let end = match self.next()? {
                    '\\' => escape(self.next()?)?,
                    e => e,
                };
                if end < c {
                    return None;
                }
            }
            first.get_or_insert(c);
        }
    }

    /// How many times to repeat the atom before it.
    fn quantifier(&mut self) -> Option<usize> {
        let count = match self.peek() {
            Some('?') => 0,
            Some('*' | '+') => 1,
            Some('{') => {
                self.pos += 1;
                let mut digits = String::new();
                while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    digits.push(c);
                    self.pos += 1;
                }
                while let Some(c) = self.peek().filter(|c| *c == ',' || c.is_ascii_digit()) {
                    let _ = c;
                    self.pos += 1;
                }
                if self.peek() != Some('}') {
                    return None;
                }
                let n = digits.parse::<usize>().ok()?;
                // Bounded so a pattern cannot make a huge example.
                (n <= 256).then_some(n)?
            }
            _ => return Some(1),
        };
        self.pos += 1;
        // A lazy or possessive marker changes nothing here.
        if matches!(self.peek(), Some('?' | '+')) {
            self.pos += 1;
        }
        Some(count)
    }
}

/// The character an escape stands for (a class escape: one member of it).
fn escape(c: char) -> Option<char> {
    match c {
        'd' => Some('1'),
        'w' => Some('a'),
        's' => Some(' '),
        'n' => Some('\n'),
        't' => Some('\t'),
        'D' | 'W' | 'S' | 'b' | 'B' | 'A' | 'z' | 'Z' => None,
        c if c.is_ascii_alphanumeric() => None,
        c => Some(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_match_the_patterns_tools_use() {
        let cases = [
            (r"^[A-Z]{3}$", "AAA"),
            (r"^\d{4}-\d{2}-\d{2}$", "1111-11-11"),
            (r"^[a-z0-9_-]+$", "a"),
            (r"^(asc|desc)$", "asc"),
            (r"^v\d+\.\d+(\.\d+)?$", "v1.1"),
            (r"^[\w.-]+@[\w-]+\.com$", "a@a.com"),
            (r"^(?:[A-Za-z]+/)?[A-Za-z_]+$", "A"),
            (r"^[^/]+/[^/]+$", ""),
        ];
        for (pattern, want) in cases {
            match sample_matching(pattern) {
                Some(got) => {
                    assert_eq!(got, want, "{pattern}");
                    let re = regex::Regex::new(pattern).unwrap();
                    assert!(re.is_match(&got), "{pattern} does not match {got:?}");
                }
                None => assert_eq!(want, "", "{pattern}: no sample"),
            }
        }
    }

    #[test]
    fn what_it_cannot_read_gives_none() {
        for p in [
            r"(?=a)b",
            r"(a)\1",
            r"[^a]",
            r"a{99999}",
            r"\bword",
            r"a)",
            r"[z-a]",
        ] {
            assert_eq!(sample_matching(p), None, "{p}");
        }
    }
}
