//! Properties of where writes land ([`super::landing`]):
//!
//! - against real bash: lines built from variables (`$SYNAPSE_HOME`, `$HOME`, `~`, variables
//!   set earlier in the line or by earlier lines of the same shell, `${x:-…}`) and `cd`s, then a
//!   write, are run in a scratch tree; every file bash really wrote is among the landings, or
//!   the check says a target is unresolved. Never a silent miss.
//! - the settings file reached through any chain of those forms is always a landing;
//! - any text gets an answer, never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;

use super::context::Context;
use super::landing::landings;
use super::resolve::ShellState;
use super::test_support::ctx;

/// Values a variable may be given.
const VALUES: &[&str] = &[
    "$SYNAPSE_HOME",
    "$HOME",
    "~",
    "~/.synapse",
    "$a",
    "$b",
    "${a:-$HOME}",
    "$a/.synapse",
    "$b/settings.json",
    "settings.json",
    ".synapse",
    "proj",
    "x",
];
/// Folders a `cd` may name (never above the scratch tree's home).
const DIRS: &[&str] = &[
    "$SYNAPSE_HOME",
    "~",
    "$a",
    "$b",
    ".synapse",
    "..",
    "proj",
    "$HOME/proj",
];
/// Where the final write goes.
const TARGETS: &[&str] = &[
    "$f",
    "${f}",
    "$a/settings.json",
    "$b",
    "settings.json",
    ".synapse/settings.json",
    "$SYNAPSE_HOME/$b",
    "~/$b",
    "\"$a\"/settings.json",
];

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            prop::sample::select(vec!["a", "b", "f"]),
            prop::sample::select(VALUES.to_vec()),
            any::<bool>(),
        )
            .prop_map(|(var, value, export)| if export {
                format!("export {var}={value}")
            } else {
                format!("{var}={value}")
            }),
        prop::sample::select(DIRS.to_vec()).prop_map(|d| format!("cd {d}")),
    ]
}

static SCRATCH: AtomicUsize = AtomicUsize::new(0);

