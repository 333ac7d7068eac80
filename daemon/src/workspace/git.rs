//! Git facts for the system prompt's environment section: whether the session's folder is in a
//! repository, its branch, how many files are changed, and the last commit subjects — probed
//! once, when the session's prompt is fixed. At each later turn a new probe is compared with what
//! the model was last told ([`GitFacts::changes_since`]), and what differs (branch, changed files
//! by name, new commits) goes in that turn's message instead, so the prompt stays byte-identical.
//!
//! Never slow and never in the way: a folder with no `.git` above it costs no process; inside
//! one, `git status` and `git log` run side by side under one deadline (each in its own process
//! group, killed when the deadline passes, the facts then left out), without optional locks so
//! they never hold `index.lock` while the agent runs git itself.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long all git calls of one probe may take together.
pub const GIT_PROBE_DEADLINE: Duration = Duration::from_millis(300);
/// Commit subjects listed.
const RECENT_COMMITS: usize = 3;
/// Longest subject kept, in characters.
const SUBJECT_MAX_CHARS: usize = 100;
/// Most output read from one git call.
const OUTPUT_MAX_BYTES: u64 = 256 * 1024;
/// Changed files named in a turn's note (the count covers the rest).
const CHANGED_FILES_LISTED: usize = 20;

/// What the prompt says about the repository around the session's folder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GitFacts {
    /// No `.git` in the folder or above it.
    NoRepository,
    Repository {
        /// `None`: detached HEAD, or git did not answer in time.
        branch: Option<String>,
        /// Changed and untracked files as `git status --porcelain` lines (`" M a.rs"`,
        /// `"?? b.txt"`); `None` when git did not answer in time.
        changed: Option<Vec<String>>,
        /// Newest first.
        recent_commits: Vec<String>,
    },
}

impl GitFacts {
    /// Probes `cwd`, giving git at most `deadline` in all.
    pub fn probe(cwd: &Path, deadline: Duration) -> GitFacts {
        if !cwd.ancestors().any(|d| d.join(".git").exists()) {
            return GitFacts::NoRepository;
        }
        let until = Instant::now() + deadline;
        let status = spawn(cwd, &["status", "--porcelain=v1", "--branch"]);
        let log = spawn(
            cwd,
            &[
                "log",
                &format!("-{RECENT_COMMITS}"),
                "--format=%s",
                "--no-show-signature",
            ],
        );
        let status = status.and_then(|c| c.finish(until));
        let log = log.and_then(|c| c.finish(until));
        let (branch, changed) = match status {
            Some(text) => {
                let mut lines = text.lines();
                let branch = lines.next().and_then(branch_of);
                let changed = lines
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string)
                    .collect();
                (branch, Some(changed))
            }
            None => (None, None),
        };
        let recent_commits = log
            .map(|text| {
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .take(RECENT_COMMITS)
                    .map(|l| cut(l.trim()))
                    .collect()
            })
            .unwrap_or_default();
        GitFacts::Repository {
            branch,
            changed,
            recent_commits,
        }
    }

    /// What a turn's message says when the repository is not as `told` (the facts the model
    /// last heard): the state now, the changed files by name and the new commits; `None` when
    /// nothing it would say differs, or when git did not answer in time.
    pub fn changes_since(&self, told: &GitFacts) -> Option<String> {
        if self == told {
            return None;
        }
        let GitFacts::Repository {
            changed: Some(changed),
            recent_commits,
            ..
        } = self
        else {
            return match (self, told) {
                (GitFacts::NoRepository, GitFacts::Repository { .. }) => {
                    Some("Git: the folder is no longer in a repository.\n".to_string())
                }
                _ => None,
            };
        };
        let mut out = format!(
            "Git now (it changed since the session began): {}.\n",
            self.summary()
        );
        if !changed.is_empty() {
            out.push_str("Changed files:\n");
            for line in changed.iter().take(CHANGED_FILES_LISTED) {
                out.push_str(line);
                out.push('\n');
            }
            if changed.len() > CHANGED_FILES_LISTED {
                out.push_str(&format!(
                    "(and {} more: `git status` lists them)\n",
                    changed.len() - CHANGED_FILES_LISTED
                ));
            }
        }
        let before: &[String] = match told {
            GitFacts::Repository { recent_commits, .. } => recent_commits,
            GitFacts::NoRepository => &[],
        };
        let new: Vec<String> = recent_commits
            .iter()
            .take_while(|c| before.first().is_none_or(|b| b != *c))
            .map(|s| format!("\"{s}\""))
            .collect();
        if !new.is_empty() && recent_commits.as_slice() != before {
            out.push_str(&format!("Newest commits: {}\n", new.join("; ")));
        }
        Some(out)
    }

    /// `branch main, 2 changed files` (what the prompt's git line holds in its parentheses).
    fn summary(&self) -> String {
        let GitFacts::Repository {
            branch, changed, ..
        } = self
        else {
            return "no repository".to_string();
        };
        let mut facts = Vec::new();
        facts.push(match branch {
            Some(b) => format!("branch {b}"),
            None => "no branch (detached HEAD or unknown)".to_string(),
        });
        if let Some(changed) = changed {
            facts.push(match changed.len() {
                0 => "no uncommitted changes".to_string(),
                1 => "1 changed file".to_string(),
                n => format!("{n} changed files"),
            });
        }
        facts.join(", ")
    }

    /// The environment section's lines (each ending in a newline).
    pub fn prompt_lines(&self) -> String {
        match self {
            GitFacts::NoRepository => "- Git repository: no\n".to_string(),
            GitFacts::Repository { recent_commits, .. } => {
                let mut out = format!("- Git repository: yes ({})\n", self.summary());
                if !recent_commits.is_empty() {
                    let quoted: Vec<String> =
                        recent_commits.iter().map(|s| format!("\"{s}\"")).collect();
                    out.push_str(&format!("- Recent commits: {}\n", quoted.join("; ")));
                }
                out
            }
        }
    }
}

