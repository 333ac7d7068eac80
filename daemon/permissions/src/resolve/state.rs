//! What the session's persistent shell has been told so far, as far as it changes which
//! program a command name starts: aliases, functions, `hash -p` entries, a changed `PATH`,
//! `DEBUG`/`RETURN`/`ERR` traps, and whether something ran that could have changed any of these
//! unseen (`source`, `eval` of run-time text, `enable`, a program named by a variable, a
//! function handed over through `BASH_FUNC_…`). It also keeps the variables lines set
//! ([`Vars`]), for telling where later writes land.
//!
//! The gate calls [`ShellState::record`] with every line it let run, after it ran; definitions
//! inside subshells or lines that failed half-way are recorded too, which can only make later
//! checks stricter. A fresh shell starts from [`ShellState::default`].

use std::collections::{BTreeMap, BTreeSet};

use super::super::landing::Vars;
use super::super::parse::{Parsed, SimpleCommand, parse};
use super::tokens::{assigns, mentions, writes_var};

/// Signals whose trap runs around ordinary commands rather than on a signal.
pub(super) const HOOK_TRAPS: [&str; 3] = ["DEBUG", "RETURN", "ERR"];

/// Variables that make programs run code of their choosing before anything else.
pub(super) const HOOK_VARS: [&str; 3] = ["BASH_ENV", "LD_PRELOAD", "LD_LIBRARY_PATH"];

/// The resolution-relevant state of one persistent shell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellState {
    pub(super) aliases: BTreeMap<String, String>,
    pub(super) functions: BTreeSet<String>,
    /// `hash -p PATH NAME`: NAME → PATH.
    pub(super) hashed: BTreeMap<String, String>,
    /// The command that changed `PATH`, for messages.
    pub(super) path_changed: Option<String>,
    /// `DEBUG`, `RETURN`, `ERR` → the trap's action.
    pub(super) traps: BTreeMap<String, String>,
    /// Why the shell's state can no longer be told.
    pub(super) unknown: Option<String>,
    /// The variables lines set, for where later writes land (not for resolving names).
    vars: Vars,
}

impl ShellState {
    /// Takes in the definitions of a line that ran in this shell.
    pub fn record(&mut self, line: &str) {
        let parsed = parse(line);
        self.record_parsed(&parsed, line);
    }

    pub(super) fn record_parsed(&mut self, parsed: &Parsed, line: &str) {
        self.vars.record(&Vars::of_line(parsed, line));
        for name in &parsed.functions {
            self.functions.insert(name.clone());
        }
        let mut prefix_path = 0;
        for cmd in parsed.all_commands() {
            if !cmd.words.is_empty() && cmd.assignments.iter().any(|a| assigns(a, "PATH")) {
                prefix_path += 1;
            }
            if writes_var(cmd, "PATH") {
                self.path_changed.get_or_insert_with(|| snippet(&cmd.text));
            }
            for var in HOOK_VARS {
                if writes_var(cmd, var) {
                    self.unknown
                        .get_or_insert_with(|| format!("`{}` may set {var}", snippet(&cmd.text)));
                }
            }
            self.record_command(cmd);
        }
        if self.path_changed.is_none() && mentions(line, "PATH") > prefix_path {
            self.path_changed = Some(snippet(line));
        }
        for var in HOOK_VARS {
            if mentions(line, var) > 0 && self.unknown.is_none() {
                self.unknown = Some(format!("`{}` set {var}", snippet(line)));
            }
        }
        if line.contains(super::FUNCTION_ENV_PREFIX) {
            self.unknown.get_or_insert_with(|| {
                format!(
                    "`{}` may define functions through the environment",
                    snippet(line)
                )
            });
        }
    }

    fn record_command(&mut self, cmd: &SimpleCommand) {
        let Some(first) = cmd.words.first() else {
            return;
        };
        let args = cmd.words.get(1..).unwrap_or_default();
        if first.contains('$') || first.contains('`') {
            self.unknown
                .get_or_insert_with(|| format!("`{}` ran a command named at run time", cmd.text));
            return;
        }
        match first.as_str() {
            "alias" => {
                for (name, value) in args.iter().filter_map(|a| a.split_once('=')) {
                    self.aliases.insert(name.to_string(), value.to_string());
                }
            }
            "unalias" if args.iter().any(|a| a == "-a") => self.aliases.clear(),
            "unalias" => {
                for a in args {
                    self.aliases.remove(a);
                }
            }
            "unset" if args.iter().any(|a| a == "-f") => {
                for a in args.iter().filter(|a| !a.starts_with('-')) {
                    self.functions.remove(a);
                }
            }
            "hash" => self.record_hash(args),
            "trap" => self.record_trap(args),
            "enable"
                if args
                    .iter()
                    .any(|a| !matches!(a.as_str(), "-a" | "-p" | "-s")) =>
            {
                self.unknown.get_or_insert_with(|| {
                    format!("`{}` changed which builtins the shell has", cmd.text)
                });
            }
            "source" | "." => {
                self.unknown.get_or_insert_with(|| {
                    format!("`{}` ran commands this check could not see", cmd.text)
                });
            }
            "eval" if args.iter().any(|a| a.contains('$') || a.contains('`')) => {
                self.unknown.get_or_insert_with(|| {
                    format!("`{}` ran text only known at run time", cmd.text)
                });
            }
            _ => {}
        }
    }

    fn record_hash(&mut self, args: &[String]) {
        if args.iter().any(|a| a == "-r") {
            self.hashed.clear();
        }
        if let Some(at) = args.iter().position(|a| a == "-d") {
            for a in args.get(at + 1..).unwrap_or_default() {
                self.hashed.remove(a);
            }
        }
        let at = args.iter().position(|a| a == "-p");
        if let Some((Some(path), Some(name))) = at.map(|at| (args.get(at + 1), args.get(at + 2))) {
            self.hashed.insert(name.clone(), path.clone());
        }
    }

    fn record_trap(&mut self, args: &[String]) {
        let args: Vec<&String> = args.iter().filter(|a| *a != "--").collect();
        let Some(action) = args.first() else {
            return;
        };
        if action.starts_with('-') && action.as_str() != "-" {
            return;
        }
        for sig in &args[1..] {
            let upper = sig.to_ascii_uppercase();
            let name = upper.strip_prefix("SIG").unwrap_or(&upper);
            if !HOOK_TRAPS.contains(&name) {
                continue;
            }
            if action.is_empty() || action.as_str() == "-" {
                self.traps.remove(name);
            } else {
                self.traps.insert(name.to_string(), action.to_string());
            }
        }
    }

    /// Nothing recorded that changes how a command name resolves.
    pub fn is_plain(&self) -> bool {
        let Self {
            aliases,
            functions,
            hashed,
            path_changed,
            traps,
            unknown,
            vars: _,
        } = self;
        aliases.is_empty()
            && functions.is_empty()
            && hashed.is_empty()
            && path_changed.is_none()
            && traps.is_empty()
            && unknown.is_none()
    }

    /// The variables the lines that ran may have set.
    pub fn vars(&self) -> &Vars {
        &self.vars
    }

    /// Why this shell's state can no longer be told (`source`, `eval` of run-time text, …).
    pub fn unknown_since(&self) -> Option<&str> {
        self.unknown.as_deref()
    }
}

/// The start of a line, for messages.
pub(super) fn snippet(line: &str) -> String {
    let line = line.trim();
    let short: String = line.chars().take(60).collect();
    if short.len() < line.len() {
        format!("{short}…")
    } else {
        short
    }
}