/// A scratch tree: `<root>/home/u/{proj,.synapse}`, removed when dropped.
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("synapse-landing-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["home/u/proj/proj", "home/u/.synapse", "out"] {
            let _ = std::fs::create_dir_all(root.join(dir));
        }
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        Self { root }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home/u")
    }

    /// Every file below `home` holding `marker`.
    fn written(&self, marker: &str) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.home()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if std::fs::read_to_string(&path).is_ok_and(|s| s.trim() == marker) {
                    found.push(path);
                }
            }
        }
        found
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// Earlier lines of the session, then a line of statements ending in a write: whatever bash
    /// writes is a landing of that last line, or the check says it cannot resolve a target.
    #[test]
    fn every_file_bash_writes_is_a_landing_or_unresolved(
        start in prop::collection::vec(prop::sample::select(VALUES.to_vec()), 3),
        session in prop::collection::vec(statement(), 0..4),
        line in prop::collection::vec(statement(), 0..4),
        target in prop::sample::select(TARGETS.to_vec()),
        tee in any::<bool>(),
    ) {
        let mut session = session;
        for (var, value) in ["a", "b", "f"].iter().zip(&start) {
            session.insert(0, format!("{var}={value}"));
        }
        let scratch = Scratch::new();
        let home = scratch.home();
        let synapse_home = home.join(".synapse");
        let cwd_file = scratch.root.join("out/cwd");
        let mut last = line.clone();
        last.push(if tee {
            format!("echo written | tee {target} > /dev/null")
        } else {
            format!("echo written > {target}")
        });
        let last = last.join("; ");
        let script = format!(
            "{}\npwd > '{}'\n{last}\n",
            session.join("\n"),
            cwd_file.display()
        );
        let ran = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(home.join("proj"))
            .env_clear()
            .env("HOME", &home)
            .env("SYNAPSE_HOME", &synapse_home)
            .env("PATH", "/usr/bin:/bin")
            .output();
        prop_assume!(ran.is_ok());
        let cwd = std::fs::read_to_string(&cwd_file).unwrap_or_default();
        let cwd = PathBuf::from(cwd.trim());
        prop_assume!(cwd.starts_with(&home));
        let mut state = ShellState::default();
        for l in &session {
            state.record(l);
        }
        let base = ctx(false);
        let ctx = Context { cwd: &cwd, home: &home, ..base };
        let synapse_home_text = synapse_home.display().to_string();
        let found = landings(&last, &ctx, &state, &[("SYNAPSE_HOME", &synapse_home_text)]);
        for file in scratch.written("written") {
            let landed = found.writes.iter().any(|l| l.lands_on(&file));
            prop_assert!(
                landed || !found.unresolved_targets.is_empty(),
                "{session:?} then `{last}` from {}: bash wrote {} but the landings are {:?}",
                cwd.display(),
                file.display(),
                found
            );
        }
    }

    /// The settings file, reached through a chain of variables and `cd`s in any order.
    #[test]
    fn a_chain_of_variables_reaching_the_settings_file_lands_on_it(
        noise in prop::collection::vec(
            prop::sample::select(vec!["x=1", "cd /tmp", "echo hi", "y=$HOME", "export z=~"]),
            0..3,
        ),
        form in 0usize..8,
        split_at in 0usize..3,
    ) {
        let route: Vec<&str> = match form {
            0 => vec!["f=$SYNAPSE_HOME/settings.json", "echo {} > $f"],
            1 => vec!["d=$SYNAPSE_HOME", "f=$d/settings.json", "tee \"$f\" < /dev/null"],
            2 => vec!["cd $SYNAPSE_HOME", "cp /tmp/e.json settings.json"],
            3 => vec!["d=~/.synapse", "cd \"$d\"", "echo > ./settings.json"],
            4 => vec!["export f=${SYNAPSE_HOME}", "echo > $f/settings.json"],
            5 => vec!["h=$HOME", "f=$h/.synapse", "dd if=/dev/zero of=$f/settings.json"],
            6 => vec!["n=settings", "echo > $SYNAPSE_HOME/$n.json"],
            _ => vec!["f=${g:-$SYNAPSE_HOME/settings.json}", "echo > ${f}"],
        };
        let mut lines: Vec<String> = noise.iter().map(|s| s.to_string()).collect();
        lines.extend(route.iter().map(|s| s.to_string()));
        // The lines before `split_at` (never the write) ran in earlier calls.
        let split = split_at.min(lines.len() - 1);
        let mut state = ShellState::default();
        let ctx = ctx(false);
        let mut cwd = ctx.cwd.to_path_buf();
        for l in &lines[..split] {
            state.record(l);
            if let Some(dir) = l.strip_prefix("cd ") {
                // The earlier call's `cd` moved the real shell.
                cwd = match dir {
                    "$SYNAPSE_HOME" => PathBuf::from("/home/u/.synapse"),
                    "\"$d\"" => PathBuf::from("/home/u/.synapse"),
                    other => PathBuf::from(other),
                };
            }
        }
        let last = lines[split..].join(" && ");
        let at = Context { cwd: &cwd, ..ctx };
        let found = landings(&last, &at, &state, &[("SYNAPSE_HOME", "/home/u/.synapse")]);
        let settings = Path::new("/home/u/.synapse/settings.json");
        prop_assert!(
            found.writes.iter().any(|l| l.lands_on(settings)),
            "{:?} then `{last}`: {found:?}",
            &lines[..split]
        );
    }

    /// Any lines recorded and any line judged after them: an answer, never a panic.
    #[test]
    fn any_text_gets_an_answer(
        before in prop::collection::vec("[a-z$={}~/. ;'\"()-]{0,30}", 0..3),
        line in "[a-z$={}~/.*?\\[\\] ;|&<>'\"()-]{0,60}",
    ) {
        let mut state = ShellState::default();
        for l in &before {
            state.record(l);
        }
        let _ = landings(&line, &ctx(false), &state, &[("SYNAPSE_HOME", "/home/u/.synapse")]);
    }
}