/// `## main...origin/main [ahead 1]` → `main`; `## No commits yet on main` → `main`;
/// `## HEAD (no branch)` → none.
fn branch_of(line: &str) -> Option<String> {
    let rest = line.strip_prefix("## ")?;
    let rest = rest
        .strip_prefix("No commits yet on ")
        .or_else(|| rest.strip_prefix("Initial commit on "))
        .unwrap_or(rest);
    if rest.starts_with("HEAD (no branch)") {
        return None;
    }
    let name = rest.split("...").next()?.split(' ').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

fn cut(subject: &str) -> String {
    if subject.chars().count() <= SUBJECT_MAX_CHARS {
        return subject.to_string();
    }
    let kept: String = subject.chars().take(SUBJECT_MAX_CHARS - 1).collect();
    format!("{kept}…")
}

/// A git call whose output a thread collects.
struct Running {
    pgid: i32,
    output: mpsc::Receiver<Option<String>>,
}

fn spawn(cwd: &Path, args: &[&str]) -> Option<Running> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["-c", "core.quotePath=false", "-c", "color.ui=false"])
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let pgid = i32::try_from(child.id()).ok()?;
    let stdout = child.stdout.take()?;
    let (tx, output) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let read = stdout
            .take(OUTPUT_MAX_BYTES)
            .read_to_string(&mut text)
            .is_ok();
        let ok = child.wait().is_ok_and(|s| s.success());
        let _ = tx.send((read && ok).then_some(text));
    });
    Some(Running { pgid, output })
}

impl Running {
    /// The output of a successful call, or `None` when it failed or `until` passed (then its
    /// process group is killed; the collecting thread reaps it).
    fn finish(self, until: Instant) -> Option<String> {
        let left = until.saturating_duration_since(Instant::now());
        match self.output.recv_timeout(left) {
            Ok(out) => out,
            Err(_) => {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(self.pgid),
                    nix::sys::signal::Signal::SIGKILL,
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn branch_lines() {
        assert_eq!(
            branch_of("## main...origin/main [ahead 1]"),
            Some("main".into())
        );
        assert_eq!(branch_of("## No commits yet on dev"), Some("dev".into()));
        assert_eq!(branch_of("## feature/x"), Some("feature/x".into()));
        assert_eq!(branch_of("## HEAD (no branch)"), None);
    }

    #[test]
    fn a_repository_and_a_plain_folder() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(
            GitFacts::probe(&plain, GIT_PROBE_DEADLINE),
            GitFacts::NoRepository
        );
        assert_eq!(
            GitFacts::NoRepository.prompt_lines(),
            "- Git repository: no\n"
        );

        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "trunk"]);
        std::fs::write(repo.join("a.txt"), "a").unwrap();
        git(&repo, &["add", "a.txt"]);
        git(&repo, &["commit", "-q", "-m", "Add the first file"]);
        std::fs::write(repo.join("b.txt"), "b").unwrap();
        let facts = GitFacts::probe(&repo, Duration::from_secs(5));
        let lines = facts.prompt_lines();
        assert!(
            lines.contains("- Git repository: yes (branch trunk, 1 changed file)"),
            "{lines}"
        );
        assert!(lines.contains("\"Add the first file\""), "{lines}");
        assert_eq!(facts.changes_since(&facts), None);

        std::fs::write(repo.join("a.txt"), "changed").unwrap();
        git(&repo, &["add", "b.txt"]);
        git(&repo, &["commit", "-q", "-m", "Add b"]);
        let later = GitFacts::probe(&repo, Duration::from_secs(5));
        let note = later.changes_since(&facts).unwrap();
        assert_eq!(
            note,
            "Git now (it changed since the session began): branch trunk, 1 changed file.\n\
             Changed files:\n M a.txt\nNewest commits: \"Add b\"\n"
        );
    }
}
