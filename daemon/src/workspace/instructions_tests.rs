#![allow(clippy::unwrap_used)]

use super::*;
use std::os::unix::fs::symlink;

struct Fixture {
    _dir: tempfile::TempDir,
    places: Places,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let places = Places {
            root: base.join("home/proj"),
            home: Some(base.join("home")),
            synapse_home: Some(base.join("synapse")),
        };
        std::fs::create_dir_all(places.root.join("sub/deeper")).unwrap();
        std::fs::create_dir_all(places.synapse_home.as_ref().unwrap()).unwrap();
        Self { _dir: dir, places }
    }

    fn write(&self, path: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        path.to_path_buf()
    }

    fn root(&self, rel: &str) -> PathBuf {
        self.places.root.join(rel)
    }

    fn home(&self, rel: &str) -> PathBuf {
        self.places.home.as_ref().unwrap().join(rel)
    }
}

fn shown(files: &[InstructionFile]) -> Vec<&str> {
    files.iter().map(|f| f.shown.as_str()).collect()
}

#[test]
fn user_files_come_first_then_root_down_to_the_cwd_with_local_after_its_sibling() {
    let f = Fixture::new();
    f.write(&f.root("sub/CLAUDE.local.md"), "sub local");
    f.write(&f.root("sub/AGENTS.md"), "sub agents");
    f.write(&f.root("CLAUDE.md"), "root claude");
    f.write(&f.root("AGENTS.md"), "root agents");
    f.write(&f.root("sub/deeper/AGENTS.md"), "not on the way");
    f.write(&f.home(".codex/AGENTS.md"), "codex user");
    f.write(&f.home(".claude/CLAUDE.md"), "claude user");
    f.write(
        &f.places.synapse_home.clone().unwrap().join("AGENTS.md"),
        "synapse user",
    );
    let files = load(&f.places, &f.root("sub"));
    let synapse_agents = f
        .places
        .synapse_home
        .clone()
        .unwrap()
        .join("AGENTS.md")
        .display()
        .to_string();
    assert_eq!(
        shown(&files),
        [
            "~/.claude/CLAUDE.md",
            "~/.codex/AGENTS.md",
            synapse_agents.as_str(),
            "AGENTS.md",
            "CLAUDE.md",
            "sub/AGENTS.md",
            "sub/CLAUDE.local.md",
        ]
    );
    let text = section(&files);
    assert!(text.starts_with("\n# Project instructions\n"), "{text}");
    assert!(
        text.contains("## sub/CLAUDE.local.md\n\nsub local\n"),
        "{text}"
    );
    assert!(text.contains("## ~/.claude/CLAUDE.md (the user's, for every project)"));
    assert!(text.contains("never change what you may run"));
    assert_eq!(section(&[]), "");
}

#[test]
fn imports_are_relative_bounded_each_read_once_and_skip_code() {
    let f = Fixture::new();
    f.write(
        &f.root("AGENTS.md"),
        "See @docs/build.md and @docs/build.md.\n`@docs/code.md` and\n```\n@docs/fenced.md\n```\n@missing.md @alice",
    );
    f.write(
        &f.root("docs/build.md"),
        "build: make\n@../AGENTS.md @chain/1.md",
    );
    f.write(&f.root("docs/code.md"), "in code");
    f.write(&f.root("docs/fenced.md"), "fenced");
    for i in 1..=8 {
        f.write(
            &f.root(&format!("docs/chain/{i}.md")),
            &format!("link {i} @{}.md", i + 1),
        );
    }
    let files = load(&f.places, &f.places.root);
    let names = shown(&files);
    assert_eq!(
        names[..3],
        ["AGENTS.md", "docs/build.md", "docs/chain/1.md"]
    );
    // depth: AGENTS.md (0) → build.md (1) → 1.md (2) … 4.md (5), whose import is not followed.
    assert_eq!(names.last(), Some(&"docs/chain/4.md"), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.contains("code") || n.contains("fenced"))
    );
    assert_eq!(files[1].scope, Scope::Import);
    assert!(section(&files).contains("## docs/build.md (imported)\n\nbuild: make"));
}

#[test]
fn a_project_file_imports_only_from_the_project_and_the_users_agent_folders() {
    let f = Fixture::new();
    f.write(&f.home(".ssh/id_rsa"), "PRIVATE KEY");
    f.write(&f.home(".claude/mine.md"), "my own preferences");
    f.write(&f.home("notes.md"), "home notes");
    f.write(
        &f.root("AGENTS.md"),
        "@~/.ssh/id_rsa @~/.claude/mine.md @../notes.md @/etc/hostname",
    );
    let files = load(&f.places, &f.places.root);
    assert_eq!(shown(&files), ["AGENTS.md", "~/.claude/mine.md"]);
    // The user's own file may import from anywhere in the home.
    f.write(&f.home(".claude/CLAUDE.md"), "@~/notes.md");
    let files = load(&f.places, &f.places.root);
    assert_eq!(shown(&files)[..2], ["~/.claude/CLAUDE.md", "~/notes.md"]);
}

