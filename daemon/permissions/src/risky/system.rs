//! Risks to the machine and shared state: git history rewrites and discards, package
//! installs and removals, signals to processes the session did not start, crontab changes,
//! power and disk tools.

use super::super::argv::{ArgOpts, git_subcommand, has_long, has_short, operands, subcommand};
use super::super::context::Context;
use super::super::parse::SimpleCommand;

/// `git push --force/--mirror/--delete/+ref/:ref`, `git reset --hard`, `git clean -f`.
pub(super) fn git(cmd: &SimpleCommand) -> Option<String> {
    let at = git_subcommand(&cmd.words).map_or(cmd.words.len(), |(at, _)| at);
    if let Some(reason) = git_config_runs_program(cmd.words.get(1..at).unwrap_or_default()) {
        return Some(reason);
    }
    let (at, sub) = git_subcommand(&cmd.words)?;
    let rest = cmd.words.get(at..)?;
    match sub {
        "push" => {
            let refs = operands(
                rest,
                ArgOpts::new("o", &["repo", "push-option", "receive-pack", "exec"]),
            );
            if has_long(rest, "mirror") {
                Some("`git push --mirror` overwrites and deletes branches on the remote".into())
            } else if has_long(rest, "force")
                || has_long(rest, "force-with-lease")
                || has_short(rest, 'f')
                || refs.iter().any(|r| r.starts_with('+'))
            {
                Some("`git push --force` rewrites history on the remote".into())
            } else if has_long(rest, "delete")
                || has_short(rest, 'd')
                || refs.iter().skip(1).any(|r| r.starts_with(':'))
            {
                Some("`git push --delete` deletes a branch or tag on the remote".into())
            } else {
                None
            }
        }
        "reset" if has_long(rest, "hard") => {
            Some("`git reset --hard` discards uncommitted changes".into())
        }
        "clean" if has_short(rest, 'f') || has_long(rest, "force") => {
            Some("`git clean -f` deletes untracked files".into())
        }
        _ => None,
    }
}

/// Configuration keys (matched as lowercase substrings) whose values git runs as programs.
const GIT_PROGRAM_KEYS: [&str; 11] = [
    "command",
    "pager",
    "editor",
    "program",
    "helper",
    "fsmonitor",
    "hookspath",
    "external",
    "askpass",
    "proxy",
    "textconv",
];

/// `git -c core.sshCommand=…`, `-c alias.x=!…`, `--config-env=core.pager=…`: the value runs.
fn git_config_runs_program(globals: &[String]) -> Option<String> {
    let mut iter = globals.iter();
    while let Some(w) = iter.next() {
        let setting = match w.as_str() {
            "-c" | "--config-env" => iter.next().map(String::as_str),
            _ => w.strip_prefix("--config-env="),
        };
        let Some(setting) = setting else {
            continue;
        };
        let key = setting
            .split('=')
            .next()
            .unwrap_or(setting)
            .to_ascii_lowercase();
        let runs = GIT_PROGRAM_KEYS.iter().any(|k| key.contains(k))
            || ["alias.", "filter.", "include"]
                .iter()
                .any(|p| key.starts_with(p));
        if runs {
            return Some(format!(
                "`git -c {key}=…` makes git run a program given on the command line"
            ));
        }
    }
    None
}

/// `pkill`/`killall` always; `kill` unless every target is a job, `$!` or a session process.
pub(super) fn kill(program: &str, cmd: &SimpleCommand, ctx: &Context) -> Option<String> {
    if program != "kill" {
        return Some(format!(
            "`{program}` can end processes this session did not start"
        ));
    }
    let mut signal_given = false;
    let mut only_pids = false;
    let mut pids = Vec::new();
    let mut iter = cmd.words.iter().skip(1);
    while let Some(w) = iter.next() {
        if only_pids || !w.starts_with('-') || w == "-" {
            pids.push(w.as_str());
            continue;
        }
        match w.as_str() {
            "--" => only_pids = true,
            "-l" | "-L" | "--list" | "--table" => return None,
            "-s" | "-n" | "--signal" => {
                iter.next();
                signal_given = true;
            }
            _ if !signal_given => signal_given = true,
            _ => pids.push(w.as_str()),
        }
    }
    if pids.is_empty() && cmd.words.get(1..) == Some(&["-1".to_string()][..]) {
        return Some("`kill -1` signals every process you own".into());
    }
    pids.into_iter().find_map(|pid| {
        if pid.starts_with('%') || pid == "$!" {
            return None;
        }
        match pid.parse::<i32>() {
            Ok(n) if n <= 0 => Some(format!(
                "`kill {pid}` signals a whole process group or every process you own"
            )),
            Ok(n) if (ctx.is_session_pid)(n) => None,
            Ok(_) => Some(format!(
                "`kill` of a process this session did not start: {pid}"
            )),
            Err(_) => Some(format!("`kill` of a process only known at run time: {pid}")),
        }
    })
}

/// `crontab -r`, `crontab -e`, `crontab FILE` (but not `crontab -l`).
pub(super) fn crontab(cmd: &SimpleCommand) -> Option<String> {
    let words = &cmd.words;
    if has_short(words, 'r') {
        return Some("`crontab -r` removes your crontab".into());
    }
    if has_short(words, 'e') {
        return Some("`crontab -e` edits your crontab".into());
    }
    let replaces = !operands(words, ArgOpts::new("u", &[])).is_empty() || !has_short(words, 'l');
    replaces.then(|| "`crontab FILE` replaces your crontab".into())
}

