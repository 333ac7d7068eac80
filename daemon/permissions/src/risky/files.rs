//! Risks in what a command does to files: recursive deletes outside the work, writes to
//! dotfiles and shell profiles, writes to devices, recursive permission changes.

use std::path::Path;

use super::super::argv::{ArgOpts, has_long, has_short, operands};
use super::super::context::{Context, normalize, resolve_known};
use super::super::parse::{SimpleCommand, unwrap_wrapper};
use super::super::writes::write_targets;

/// Shell start-up files, risky to write wherever they are.
const PROFILE_NAMES: [&str; 10] = [
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".login",
    ".cshrc",
    ".tcshrc",
    "config.fish",
];

/// Device files a write to is harmless.
const SAFE_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
];

/// `rm -r` / `-R` / `--recursive` of something outside the work, a top-level folder, the home
/// folder, or a path only known at run time.
pub(super) fn recursive_delete(cmd: &SimpleCommand, ctx: &Context) -> Option<String> {
    let words = &cmd.words;
    if !(has_short(words, 'r') || has_short(words, 'R') || has_long(words, "recursive")) {
        return None;
    }
    operands(words, ArgOpts::NONE)
        .into_iter()
        .find_map(|target| delete_risk(ctx, target))
        .map(|why| format!("recursive delete {why}"))
}

fn delete_risk(ctx: &Context, target: &str) -> Option<String> {
    let Some(path) = resolve_known(ctx, target) else {
        return Some(format!("of a path only known at run time: {target}"));
    };
    let parent_is_top = |p: &Path| {
        p.parent()
            .is_some_and(|parent| ctx.home.starts_with(parent))
    };
    if path.components().count() <= 2 || ctx.home.starts_with(&path) {
        return Some(format!("of a top-level or home folder: {target}"));
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if is_glob(name) && (name.starts_with('.') || parent_is_top(&path)) {
        return Some(format!("of a pattern that can match too much: {target}"));
    }
    if ctx.is_strictly_inside_work_dirs(&path) {
        return None;
    }
    if path == normalize(ctx.cwd) {
        return Some(format!("of the working folder itself: {target}"));
    }
    Some(format!("outside the working folder: {target}"))
}

fn is_glob(name: &str) -> bool {
    name.contains(['*', '?', '['])
}

/// `xargs rm -r`: deletes recursively whatever paths arrive on its input.
pub(super) fn xargs_recursive_delete(cmd: &SimpleCommand) -> Option<String> {
    let inner = unwrap_wrapper(&cmd.words)?;
    let recursive = inner
        .words
        .first()
        .is_some_and(|p| p.rsplit('/').next() == Some("rm"))
        && (has_short(&inner.words, 'r')
            || has_short(&inner.words, 'R')
            || has_long(&inner.words, "recursive"));
    recursive.then(|| "recursive delete of paths read from input (`xargs rm -r`)".to_string())
}

/// Writes (redirects, `tee`, `cp`, `sed -i`, `ln`, `rm`, …) to a dotfile in the home folder or
/// to a shell profile anywhere, outside the Synapse home.
pub(super) fn dotfile_write(cmd: &SimpleCommand, ctx: &Context) -> Option<String> {
    write_targets(cmd).into_iter().find_map(|target| {
        let path = resolve_known(ctx, &target)?;
        is_dotfile(ctx, &path)
            .then(|| format!("changes a dotfile or shell profile: {}", ctx.show(&path)))
    })
}

fn is_dotfile(ctx: &Context, path: &Path) -> bool {
    if path.starts_with(normalize(ctx.synapse_home)) {
        return false;
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if PROFILE_NAMES.contains(&name) {
        return true;
    }
    let Some(first) = first_component_under(path, ctx.home) else {
        return false;
    };
    // Working inside a dot folder (say ~/.config/nvim) makes its files the work, not dotfiles.
    let cwd = normalize(ctx.cwd);
    let works_in_dot_folder =
        first_component_under(&cwd, ctx.home).is_some_and(|c| c.starts_with('.'));
    let inside_work = path != cwd && path.starts_with(&cwd);
    first.starts_with('.') && !(works_in_dot_folder && inside_work)
}

fn first_component_under(path: &Path, home: &Path) -> Option<String> {
    let rest = path.strip_prefix(normalize(home)).ok()?;
    rest.components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
}

/// Writes to a device file other than `/dev/null` and friends (`dd of=/dev/sda`, `> /dev/sdb`).
pub(super) fn device_write(cmd: &SimpleCommand, ctx: &Context) -> Option<String> {
    write_targets(cmd).into_iter().find_map(|target| {
        let path = resolve_known(ctx, &target)?;
        let shown = path.to_string_lossy();
        let safe = SAFE_DEVICES.contains(&shown.as_ref())
            || shown.starts_with("/dev/fd/")
            || shown.starts_with("/dev/shm/");
        (path.starts_with("/dev") && !safe).then(|| format!("writes to the device {shown}"))
    })
}

/// `chmod -R`, `chown -R`, `chgrp -R`.
pub(super) fn recursive_mode_change(program: &str, cmd: &SimpleCommand) -> Option<String> {
    (has_short(&cmd.words, 'R') || has_long(&cmd.words, "recursive"))
        .then(|| format!("`{program} -R` changes ownership or permissions of a whole tree"))
}