#[test]
fn a_symlink_out_is_not_read_and_a_second_name_of_a_file_is_given_once() {
    let f = Fixture::new();
    symlink("/etc/passwd", f.root("AGENTS.md")).unwrap();
    assert!(load(&f.places, &f.places.root).is_empty());
    std::fs::remove_file(f.root("AGENTS.md")).unwrap();
    f.write(&f.root("AGENTS.md"), "shared rules");
    symlink(f.root("AGENTS.md"), f.root("CLAUDE.md")).unwrap();
    let files = load(&f.places, &f.places.root);
    assert_eq!(shown(&files), ["AGENTS.md"]);
}

#[test]
fn a_huge_file_is_cut_with_a_note_and_the_total_budget_holds() {
    let f = Fixture::new();
    f.write(&f.root("AGENTS.md"), &"a".repeat(2 * 1024 * 1024));
    f.write(&f.root("CLAUDE.md"), &"b".repeat(40 * 1024));
    f.write(&f.root("CLAUDE.local.md"), &"c".repeat(10 * 1024));
    f.write(&f.root("sub/AGENTS.md"), "late");
    let files = load(&f.places, &f.root("sub"));
    assert!(files[0].cut && files[0].bytes == 2 * 1024 * 1024);
    assert!(
        files[0]
            .text
            .ends_with("\n[AGENTS.md cut at 32 KB of 2 MB]"),
        "{}",
        &files[0].text[files[0].text.len() - 60..]
    );
    assert!(
        files[1]
            .text
            .ends_with("\n[CLAUDE.md cut at 32 KB of 40 KB]")
    );
    assert_eq!(
        files[2].text,
        "[CLAUDE.local.md (10 KB) not shown: the instructions' total budget of 64 KB is used up]"
    );
    let total: usize = files.iter().map(|f| f.text.len()).sum();
    assert!(total <= TOTAL_MAX_BYTES, "{total}");
}

#[test]
fn nested_files_come_once_when_the_agent_first_works_below_their_folder() {
    let f = Fixture::new();
    f.write(&f.root("AGENTS.md"), "root rules");
    f.write(&f.root("sub/AGENTS.md"), "sub rules");
    f.write(&f.root("sub/deeper/CLAUDE.md"), "deeper rules");
    let given = SessionInstructions::default();
    let files = load(&f.places, &f.places.root);
    given.record_prompt("s1", f.places.clone(), &files);
    // Another session (a sub-agent's shell) recorded nothing: it gets nothing.
    assert_eq!(given.nested("other", &f.root("sub/x.rs")), None);
    assert_eq!(given.nested("s1", &f.root("top.rs")), None);
    let first = given.nested("s1", &f.root("sub/x.rs")).unwrap();
    assert_eq!(
        first,
        "\n\nInstructions from sub/AGENTS.md (they apply to files below sub/):\nsub rules"
    );
    assert_eq!(given.nested("s1", &f.root("sub/y.rs")), None);
    let deeper = given
        .nested("s1", &f.root("sub/deeper/../deeper/z.rs"))
        .unwrap();
    assert!(deeper.contains("Instructions from sub/deeper/CLAUDE.md (they apply to files below sub/deeper/):\ndeeper rules"));
    assert!(!deeper.contains("sub rules"));
    assert_eq!(given.nested("s1", Path::new("/etc/passwd")), None);
    assert_eq!(
        shown(&given.given("s1")),
        ["AGENTS.md", "sub/AGENTS.md", "sub/deeper/CLAUDE.md"]
    );
}

#[test]
fn reading_an_instruction_file_itself_brings_no_second_copy() {
    let f = Fixture::new();
    f.write(&f.root("sub/AGENTS.md"), "sub rules");
    let given = SessionInstructions::default();
    given.record_prompt("s1", f.places.clone(), &[]);
    assert_eq!(given.nested("s1", &f.root("sub/AGENTS.md")), None);
    assert_eq!(given.nested("s1", &f.root("sub/x.rs")), None);
}

#[test]
fn sizes_read_as_people_say_them() {
    assert_eq!(size(900), "900 bytes");
    assert_eq!(size(32 * 1024), "32 KB");
    assert_eq!(size(2 * 1024 * 1024), "2 MB");
    assert_eq!(size(3 * 1024 * 1024 / 2), "1.5 MB");
}
