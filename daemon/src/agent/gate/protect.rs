//! The files that hold the rules themselves (the user's settings, the trust list, the project's
//! `.synapse/settings.json`) are never written without the user saying yes — in every mode,
//! yolo and `--yes` included, through an agent command or any shell route (`>`, `>>`, `tee`,
//! `cp`, `mv`, `install`, `ln`, `dd of=`, `sed -i`, `rm`, …): an agent that could edit them
//! could grant itself anything.
//!
//! A write is judged by where it lands, not by how it is spelled
//! ([`synapse_permissions::landings`]): `$SYNAPSE_HOME` (the daemon's own), `$HOME`, `~`, the
//! shell's folder and every `cd` in the line, and variables the line or the session set are
//! resolved first; then the file system is asked whether a target is a rules file under another
//! name (a symlink, a hard link, a symlinked folder). When a write cannot be placed — a target
//! only known at run time, an interpreter, `eval`, a session function — and the line names a
//! rules file in any form (its file name, `SYNAPSE_HOME`, `.synapse`, its folder), or runs in
//! a rules file's folder, or the session's variables can no longer be told, it asks too. The
//! OS sandbox still confines what runs sandboxed; this guard is what stands for in-process
//! agent commands and commands running outside it.
//!
//! The user's own configuration ([`super::user_config`]: `~/.bashrc`, `~/.config`, …) is
//! guarded the same way where a write's target is known; a write that cannot be placed counts
//! only when the line runs outside the sandbox and names the file — inside, the sandbox keeps
//! those paths read-only whatever the line builds.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use synapse_permissions::{
    self as permissions, Context, Decision, Effect, Landing, Landings, Reach, ShellState,
};

/// A write that may change a rules file, or the user's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RulesHit {
    pub file: PathBuf,
    /// Set when the write was not seen to land on `file` but could not be placed: why.
    pub unresolved: Option<String>,
    /// `file` is the user's configuration ([`super::user_config`]), not a rules file.
    pub config: bool,
}

/// The user's configuration as the guard sees it: its paths, and the session's writable
/// folders, which stay the session's own when they lie inside one of them; and the files
/// `synapse trust` pinned (a trusted project's settings, hook scripts, commands, agents, MCP
/// configs), which programs outside the sandbox read or run. A write either is seen to land on
/// asks like a rules write; one that cannot be placed counts only outside the sandbox and when
/// the line names the file — inside, the sandbox keeps the configuration read-only, and a pinned
/// file that changed anyway holds what it configures until the user trusts it again.
#[derive(Debug, Clone, Copy)]
pub(super) struct Config<'a> {
    pub paths: &'a [PathBuf],
    pub keep: &'a [PathBuf],
    pub pinned: &'a [PathBuf],
}

impl Config<'_> {
    fn hit(&self, writes: &[Landing]) -> Option<RulesHit> {
        super::user_config::hit(writes, self.paths, self.keep).map(|file| RulesHit {
            file,
            unresolved: None,
            config: true,
        })
    }
}

/// The first rules file a command line may write, rename or remove, if any.
/// A write to the user's configuration (`config`) that the line's words place is one too; one
/// they cannot place counts when the line runs outside the sandbox and names the file (inside,
/// the sandbox keeps those paths read-only).
pub(super) fn native_hit(
    command: &str,
    protected: &[PathBuf],
    config: Config,
    synapse_home: &Path,
    ctx: &Context,
    shell: &ShellState,
) -> Option<RulesHit> {
    let home = synapse_home.to_string_lossy();
    let found = permissions::landings(command, ctx, shell, &[("SYNAPSE_HOME", &home)]);
    if let Some(file) =
        landed(&found.writes, protected).or_else(|| landed(&found.writes, config.pinned))
    {
        return Some(RulesHit {
            file,
            unresolved: None,
            config: false,
        });
    }
    if let Some(hit) = config.hit(&found.writes) {
        return Some(hit);
    }
    if !found.has_unresolved() {
        return None;
    }
    let reasons = || {
        let mut all = found.unresolved_targets.clone();
        all.extend(found.unseen.iter().cloned());
        all.join("; ")
    };
    // A pinned file only counts here outside the sandbox (see [`Config`]).
    let pinned: &[PathBuf] = if ctx.sandboxed { &[] } else { config.pinned };
    if let Some(file) = protected
        .iter()
        .chain(pinned)
        .find(|f| names_file(&found, f, synapse_home))
    {
        return Some(RulesHit {
            file: file.clone(),
            unresolved: Some(format!("{}, and the line names it", reasons())),
            config: false,
        });
    }
    if !ctx.sandboxed
        && let Some(file) = super::user_config::named(|n| found.names(n), config.paths, config.keep)
    {
        return Some(RulesHit {
            file: file.clone(),
            unresolved: Some(format!("{}, and the line names it", reasons())),
            config: true,
        });
    }
    let in_folder = found
        .dirs
        .iter()
        .find_map(|d| protected.iter().find(|f| f.parent() == Some(d.as_path())));
    if let Some(file) = in_folder {
        return Some(RulesHit {
            file: file.clone(),
            unresolved: Some(format!("{}, and it runs in its folder", reasons())),
            config: false,
        });
    }
    match (shell.unknown_since(), protected.first()) {
        (Some(why), Some(file)) if !found.unresolved_targets.is_empty() => Some(RulesHit {
            file: file.clone(),
            unresolved: Some(format!(
                "{}, and this shell's variables cannot be told since {why}",
                found.unresolved_targets.join("; ")
            )),
            config: false,
        }),
        _ => None,
    }
}

