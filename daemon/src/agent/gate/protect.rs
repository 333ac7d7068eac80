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
/// folders, which stay the session's own when they lie inside one of them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Config<'a> {
    pub paths: &'a [PathBuf],
    pub keep: &'a [PathBuf],
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
    if let Some(file) = landed(&found.writes, protected) {
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
    if let Some(file) = protected
        .iter()
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
    } else {
        "holds permission settings"
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
        || dot_folder.is_some_and(|n| found.names(&n))
        || folder.is_some_and(|f| found.names_folder(f, &[&name]))
        || in_home.is_some_and(|rel| {
            found.names("SYNAPSE_HOME") || found.names_folder(synapse_home, &[&rel])
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOME: &str = "/h/.synapse";

    fn protected() -> Vec<PathBuf> {
        vec![
            PathBuf::from("/h/.synapse/settings.json"),
            PathBuf::from("/h/.synapse/trusted_folders.json"),
            PathBuf::from("/p/.synapse/settings.json"),
        ]
    }

    fn hit_after(before: &[&str], command: &str, cwd: &str) -> Option<RulesHit> {
        let cwd = Path::new(cwd);
        let ctx = Context {
            cwd,
            home: Path::new("/h"),
            synapse_home: Path::new("/h/.synapse/skills"),
            temp_dir: Path::new("/tmp"),
            extra_writable: &[],
            sandboxed: true,
            is_session_pid: &|_| false,
            agent_commands: &crate::shell::builtin_registry().agent_commands(),
        };
        let mut shell = ShellState::default();
        for line in before {
            shell.record(line);
        }
        let config = Config {
            paths: &[],
            keep: &[],
        };
        native_hit(command, &protected(), config, Path::new(HOME), &ctx, &shell)
    }

    fn hit(command: &str) -> bool {
        hit_after(&[], command, "/p").is_some()
    }

    #[test]
    fn every_shell_route_to_the_project_settings_is_caught() {
        for line in [
            "echo '{}' > .synapse/settings.json",
            "echo '{}' >> .synapse/settings.json",
            "echo '{}' | tee .synapse/settings.json",
            "cp /tmp/evil.json .synapse/settings.json",
            "cp /tmp/settings.json .synapse",
            "mv /tmp/evil.json .synapse/settings.json",
            "mv .synapse /tmp/old",
            "install /tmp/evil.json /p/.synapse/settings.json",
            "dd if=/tmp/evil.json of=.synapse/settings.json",
            "sed -i s/auto/yolo/ .synapse/settings.json",
            "ln -sf /tmp/evil.json .synapse/settings.json",
            "rm -rf .synapse",
            "true && cat x > ./.synapse/../.synapse/settings.json",
        ] {
            assert!(hit(line), "{line}");
        }
    }

    #[test]
    fn the_user_settings_are_caught_through_variables_and_folders() {
        for (before, line, cwd) in [
            (
                &[][..],
                r#"echo '{"permissions":{}}' > $SYNAPSE_HOME/settings.json"#,
                "/p",
            ),
            (&[], "cd $SYNAPSE_HOME && echo '{}' > settings.json", "/p"),
            (&[], "f=$SYNAPSE_HOME/settings.json; > $f", "/p"),
            (&[], r#"echo x | tee "${SYNAPSE_HOME}/settings.json""#, "/p"),
            (&[], "echo x > ~/.synapse/trusted_folders.json", "/p"),
            (&[], "echo x > settings.json", "/h/.synapse"),
            (&["f=$SYNAPSE_HOME/settings.json"], "echo x > $f", "/p"),
            (
                &["export f=$SYNAPSE_HOME"],
                "cp /tmp/e.json $f/settings.json",
                "/p",
            ),
        ] {
            let hit = hit_after(before, line, cwd);
            assert!(
                hit.as_ref().is_some_and(|h| h.unresolved.is_none()),
                "{before:?} then `{line}`: {hit:?}"
            );
        }
    }

    #[test]
    fn a_write_it_cannot_place_asks_when_the_line_names_a_rules_file() {
        for (before, line, cwd) in [
            (
                &[][..],
                "echo x > \"$(printf %s $SYNAPSE_HOME)/settings.json\"",
                "/p",
            ),
            (
                &[],
                "python3 -c \"open('/h/.synapse/settings.json','w')\"",
                "/p",
            ),
            (
                &[],
                "eval \"$(echo ZWNobwo= | base64 -d)\" ~/.synapse",
                "/p",
            ),
            (&[], "read f; echo x > $f/settings.json", "/p"),
            (&["read f"], "echo x > $f  # .synapse", "/p"),
            (&[], "node -e 'w(\"trusted_folders.json\")'", "/p"),
            (&[], "perl -e 'open(F, \">x\")'", "/h/.synapse"),
            (&["source ./env.sh"], "echo x > $target", "/p"),
            (
                &["code='open(\"settings.json\",\"w\")'"],
                "python3 -c \"$code\"",
                "/p",
            ),
        ] {
            let hit = hit_after(before, line, cwd);
            assert!(
                hit.as_ref().is_some_and(|h| h.unresolved.is_some()),
                "{before:?} then `{line}`: {hit:?}"
            );
        }
    }

    #[test]
    fn ordinary_commands_are_not_caught() {
        for line in [
            "echo hi > notes.txt",
            "cp a.txt b.txt",
            "cat .synapse/settings.json",
            "mkdir -p src",
            "python3 script.py > out.txt",
            "f=/tmp/x; echo > $f",
            "echo x > $OUT",
            "cat ~/.synapse/settings.json | jq .permissions",
            "write $SYNAPSE_HOME/skills/x/SKILL.md body",
            "d=$SYNAPSE_HOME/skills/new; mkdir -p $d && echo x > $d/SKILL.md",
        ] {
            assert!(!hit(line), "{line}");
        }
    }

    #[test]
    fn a_home_not_named_synapse_is_named_by_its_path_towards_a_rules_file() {
        let ctx = Context {
            cwd: Path::new("/p"),
            home: Path::new("/h"),
            synapse_home: Path::new("/data/syn/skills"),
            temp_dir: Path::new("/tmp"),
            extra_writable: &[],
            sandboxed: true,
            is_session_pid: &|_| false,
            agent_commands: &crate::shell::builtin_registry().agent_commands(),
        };
        let protected = [
            PathBuf::from("/data/syn/settings.json"),
            PathBuf::from("/data/syn/mcp/approved_servers.json"),
        ];
        let check = |line: &str| {
            let shell = ShellState::default();
            let config = Config {
                paths: &[],
                keep: &[],
            };
            native_hit(
                line,
                &protected,
                config,
                Path::new("/data/syn"),
                &ctx,
                &shell,
            )
        };
        for line in [
            r#"python3 -c "open('/data/syn/' + 'sett' + 'ings.json', 'w')""#,
            r#"python3 -c "open('/data/syn/mcp/' + 'x', 'w')""#,
            r#"node -e "$js" "$SYNAPSE_HOME""#,
        ] {
            assert!(check(line).is_some(), "{line}");
        }
        for line in [
            "python3 probe.py /data/syn/run/synapsed.sock",
            "python3 gen.py > /data/syn/skills/x/notes.md",
        ] {
            assert_eq!(check(line), None, "{line}");
        }
    }

    #[test]
    fn a_rules_file_under_another_name_is_caught() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
        let settings = home.join("settings.json");
        std::fs::write(&settings, "{}").unwrap_or_else(|e| panic!("{e}"));
        let via_folder = dir.path().join("folder-link");
        std::os::unix::fs::symlink(&home, &via_folder).unwrap_or_else(|e| panic!("{e}"));
        let via_file = dir.path().join("file-link");
        std::os::unix::fs::symlink(&settings, &via_file).unwrap_or_else(|e| panic!("{e}"));
        let hard = dir.path().join("hard");
        std::fs::hard_link(&settings, &hard).unwrap_or_else(|e| panic!("{e}"));
        let protected = [settings.clone()];
        let config = Config {
            paths: &[],
            keep: &[],
        };
        for path in [via_folder.join("settings.json"), via_file, hard] {
            let effect = Effect::Writes(vec![path.clone()]);
            assert!(
                effect_hit(&effect, &protected, config).is_some(),
                "{path:?}"
            );
        }
        let elsewhere = Effect::Writes(vec![dir.path().join("other.json")]);
        assert!(effect_hit(&elsewhere, &protected, config).is_none());
    }
}
