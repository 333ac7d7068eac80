//! The user's own configuration: the one list of paths in the home folder that configure or are
//! run by programs outside the sandbox ([`paths`]), and what follows from it. It goes to the OS
//! sandbox as the spec's protected paths (read-only even when the session's folder is the home
//! folder, [`synapse_sandbox::SandboxSpec::protected`]); it feeds the write guard, so a write
//! that lands there — the in-process `write`/`edit`, or a shell line whose target is known —
//! asks in every mode, yolo included ([`hit`]); and a session whose folder holds some of it is
//! told so once ([`notice`]).
//!
//! A writable folder of the session that lies inside one of these paths (a session started in
//! `~/.config/nvim`, the skills folder in `$SYNAPSE_HOME`) stays writable, in the sandbox as
//! for the guard: only what lies outside it stays protected.

use std::path::{Path, PathBuf};

use synapse_permissions::{Landing, Reach};

/// Folders in the home folder whose files make programs run outside the sandbox, or that hold
/// what lets the user's other tools act for them:
/// - `.claude`, `.codex`: the agents' settings, whose hooks, status lines and MCP servers run
///   as the user's own programs;
/// - `.config`: every XDG program's configuration (git, nvim, systemd user units, autostart);
/// - `.ssh`: `authorized_keys`, `config` (`ProxyCommand`, `LocalCommand` run programs);
/// - `.gnupg`: `gpg-agent.conf` names the pinentry program the agent starts;
/// - `.docker`, `.kube`, `.aws`: credential helpers, `exec` plugins and `credential_process`
///   are programs the user's own tools start;
/// - `.local/bin`, `bin`: on the user's `PATH` (Debian's `.profile` adds both), so a program
///   dropped there replaces `git` or `ls` in the user's own shell.
const CONFIG_FOLDERS: [&str; 10] = [
    ".claude",
    ".codex",
    ".config",
    ".ssh",
    ".gnupg",
    ".docker",
    ".kube",
    ".aws",
    ".local/bin",
    "bin",
];

/// The shells' start-up files: bash, zsh and readline run or read them in every new shell of
/// the user, outside the sandbox.
const SHELL_STARTUP_FILES: [&str; 12] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".bash_logout",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".inputrc",
    ".pam_environment",
];

/// Other files that make programs run when the user works:
/// - `.gitconfig`: `core.hooksPath`, `core.fsmonitor`, `core.pager` and `!` aliases run programs
///   at every `git` the user types;
/// - `.claude.json`: Claude Code's MCP servers, started unsandboxed;
/// - `.npmrc`: `script-shell` and `node-options` run at every `npm` command;
/// - `.vimrc`, `.vim`, `.emacs`, `.emacs.d`, `.tmux.conf`: the editors' and tmux's start-up code;
/// - `.xprofile`, `.xsessionrc`, `.xinitrc`: run at the graphical login.
const PROGRAM_FILES: [&str; 11] = [
    ".gitconfig",
    ".claude.json",
    ".npmrc",
    ".vimrc",
    ".vim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".xprofile",
    ".xsessionrc",
    ".xinitrc",
];

/// Every path of the user's configuration, for a daemon whose user's home is `home` and whose
/// own folder is `synapse_home` (protected whole; its `skills/` stays writable as a writable
/// folder of its own, which the carve-out leaves alone).
pub fn paths(home: &Path, synapse_home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = CONFIG_FOLDERS
        .iter()
        .chain(&SHELL_STARTUP_FILES)
        .chain(&PROGRAM_FILES)
        .map(|p| home.join(p))
        .collect();
    out.push(synapse_home.to_path_buf());
    out
}

/// The first configuration path one of `writes` may change: its target or any path beneath
/// it, also under another name (a symlinked folder), except inside a writable folder of the
/// session (`keep`) that itself lies inside that path.
pub(super) fn hit(writes: &[Landing], config: &[PathBuf], keep: &[PathBuf]) -> Option<PathBuf> {
    for write in writes {
        let real = Landing {
            path: super::protect::real_path(&write.path),
            ..write.clone()
        };
        for path in config {
            let forms = [
                (write, path.clone()),
                (&real, super::protect::real_path(path)),
            ];
            let lands = forms.iter().any(|(w, p)| {
                let inside = w.lands_on(p) || w.path.starts_with(p);
                inside
                    && !keep
                        .iter()
                        .any(|k| k.starts_with(p) && w.path.starts_with(k))
            });
            if lands {
                return Some(path.clone());
            }
        }
    }
    None
}