/// Package installs and removals through system and language package managers.
pub(super) fn package_change(program: &str, cmd: &SimpleCommand) -> Option<String> {
    let words = &cmd.words;
    let sub = subcommand(words);
    let changes = |subs: &[&str]| sub.is_some_and(|s| subs.contains(&s));
    let hit = match program {
        "apt" | "apt-get" | "aptitude" => changes(&[
            "install",
            "reinstall",
            "remove",
            "purge",
            "upgrade",
            "full-upgrade",
            "dist-upgrade",
            "autoremove",
            "build-dep",
        ]),
        "yum" | "dnf" | "microdnf" | "zypper" => changes(&[
            "install",
            "in",
            "reinstall",
            "remove",
            "rm",
            "erase",
            "update",
            "up",
            "upgrade",
            "groupinstall",
            "localinstall",
            "dist-upgrade",
            "dup",
        ]),
        "pacman" | "yay" | "paru" => pacman_changes(words),
        "apk" => changes(&["add", "del", "upgrade"]),
        "brew" => changes(&[
            "install",
            "reinstall",
            "uninstall",
            "remove",
            "rm",
            "upgrade",
            "tap",
        ]),
        "port" => changes(&["install", "uninstall", "upgrade", "selfupdate"]),
        "snap" => changes(&["install", "remove", "refresh"]),
        "flatpak" => changes(&["install", "uninstall", "update"]),
        "pipx" => changes(&[
            "install",
            "inject",
            "upgrade",
            "upgrade-all",
            "reinstall",
            "reinstall-all",
        ]),
        "npm" => changes(&[
            "install",
            "i",
            "in",
            "ins",
            "inst",
            "insta",
            "instal",
            "isnt",
            "isnta",
            "isntal",
            "isntall",
            "add",
            "ci",
            "clean-install",
            "ic",
            "install-clean",
            "install-test",
            "it",
            "update",
            "up",
            "upgrade",
        ]),
        "pnpm" | "bun" => changes(&["install", "i", "add", "update", "up", "upgrade"]),
        "yarn" => sub.is_none() || changes(&["install", "add", "global", "upgrade", "up"]),
        "cargo" | "go" => changes(&["install"]),
        "gem" => changes(&["install", "update"]),
        "uv" => {
            let rest: Vec<String> = words.iter().skip(1).cloned().collect();
            changes(&["pip", "tool"]) && pip_changes(&rest)
        }
        p if p == "pip" || p.starts_with("pip3") || p.starts_with("pip2") => pip_changes(words),
        p if p.starts_with("python") => match words.iter().position(|w| w == "pip") {
            Some(at) if at > 0 && words[at - 1] == "-m" => pip_changes(&words[at..]),
            _ => false,
        },
        _ => false,
    };
    hit.then(|| {
        let what = sub.map_or_else(|| program.to_string(), |s| format!("{program} {s}"));
        format!("`{what}` installs or removes packages (and may run their install scripts)")
    })
}

/// `pip install …` / `pip uninstall …` (not `--dry-run`); `words[0]` is `pip`.
fn pip_changes(words: &[String]) -> bool {
    let installs = matches!(subcommand(words), Some("install" | "uninstall"));
    installs && !has_long(words, "dry-run")
}

/// `pacman -S…` (not the query forms `-Ss`, `-Si`, …), `-R…`, `-U…`.
fn pacman_changes(words: &[String]) -> bool {
    words.iter().skip(1).any(|w| {
        if let Some(long) = w.strip_prefix("--") {
            return matches!(long, "sync" | "remove" | "upgrade");
        }
        let Some(cluster) = w.strip_prefix('-') else {
            return false;
        };
        match cluster.chars().next() {
            Some('S') => !cluster.contains(['s', 'i', 'l', 'g', 'p']),
            Some('R' | 'U') => true,
            _ => false,
        }
    })
}

/// `shutdown`, `reboot`, `poweroff`, `halt`, `systemctl poweroff|reboot|…`, `init 0|6`.
pub(super) fn power(program: &str, cmd: &SimpleCommand) -> Option<String> {
    let sub = subcommand(&cmd.words);
    let hit = match program {
        "shutdown" | "reboot" | "poweroff" | "halt" => true,
        "systemctl" | "loginctl" => matches!(
            sub,
            Some(
                "poweroff"
                    | "reboot"
                    | "halt"
                    | "kexec"
                    | "suspend"
                    | "hibernate"
                    | "hybrid-sleep"
                    | "rescue"
                    | "emergency"
            )
        ),
        "init" | "telinit" => matches!(sub, Some("0" | "1" | "6")),
        _ => false,
    };
    hit.then(|| {
        let what = match sub {
            Some(s) if !matches!(program, "shutdown" | "reboot" | "poweroff" | "halt") => {
                format!("{program} {s}")
            }
            _ => program.to_string(),
        };
        format!("`{what}` stops or restarts the machine")
    })
}

/// Formatting and partitioning tools.
pub(super) fn disk_tool(program: &str) -> Option<String> {
    let hit = program.starts_with("mkfs")
        || matches!(
            program,
            "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "parted" | "cfdisk"
        );
    hit.then(|| format!("`{program}` formats or repartitions a disk"))
}