/// The rules file (or configuration path) an agent command's declared writes hit, if any.
pub(super) fn effect_hit(
    effect: &Effect,
    protected: &[PathBuf],
    config: Config,
) -> Option<RulesHit> {
    let Effect::Writes(paths) = effect else {
        return None;
    };
    let writes = super::user_config::file_landings(paths);
    landed(&writes, protected)
        .or_else(|| landed(&writes, config.pinned))
        .map(|file| RulesHit {
            file,
            unresolved: None,
            config: false,
        })
        .or_else(|| config.hit(&writes))
}

/// A decision for a write to a rules file or the user's configuration: a refusal stays one,
/// anything else asks. A yes to a configuration write runs it outside the sandbox, which keeps
/// those paths read-only.
pub(super) fn ask_for(decision: Decision, hit: &RulesHit) -> Decision {
    let holds = if hit.config {
        "is your own configuration (programs outside the sandbox read or run it)"
    } else if holds_rules(&hit.file) {
        "holds permission settings"
    } else {
        "is a file you trusted with `synapse trust` (a hook script, command, agent or MCP config: \
         programs outside the sandbox read or run it)"
    };
    let file = hit.file.display();
    match decision {
        Decision::Deny { .. } => decision,
        Decision::Ask { escalate, .. } | Decision::Allow { escalate, .. } => Decision::Ask {
            reason: match &hit.unresolved {
                None => {
                    format!("{file} {holds}; changing it needs the user's own yes in every mode")
                }
                Some(why) => format!(
                    "cannot tell where it writes ({why}); {file} {holds}, so this needs the user's own yes in every mode"
                ),
            },
            suggestion: String::new(),
            escalate: escalate || hit.config,
        },
    }
}

/// Whether `file` is one of the files that hold rules, trust or approvals (rather than a file
/// `synapse trust` pinned for what runs outside the sandbox).
fn holds_rules(file: &Path) -> bool {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(
        name,
        "settings.json" | "settings.local.json" | "approved_servers.json" | "trusted_settings.json"
    ) || name == synapse_shared::trust::TRUST_FILE
        || name == synapse_shared::paths::SKILL_APPROVALS_FILE
}

/// The first protected file a write lands on, by its path or under another name the file
/// system knows (a symlinked folder, a symlink or hard link to the file).
fn landed(writes: &[Landing], protected: &[PathBuf]) -> Option<PathBuf> {
    if writes.is_empty() {
        return None;
    }
    if let Some(file) = protected
        .iter()
        .find(|f| writes.iter().any(|w| w.lands_on(f)))
    {
        return Some(file.clone());
    }
    let real: Vec<(PathBuf, Option<(u64, u64)>)> = protected
        .iter()
        .map(|f| (real_path(f), file_id(f)))
        .collect();
    for write in writes.iter().filter(|w| !w.pattern) {
        let aliased = Landing {
            path: real_path(&write.path),
            ..write.clone()
        };
        let id = match write.reach {
            Reach::File | Reach::FileOrChild => file_id(&write.path),
            Reach::Tree => None,
        };
        for (file, (real_file, real_id)) in protected.iter().zip(&real) {
            if aliased.lands_on(real_file) || (id.is_some() && id == *real_id) {
                return Some(file.clone());
            }
        }
    }
    None
}

/// `path` with every symlink in its existing part resolved (the rest kept as written).
pub(super) fn real_path(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The device and inode of an existing regular file (a hard link shares them).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

/// Whether the line names `file`: its file name, the name of a dot-folder holding it
/// (`.synapse`), a path into its folder towards it, or — for the files in the Synapse home —
/// `SYNAPSE_HOME` or a path into the home towards it.
fn names_file(found: &Landings, file: &Path, synapse_home: &Path) -> bool {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let folder = file.parent();
    let dot_folder = folder
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'));
    let in_home = file
        .strip_prefix(synapse_home)
        .ok()
        .map(|rel| rel.to_string_lossy().into_owned());
    found.names(&name)
        || found.names(".synapse")
        // The dot-folder alone, or a path into it towards the file (`.claude`, `.claude/`,
        // `.claude/sett…`, `.claude/$x`): not a path to something else in it
        // (`.claude/skills/x/scripts/y.py`), which names a sibling of the file, not the file.
        || dot_folder.is_some_and(|n| names_dot_folder(found, &n, &name))
        || folder.is_some_and(|f| found.names_folder(f, &[&name]))
        || in_home.is_some_and(|rel| {
            found.names("SYNAPSE_HOME") || found.names_folder(synapse_home, &[&rel])
        })
}

/// Whether the line names dot-folder `dot` in a way that may reach `file` inside it: see
/// [`Landings::names_folder`]; a path through `..` counts (it may come back to the file).
fn names_dot_folder(found: &Landings, dot: &str, file: &str) -> bool {
    found.names_folder(Path::new(dot), &[file]) || found.names(&format!("{dot}/..")) || {
        // `.claude/skills/../settings.json` and the like.
        found.names(dot) && found.names("/..")
    }
}

#[cfg(test)]
#[path = "protect_tests.rs"]
mod tests;
