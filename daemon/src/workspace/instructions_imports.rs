//! Where an instruction file's `@path` import may lead, and what is never given to the model.
//!
//! [`import_paths`] finds Claude Code's `@path` words (outside code blocks and spans), with the
//! line each stands on. [`refusal`] decides whether a resolved import may be read: only inside
//! the project and the user-level instruction folders (`~/.claude`, `~/.codex`, `$SYNAPSE_HOME`),
//! and never a credential store (`.credentials.json`, `auth.json`, keys, `.env`, `.netrc`, …) or
//! a session log (`~/.claude/projects/**`, `$SYNAPSE_HOME/sessions/**`, `*.jsonl` there) —
//! wherever the import comes from, and whatever a symlink makes of the name. [`looks_binary`]
//! refuses content that is not text. Each refusal becomes a [`Skipped`] the user is shown;
//! the model sees none of the file.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use super::Places;

/// The folders of the home that hold the user's own instruction files.
const USER_INSTRUCTION_FOLDERS: [&str; 2] = [".claude", ".codex"];
/// Share of characters (of the first ones) that may be control characters or undecodable bytes
/// in text; above it the content counts as binary.
const BINARY_SHARE_MAX_PERCENT: usize = 10;
/// Characters looked at by [`looks_binary`].
const BINARY_SNIFF_CHARS: usize = 8 * 1024;

/// One `@path` word of an instruction file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The resolved path (`~/` against the home, else against the importing file's folder).
    pub path: PathBuf,
    /// The word as written, without its `@`.
    pub raw: String,
    /// Its line in the importing file (from 1).
    pub line: usize,
}

/// An instruction file or import that was not given to the model, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The importing file (as shown) and the import's line; `None` for a file looked for by
    /// name (an `AGENTS.md`) that was itself refused.
    pub from: Option<(String, usize)>,
    /// The import as written (`~/.claude/.credentials.json`), or the refused file as shown.
    pub what: String,
    pub why: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.from {
            Some((file, line)) => write!(
                f,
                "{file}:{line}: `@{}` not imported: {}",
                self.what, self.why
            ),
            None => write!(f, "{} not given to the model: {}", self.what, self.why),
        }
    }
}

/// The files `text` imports with `@path` words (outside code blocks and spans), resolved
/// against `dir` (the importing file's folder), `~/` against the home.
pub fn import_paths(text: &str, dir: &Path, places: &Places) -> Vec<Import> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut in_code = false;
        for word in line.split_whitespace() {
            let ticks = word.matches('`').count();
            let starts_code = in_code;
            if ticks % 2 == 1 {
                in_code = !in_code;
            }
            if starts_code || ticks > 0 {
                continue;
            }
            let Some(raw) = word.strip_prefix('@') else {
                continue;
            };
            // Punctuation that ends a sentence is not part of the path.
            let raw = raw.trim_end_matches([',', ';', ':', ')', '!', '?', '.']);
            if raw.is_empty() {
                continue;
            }
            let path = match raw.strip_prefix("~/") {
                Some(rest) => match &places.home {
                    Some(home) => home.join(rest),
                    None => continue,
                },
                None => dir.join(raw),
            };
            out.push(Import {
                path: normalize(&path),
                raw: raw.to_owned(),
                line: index + 1,
            });
        }
    }
    out
}

/// The folders an import may be read within: the project, `~/.claude`, `~/.codex` and
/// `$SYNAPSE_HOME`.
pub fn import_folders(places: &Places) -> Vec<PathBuf> {
    let mut out = vec![places.root.clone()];
    if let Some(home) = &places.home {
        out.extend(USER_INSTRUCTION_FOLDERS.map(|f| home.join(f)));
    }
    out.extend(places.synapse_home.clone());
    out
}

/// Why `path` (an existing file, as named and as it really is) is never given to the model:
/// a credential store or a session log. `None` when it may be.
pub fn never_given(path: &Path, places: &Places) -> Option<&'static str> {
    let real = path.canonicalize().ok();
    [Some(path), real.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|p| secret_kind(p, places))
}

fn secret_kind(path: &Path, places: &Places) -> Option<&'static str> {
    let name = path.file_name()?.to_string_lossy().to_lowercase();
    let credential = name == ".credentials.json"
        || name == "auth.json"
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.starts_with("id_")
        || name == ".env"
        || name.starts_with(".env.")
        || name == ".netrc"
        || name == ".git-credentials"
        || name.starts_with("credentials");
    if credential {
        return Some("a credential store");
    }
    let synapse_home = places.synapse_home.as_ref();
    if synapse_home.is_some_and(|s| path.starts_with(s.join("mcp/oauth"))) {
        return Some("a credential store");
    }
    let mut log_folders: Vec<PathBuf> = Vec::new();
    if let Some(home) = &places.home {
        log_folders.push(home.join(".claude/projects"));
        log_folders.push(home.join(".codex/sessions"));
    }
    log_folders.extend(synapse_home.map(|s| s.join("sessions")));
    if log_folders.iter().any(|f| path.starts_with(f)) {
        return Some("a session log");
    }
    let jsonl = path.extension().is_some_and(|e| e == "jsonl");
    let user_folder = import_folders(places)
        .into_iter()
        .skip(1)
        .any(|f| path.starts_with(f));
    (jsonl && user_folder).then_some("a session log")
}

