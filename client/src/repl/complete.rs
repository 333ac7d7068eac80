//! Tab completion at the prompt: slash commands (listed with their descriptions), and paths —
//! after `@` (a file to attach) or in any word that looks like a path (`./`, `../`, `~/`, `/`, or
//! containing `/`). Pure functions of the line and the filesystem, used by rustyline's helper.

use parking_lot::RwLock;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustyline::completion::Pair;

use super::commands::HELP;

/// Candidates shown when many paths match.
const PATH_CANDIDATES_MAX: usize = 200;

/// Slash commands known only at run time (`/<skill>` for user-invocable skills): name and
/// what it shows beside it. The REPL refreshes it; the input thread reads it on Tab.
pub type SlashExtras = Arc<RwLock<Vec<(String, String)>>>;

/// Where the completed word starts and its candidates (built-in commands only).
#[cfg(test)]
pub fn complete(line: &str, pos: usize) -> (usize, Vec<Pair>) {
    complete_with(line, pos, &[])
}

/// [`complete`], with the run-time slash commands `extras` offered after the built-in ones.
pub fn complete_with(line: &str, pos: usize, extras: &[(String, String)]) -> (usize, Vec<Pair>) {
    let head = &line[..pos.min(line.len())];
    if head.starts_with('/') && !head.contains(char::is_whitespace) {
        return (0, slash_candidates(head, extras));
    }
    let start = head.rfind(char::is_whitespace).map_or(0, |i| {
        i + head[i..].chars().next().map_or(1, char::len_utf8)
    });
    let word = &head[start..];
    if let Some(path) = word.strip_prefix('@') {
        return (start + 1, path_candidates(path));
    }
    if looks_like_path(word) {
        return (start, path_candidates(word));
    }
    (pos, Vec::new())
}

/// Every slash command name with its description.
pub fn slash_commands() -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (usage, what) in HELP {
        // "/exit, /quit" names two commands.
        for name in usage
            .split(", ")
            .filter_map(|u| u.split_whitespace().next())
        {
            let name = name.trim_end_matches(',').to_string();
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, *what));
            }
        }
    }
    out
}

fn slash_candidates(prefix: &str, extras: &[(String, String)]) -> Vec<Pair> {
    let prefix = prefix.to_lowercase();
    let mut commands: Vec<(String, &str)> = slash_commands()
        .into_iter()
        .filter(|(name, _)| name.starts_with(&prefix))
        .collect();
    for (name, what) in extras {
        if name.starts_with(&prefix) && !commands.iter().any(|(n, _)| n == name) {
            commands.push((name.clone(), what.as_str()));
        }
    }
    let width = commands.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    commands
        .into_iter()
        .map(|(name, what)| Pair {
            display: format!("{name:<width$}  {what}"),
            replacement: name,
        })
        .collect()
}

fn looks_like_path(word: &str) -> bool {
    word.starts_with("./")
        || word.starts_with("../")
        || word.starts_with("~/")
        || word.starts_with('/')
        || word.contains('/')
}

/// Files and folders whose path starts with `partial` (folders end in `/`).
fn path_candidates(partial: &str) -> Vec<Pair> {
    let (dir_part, prefix) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let dir = expand(dir_part);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<(String, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let hidden_unasked = name.starts_with('.') && !prefix.starts_with('.');
            (name.starts_with(prefix) && !hidden_unasked).then(|| (name, e.path().is_dir()))
        })
        .collect();
    names.sort();
    names.truncate(PATH_CANDIDATES_MAX);
    names
        .into_iter()
        .map(|(name, is_dir)| {
            let slash = if is_dir { "/" } else { "" };
            Pair {
                display: format!("{name}{slash}"),
                replacement: format!("{dir_part}{name}{slash}"),
            }
        })
        .collect()
}

/// `~/x` → `$HOME/x`; empty → the current folder.
pub fn expand(path: &str) -> PathBuf {
    if path.is_empty() {
        return PathBuf::from(".");
    }
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return Path::new(&home).join(rest);
    }
    PathBuf::from(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replacements(line: &str) -> (usize, Vec<String>) {
        let (start, pairs) = complete(line, line.len());
        (start, pairs.into_iter().map(|p| p.replacement).collect())
    }

    #[test]
    fn slash_commands_complete_with_descriptions() {
        assert_eq!(replacements("/he"), (0, vec!["/help".to_string()]));
        let (_, pairs) = complete("/q", 2);
        assert_eq!(pairs[0].replacement, "/quit");
        assert!(pairs[0].display.contains("leave"), "{}", pairs[0].display);
        assert!(replacements("/help me").1.is_empty());
    }

    #[test]
    fn user_invocable_skills_complete_with_their_argument_hint() {
        let extras = vec![(
            "/fix-issue".to_string(),
            "[issue-number]  Fix a GitHub issue".to_string(),
        )];
        let (_, pairs) = complete_with("/fi", 3, &extras);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].replacement, "/fix-issue");
        assert!(
            pairs[0].display.contains("[issue-number]"),
            "{}",
            pairs[0].display
        );
        // Built-in commands keep precedence over a skill of the same name.
        let clash = vec![("/help".to_string(), "a skill".to_string())];
        let (_, pairs) = complete_with("/help", 5, &clash);
        assert_eq!(pairs.len(), 1);
        assert!(pairs[0].display.contains("show this list"));
    }

    #[test]
    fn paths_complete_after_at_and_in_path_words() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("notes.md"), "").unwrap();
        let root = dir.path().display().to_string();
        let line = format!("look at @{root}/sr");
        let (start, got) = replacements(&line);
        assert_eq!(start, "look at @".len());
        assert_eq!(got, vec![format!("{root}/src/")]);
        let line = format!("cat {root}/src/m");
        assert_eq!(replacements(&line).1, vec![format!("{root}/src/main.rs")]);
        assert!(replacements("plain words").1.is_empty());
    }
}
