//! Unit tests of the carve-out ([`super::carve`]): a home folder as the writable folder, its
//! configuration protected, tried by a Python child of a confined thread (real Landlock) by
//! every route — writes, creation, renames, hard and symbolic links.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;

/// Every try prints `name=OK` or `name=<errno name>`.
const TRY: &str = r#"
import errno, os, sys
def attempt(name, f):
    try:
        f()
        print(f"{name}=OK")
    except OSError as e:
        print(f"{name}={errno.errorcode[e.errno]}")
def write(path, mode='a'):
    with open(path, mode) as f:
        f.write('x')
"#;

/// Runs `script` (Python, after [`TRY`]) in `home` as a child of a thread confined to `spec`.
/// `None` (after saying why) when this machine cannot sandbox.
fn run(spec: SandboxSpec, home: &Path, script: &str) -> Option<(Status, String)> {
    if !matches!(support(), Support::Landlock { .. }) {
        eprintln!("skipping: no sandbox here: {:?}", support());
        return None;
    }
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", &format!("{TRY}\n{script}")])
        .current_dir(home);
    let (status, out) = std::thread::spawn(move || {
        let status = apply(&spec).unwrap();
        (status, cmd.output().unwrap())
    })
    .join()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{err}");
    Some((status, text))
}

fn outcome(out: &str, name: &str) -> String {
    let prefix = format!("{name}=");
    out.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or("(not tried)")
        .to_string()
}

/// A home with configuration, a project, a loose file, and tricks prepared before the sandbox:
/// a symlink to `.claude`, a second name of `.bashrc`.
fn home() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for folder in [
        ".claude",
        "project/src",
        ".local/bin",
        ".local/share",
        "Documents",
    ] {
        std::fs::create_dir_all(home.join(folder)).unwrap();
    }
    std::fs::write(home.join(".claude/settings.json"), "{}").unwrap();
    std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
    std::fs::write(home.join(".profile"), "# profile\n").unwrap();
    std::fs::write(home.join("notes.txt"), "notes\n").unwrap();
    std::fs::hard_link(home.join(".profile"), home.join("profile-copy")).unwrap();
    std::os::unix::fs::symlink(home.join(".claude"), home.join("claude-link")).unwrap();
    (dir, home)
}

fn protected(home: &Path) -> Vec<PathBuf> {
    [".claude", ".codex", ".bashrc", ".profile", ".local/bin"]
        .iter()
        .map(|p| home.join(p))
        .collect()
}

#[test]
fn a_home_folder_keeps_its_configuration_read_only_by_every_route() {
    let (_dir, home) = home();
    let spec = SandboxSpec {
        writable: vec![home.clone()],
        protected: protected(&home),
        ..Default::default()
    };
    let script = r#"
attempt('append_settings', lambda: write('.claude/settings.json'))
attempt('new_in_claude', lambda: write('.claude/settings.local.json', 'w'))
attempt('bashrc', lambda: write('.bashrc'))
attempt('mkdir_codex', lambda: os.mkdir('.codex'))
attempt('through_symlink', lambda: write('claude-link/settings.json'))
attempt('second_name', lambda: write('profile-copy'))
attempt('rename_claude_away', lambda: os.rename('.claude', 'project/old'))
attempt('rename_over_bashrc', lambda: (write('project/evil', 'w'), os.rename('project/evil', '.bashrc')))
attempt('hard_link_out', lambda: os.link('.bashrc', 'project/rc'))
attempt('symlink_then_write', lambda: (os.symlink('../.claude/settings.json', 'project/s'), write('project/s')))
attempt('local_bin', lambda: write('.local/bin/git', 'w'))
attempt('rename_into_local', lambda: (os.mkdir('project/d'), os.rename('project/d', '.local/bin/d')))
attempt('project_file', lambda: write('project/src/main.rs', 'w'))
attempt('project_mkdir', lambda: os.makedirs('project/a/b'))
attempt('move_between_granted', lambda: os.rename('project/a', 'Documents/a'))
attempt('local_share', lambda: write('.local/share/x', 'w'))
attempt('loose_file', lambda: write('notes.txt'))
attempt('new_loose_file', lambda: write('new.txt', 'w'))
attempt('remove_loose_file', lambda: os.unlink('notes.txt'))
"#;
    let Some((status, out)) = run(spec, &home, script) else {
        return;
    };
    assert_eq!(status.carved, vec![home.clone()]);
    let refused = |name: &str| {
        let got = outcome(&out, name);
        assert!(got == "EACCES" || got == "EXDEV", "{name}={got}\n{out}");
    };
    for name in [
        "append_settings",
        "new_in_claude",
        "bashrc",
        "mkdir_codex",
        "through_symlink",
        "second_name",
        "rename_claude_away",
        "rename_over_bashrc",
        "hard_link_out",
        "symlink_then_write",
        "local_bin",
        "rename_into_local",
        "new_loose_file",
        "remove_loose_file",
    ] {
        refused(name);
    }
    for name in [
        "project_file",
        "project_mkdir",
        "move_between_granted",
        "local_share",
        "loose_file",
    ] {
        assert_eq!(outcome(&out, name), "OK", "{name}\n{out}");
    }
    let read = |p: &str| std::fs::read_to_string(home.join(p)).unwrap();
    assert_eq!(read(".claude/settings.json"), "{}");
    assert_eq!(read(".bashrc"), "# rc\n");
    assert_eq!(read(".profile"), "# profile\n");
    assert!(!home.join(".codex").exists());
    assert!(!home.join(".claude/settings.local.json").exists());
    assert!(!home.join(".local/bin/git").exists());
    assert!(!home.join("project/rc").exists());
}

#[test]
fn a_folder_inside_a_protected_one_stays_writable_and_an_unrelated_one_whole() {
    let (_dir, home) = home();
    let nvim = home.join(".claude/nvim");
    std::fs::create_dir_all(&nvim).unwrap();
    let spec = SandboxSpec {
        writable: vec![nvim.clone(), home.join("project")],
        protected: protected(&home),
        ..Default::default()
    };
    let script = r#"
attempt('inside', lambda: write('.claude/nvim/init.lua', 'w'))
attempt('beside', lambda: write('.claude/settings.json'))
attempt('project_new', lambda: write('project/new', 'w'))
"#;
    let Some((status, out)) = run(spec, &home, script) else {
        return;
    };
    assert_eq!(status.carved, Vec::<PathBuf>::new(), "nothing to carve");
    assert_eq!(outcome(&out, "inside"), "OK", "{out}");
    assert_eq!(outcome(&out, "beside"), "EACCES", "{out}");
    assert_eq!(outcome(&out, "project_new"), "OK", "{out}");
}

#[test]
fn a_protected_path_reached_through_a_symlinked_home_is_carved_too() {
    let (dir, home) = home();
    let alias = dir.path().join("alias");
    std::os::unix::fs::symlink(&home, &alias).unwrap();
    // The session names its folder through the symlink; the list names the real home.
    let spec = SandboxSpec {
        writable: vec![alias.clone()],
        protected: protected(&home),
        ..Default::default()
    };
    let script = r#"
attempt('bashrc', lambda: write('.bashrc'))
attempt('project', lambda: write('project/x', 'w'))
"#;
    let Some((status, out)) = run(spec, &alias, script) else {
        return;
    };
    assert_eq!(status.carved, vec![alias]);
    assert_eq!(outcome(&out, "bashrc"), "EACCES", "{out}");
    assert_eq!(outcome(&out, "project"), "OK", "{out}");
}
