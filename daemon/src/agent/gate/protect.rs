//! The files that hold the rules themselves (the user's settings, the trust list, the project's
//! `.synapse/settings.json`) are never written without the user saying yes — in every mode,
//! yolo and `--yes` included, through an agent command or any shell route (`>`, `>>`, `tee`,
//! `cp`, `mv`, `install`, `ln`, `dd of=`, `sed -i`, `rm`, …): an agent that could edit them
//! could grant itself anything. Writes hidden from the parser (a variable, an interpreter) are
//! a documented limit; the sandbox is the hard boundary.

use std::path::{Path, PathBuf};

use synapse_permissions::{self as permissions, Context, Decision, Effect};

/// Programs whose operand may be a folder that receives the protected file.
const INTO_FOLDER: &[&str] = &["cp", "mv", "install", "ln", "rsync", "tar", "unzip"];
/// Programs that remove or rename a whole tree, protected file included.
const WHOLE_TREE: &[&str] = &["rm", "rmdir", "mv", "shred", "unlink"];

/// The first protected file a command line writes, renames or removes, if any.
pub(super) fn native_hit(command: &str, protected: &[PathBuf], ctx: &Context) -> Option<PathBuf> {
    let parsed = permissions::parse(command);
    for cmd in parsed.all_commands() {
        let program = cmd.program().map(program_name).unwrap_or_default();
        for target in permissions::write_targets(cmd) {
            let path = permissions::resolve(ctx, &target);
            if let Some(hit) = protected.iter().find(|f| touches(&path, f, program)) {
                return Some(hit.clone());
            }
        }
    }
    None
}

/// The protected file an agent command's declared writes hit, if any.
pub(super) fn effect_hit(effect: &Effect, protected: &[PathBuf]) -> Option<PathBuf> {
    let Effect::Writes(paths) = effect else {
        return None;
    };
    paths.iter().find_map(|p| {
        let p = synapse_shared::trust::normalize(p);
        protected.iter().find(|f| **f == p).cloned()
    })
}

/// A decision for a write to `file`: a refusal stays one, anything else asks.
pub(super) fn ask_for(decision: Decision, file: &Path) -> Decision {
    match decision {
        Decision::Deny { .. } => decision,
        Decision::Ask { escalate, .. } | Decision::Allow { escalate, .. } => Decision::Ask {
            reason: format!(
                "{} holds permission settings; changing it needs the user's own yes in every mode",
                file.display()
            ),
            suggestion: String::new(),
            escalate,
        },
    }
}

fn touches(target: &Path, file: &Path, program: &str) -> bool {
    target == file
        || (INTO_FOLDER.contains(&program) && file.parent() == Some(target))
        || (WHOLE_TREE.contains(&program) && file.starts_with(target))
}

fn program_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(command: &str) -> bool {
        let cwd = Path::new("/p");
        let ctx = Context {
            cwd,
            home: Path::new("/h"),
            synapse_home: Path::new("/h/.synapse"),
            temp_dir: Path::new("/tmp"),
            extra_writable: &[],
            sandboxed: true,
            is_session_pid: &|_| false,
        };
        native_hit(command, &[PathBuf::from("/p/.synapse/settings.json")], &ctx).is_some()
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
    fn ordinary_writes_next_to_it_are_not_caught() {
        for line in [
            "echo hi > notes.txt",
            "cp a.txt b.txt",
            "cat .synapse/settings.json",
            "mkdir -p src",
        ] {
            assert!(!hit(line), "{line}");
        }
    }
}