/// The notice for a session whose folder `root` holds configuration paths (`None`: it holds
/// none): what stays read-only, and what that costs.
pub(super) fn notice(root: &Path, home: &Path, synapse_home: &Path) -> Option<String> {
    let beneath = |p: &Path| p != root && p.starts_with(root);
    let config = paths(home, synapse_home);
    if !config.iter().any(|p| beneath(p)) {
        return None;
    }
    let show = |p: &Path| match p.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => p.display().to_string(),
    };
    let whose = whose(root, home);
    let mut items: Vec<String> = [".claude", ".codex", ".config", ".ssh"]
        .iter()
        .map(|f| home.join(f))
        .filter(|p| beneath(p))
        .map(|p| show(&p))
        .collect();
    if beneath(synapse_home) {
        items.push(format!("{} (except its skills/)", show(synapse_home)));
    }
    if beneath(&home.join(".bashrc")) {
        items.push("your shell start-up files (~/.bashrc, ~/.profile, …)".into());
        items.push("the other files that start programs (~/.gitconfig, ~/.local/bin, …)".into());
    }
    let items = match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => return None,
    };
    // The folders walked through to reach them are not writable themselves (see the sandbox).
    let mut carved: Vec<&Path> = config
        .iter()
        .filter(|p| beneath(p))
        .flat_map(|p| p.ancestors().skip(1).take_while(|a| a.starts_with(root)))
        .collect();
    carved.sort();
    carved.dedup();
    let carved: Vec<String> = carved.into_iter().map(show).collect();
    Some(format!(
        "{whose}: commands cannot change {items}, and the agent's own `write` and `edit` of them \
         ask you first. Commands also cannot create, rename or remove files directly in {} \
         (existing files there can be edited). Start synapse in a project folder to work there \
         freely.",
        carved.join(", ")
    ))
}

/// The notice for such a session when its commands run without the sandbox (`why`): only the
/// guard stands for the configuration then.
pub(super) fn unconfined_notice(root: &Path, home: &Path, why: &str) -> String {
    format!(
        "{}, and {why}: the agent's own `write` and `edit` of your configuration (~/.claude, \
         ~/.codex, ~/.config, ~/.ssh, your shell start-up files, …) ask you first, and so do \
         commands that name it, but a program can still change it. Start synapse in a project \
         folder to keep it out of reach.",
        whose(root, home)
    )
}

fn whose(root: &Path, home: &Path) -> String {
    if root == home {
        "Your home folder is this session's folder".to_string()
    } else if home.starts_with(root) {
        format!(
            "This session's folder {} holds your home folder",
            root.display()
        )
    } else {
        format!(
            "This session's folder {} holds your configuration",
            root.display()
        )
    }
}

/// Whether `write` lands on something the line cannot see but names a configuration path by
/// its file name (`.bashrc`, `.ssh`): the guess for lines that run outside the sandbox.
pub(super) fn named<'a>(
    names: impl Fn(&str) -> bool,
    config: &'a [PathBuf],
    keep: &[PathBuf],
) -> Option<&'a PathBuf> {
    config
        .iter()
        .filter(|p| !keep.iter().any(|k| k.starts_with(p)))
        .find(|p| p.file_name().is_some_and(|n| names(&n.to_string_lossy())))
}

/// Writes reaching `path` as a file (what an agent command declares).
pub(super) fn file_landings(paths: &[PathBuf]) -> Vec<Landing> {
    paths
        .iter()
        .map(|p| Landing {
            command: String::new(),
            path: synapse_shared::trust::normalize(p),
            reach: Reach::File,
            pattern: false,
        })
        .collect()
}

#[cfg(test)]
#[path = "user_config_tests.rs"]
mod tests;