/// Whether `text` (the start of a file, undecodable bytes shown as U+FFFD) is not text: it holds
/// a NUL, or more than a tenth of its first characters are control characters or undecodable.
pub fn looks_binary(text: &str) -> bool {
    if text.contains('\0') {
        return true;
    }
    let mut seen = 0usize;
    let mut odd = 0usize;
    for c in text.chars().take(BINARY_SNIFF_CHARS) {
        seen += 1;
        if c == '\u{FFFD}' || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c')) {
            odd += 1;
        }
    }
    seen > 0 && odd * 100 > seen * BINARY_SHARE_MAX_PERCENT
}

/// `path` with `.` and `..` taken out lexically (so `../x` cannot pass a prefix check it fails).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn places() -> Places {
        Places {
            root: "/h/proj".into(),
            home: Some("/h".into()),
            synapse_home: Some("/h/.synapse".into()),
        }
    }

    #[test]
    fn credential_stores_and_session_logs_are_never_given() {
        let p = places();
        for (path, why) in [
            ("/h/.claude/.credentials.json", "a credential store"),
            ("/h/.codex/auth.json", "a credential store"),
            ("/h/proj/certs/server.PEM", "a credential store"),
            ("/h/proj/tls.key", "a credential store"),
            ("/h/proj/id_ed25519", "a credential store"),
            ("/h/proj/.env", "a credential store"),
            ("/h/proj/.env.production", "a credential store"),
            ("/h/proj/.netrc", "a credential store"),
            ("/h/proj/.git-credentials", "a credential store"),
            ("/h/proj/credentials.txt", "a credential store"),
            ("/h/.synapse/mcp/oauth/server.json", "a credential store"),
            ("/h/.claude/projects/-h-other/abc.md", "a session log"),
            ("/h/.claude/history.jsonl", "a session log"),
            ("/h/.codex/sessions/2026/x.md", "a session log"),
            ("/h/.synapse/sessions/s1.jsonl", "a session log"),
        ] {
            assert_eq!(never_given(Path::new(path), &p), Some(why), "{path}");
        }
        for path in [
            "/h/proj/docs/env.md",
            "/h/.claude/rules.md",
            "/h/proj/log.jsonl",
        ] {
            assert_eq!(never_given(Path::new(path), &p), None, "{path}");
        }
    }

    #[test]
    fn a_symlink_to_a_credential_store_is_one() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".credentials.json"), "{}").unwrap();
        std::os::unix::fs::symlink(d.path().join(".credentials.json"), d.path().join("a.md"))
            .unwrap();
        let p = Places {
            root: d.path().into(),
            home: None,
            synapse_home: None,
        };
        assert_eq!(
            never_given(&d.path().join("a.md"), &p),
            Some("a credential store")
        );
    }

    #[test]
    fn imports_carry_their_line_and_words_as_written() {
        let p = places();
        let got = import_paths(
            "one\n@~/.claude/x.md and @../y.md.\n`@z.md`",
            Path::new("/h/proj/sub"),
            &p,
        );
        assert_eq!(
            got,
            [
                Import {
                    path: "/h/.claude/x.md".into(),
                    raw: "~/.claude/x.md".into(),
                    line: 2
                },
                Import {
                    path: "/h/proj/y.md".into(),
                    raw: "../y.md".into(),
                    line: 2
                },
            ]
        );
    }

    #[test]
    fn nul_bytes_and_mostly_control_characters_are_binary_text_is_not() {
        assert!(looks_binary("abc\0def"));
        assert!(looks_binary(&"\u{1}\u{2}\u{3}x".repeat(100)));
        assert!(looks_binary(&"\u{FFFD}".repeat(50)));
        assert!(!looks_binary("# Rules\n\n- tabs\tand é ü 中文\r\n"));
        assert!(!looks_binary(""));
    }

    #[test]
    fn a_skipped_import_says_file_line_word_and_why() {
        let s = Skipped {
            from: Some(("CLAUDE.md".into(), 3)),
            what: "~/.claude/.credentials.json".into(),
            why: "a credential store".into(),
        };
        assert_eq!(
            s.to_string(),
            "CLAUDE.md:3: `@~/.claude/.credentials.json` not imported: a credential store"
        );
    }
}
