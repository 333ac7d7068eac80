//! Unit tests of the user's configuration list, the guard's view of it and the folder notice.

use std::path::{Path, PathBuf};

use synapse_permissions::{Landing, Reach};

use super::*;

const HOME: &str = "/h";

fn config() -> Vec<PathBuf> {
    paths(Path::new(HOME), Path::new("/h/.synapse"))
}

fn write(path: &str, reach: Reach) -> Landing {
    Landing {
        command: String::new(),
        path: PathBuf::from(path),
        reach,
        pattern: false,
    }
}

#[test]
fn the_list_holds_the_agents_settings_the_shells_start_up_and_the_daemon_home() {
    let all = config();
    for wanted in [
        "/h/.claude",
        "/h/.codex",
        "/h/.config",
        "/h/.ssh",
        "/h/.bashrc",
        "/h/.zshenv",
        "/h/.inputrc",
        "/h/.gitconfig",
        "/h/.local/bin",
        "/h/.synapse",
    ] {
        assert!(all.contains(&PathBuf::from(wanted)), "{wanted}");
    }
    assert!(!all.contains(&PathBuf::from("/h/.local")), "only its bin/");
}

#[test]
fn a_write_into_the_configuration_hits_it_and_the_sessions_own_folder_does_not() {
    let all = config();
    let hit_from = |root: &str, w: Landing| {
        let keep = [PathBuf::from(root), PathBuf::from("/h/.synapse/skills")];
        hit(&[w], &all, &keep)
    };
    assert_eq!(
        hit_from("/h", write("/h/.config/git/config", Reach::File)),
        Some(PathBuf::from("/h/.config"))
    );
    assert_eq!(
        hit_from("/h/p", write("/h/.bashrc", Reach::File)),
        Some(PathBuf::from("/h/.bashrc"))
    );
    // `rm -rf ~` reaches everything beneath it.
    assert!(hit_from("/h", write("/h", Reach::Tree)).is_some());
    assert_eq!(hit_from("/h", write("/h/project/x", Reach::File)), None);
    assert_eq!(
        hit_from("/h", write("/h/.local/share/x", Reach::File)),
        None
    );
    // The skills folder is the agent's to write; the rest of its home is not.
    assert_eq!(
        hit_from("/p", write("/h/.synapse/skills/a/SKILL.md", Reach::File)),
        None
    );
    assert_eq!(
        hit_from("/p", write("/h/.synapse/bin/git", Reach::File)),
        Some(PathBuf::from("/h/.synapse"))
    );
    assert!(hit_from("/p", write("/h/.synapse", Reach::Tree)).is_some());
    // A session started inside `~/.config` keeps its own folder, not the rest.
    let nvim = "/h/.config/nvim";
    assert_eq!(
        hit_from(nvim, write("/h/.config/nvim/init.lua", Reach::File)),
        None
    );
    assert_eq!(
        hit_from(nvim, write("/h/.config/git/config", Reach::File)),
        Some(PathBuf::from("/h/.config"))
    );
}

#[test]
fn a_home_session_is_told_what_stays_read_only() {
    let home = Path::new(HOME);
    let text = notice(home, home, Path::new("/h/.synapse")).expect("a notice");
    assert_eq!(
        text,
        "Your home folder is this session's folder: commands cannot change ~/.claude, \
         ~/.codex, ~/.config, ~/.ssh, ~/.synapse (except its skills/), your shell start-up \
         files (~/.bashrc, ~/.profile, …) and the other files that start programs \
         (~/.gitconfig, ~/.local/bin, …), and the agent's own `write` and `edit` of them ask \
         you first. Commands also cannot create, rename or remove files directly in ~, \
         ~/.local (existing files there can be edited). Start synapse in a project folder to \
         work there freely."
    );
    assert_eq!(
        notice(Path::new("/h/project"), home, Path::new("/h/.synapse")),
        None
    );
    let above = notice(Path::new("/"), home, Path::new("/h/.synapse")).expect("a notice");
    assert!(
        above.starts_with("This session's folder / holds your home folder: "),
        "{above}"
    );
    assert!(above.contains("directly in /, ~, ~/.local"), "{above}");
    let unconfined = unconfined_notice(home, home, "yolo mode runs commands without the sandbox");
    assert!(
        unconfined.starts_with(
            "Your home folder is this session's folder, and yolo mode runs commands without \
             the sandbox: "
        ),
        "{unconfined}"
    );
    assert!(
        unconfined.contains("a program can still change it"),
        "{unconfined}"
    );
}
