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
    let files = load(&f.places, &f.root("sub")).files;
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
    let files = load(&f.places, &f.places.root).files;
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
fn imports_stay_in_the_project_and_the_users_instruction_folders_with_a_notice() {
    let f = Fixture::new();
    f.write(&f.home(".ssh/id_rsa"), "PRIVATE KEY");
    f.write(&f.home(".claude/mine.md"), "my own preferences");
    f.write(&f.home("notes.md"), "home notes");
    f.write(
        &f.root("AGENTS.md"),
        "@~/.ssh/id_rsa @~/.claude/mine.md\n@../notes.md @/etc/hostname @alice",
    );
    let loaded = load(&f.places, &f.places.root);
    assert_eq!(shown(&loaded.files), ["AGENTS.md", "~/.claude/mine.md"]);
    let notices: Vec<String> = loaded.skipped.iter().map(|s| s.to_string()).collect();
    let outside = "not imported: outside the project and the user's instruction folders";
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(notices[0].starts_with("AGENTS.md:1: `@~/.ssh/id_rsa` not imported: "));
    assert!(notices[1].starts_with(&format!("AGENTS.md:2: `@../notes.md` {outside}")));
    assert!(notices[2].starts_with(&format!("AGENTS.md:2: `@/etc/hostname` {outside}")));
    // The user's own file imports from the same places: not from elsewhere in the home.
    f.write(&f.home(".claude/CLAUDE.md"), "@~/notes.md @rules.md");
    f.write(&f.home(".claude/rules.md"), "my rules");
    let loaded = load(&f.places, &f.places.root);
    assert_eq!(
        shown(&loaded.files)[..2],
        ["~/.claude/CLAUDE.md", "~/.claude/rules.md"]
    );
    assert!(
        loaded.skipped[0]
            .to_string()
            .starts_with(&format!("~/.claude/CLAUDE.md:1: `@~/notes.md` {outside}"))
    );
}

#[test]
fn credential_stores_transcripts_and_binary_files_are_never_imported() {
    let f = Fixture::new();
    let secret = "sk-ant-SECRET-TOKEN";
    f.write(&f.home(".claude/.credentials.json"), secret);
    f.write(&f.home(".codex/auth.json"), secret);
    f.write(&f.home(".claude/projects/-other/s.jsonl"), secret);
    f.write(
        &f.places
            .synapse_home
            .clone()
            .unwrap()
            .join("sessions/x.jsonl"),
        secret,
    );
    std::fs::write(f.root("zeros.md"), vec![0u8; 1024 * 1024]).unwrap();
    f.write(&f.root(".env"), secret);
    f.write(
        &f.root("CLAUDE.md"),
        &format!(
            "rules\n@~/.claude/.credentials.json @~/.codex/auth.json\n@~/.claude/projects/-other/s.jsonl\n@{}/sessions/x.jsonl @zeros.md @.env",
            f.places.synapse_home.as_ref().unwrap().display()
        ),
    );
    let loaded = load(&f.places, &f.places.root);
    assert_eq!(shown(&loaded.files), ["CLAUDE.md"]);
    let prompt = section(&loaded.files);
    assert!(
        !prompt.contains(secret) && !prompt.contains('\0'),
        "{prompt}"
    );
    let notices: Vec<String> = loaded.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        notices[..3],
        [
            "CLAUDE.md:2: `@~/.claude/.credentials.json` not imported: a credential store",
            "CLAUDE.md:2: `@~/.codex/auth.json` not imported: a credential store",
            "CLAUDE.md:3: `@~/.claude/projects/-other/s.jsonl` not imported: a session log",
        ]
    );
    assert!(notices[3].ends_with("/sessions/x.jsonl` not imported: a session log"));
    assert_eq!(
        notices[4],
        "CLAUDE.md:4: `@zeros.md` not imported: binary content (1 MB), not text"
    );
    assert_eq!(
        notices[5],
        "CLAUDE.md:4: `@.env` not imported: a credential store"
    );
    // A symlink with an innocent name is judged by what it points at.
    symlink(
        f.home(".claude/.credentials.json"),
        f.home(".claude/style.md"),
    )
    .unwrap();
    f.write(&f.root("CLAUDE.md"), "@~/.claude/style.md");
    let loaded = load(&f.places, &f.places.root);
    assert_eq!(shown(&loaded.files), ["CLAUDE.md"]);
    assert!(
        loaded.skipped[0]
            .to_string()
            .ends_with("a credential store")
    );
}

#[test]
fn a_fifo_instruction_file_is_named_and_skipped_at_once() {
    let f = Fixture::new();
    let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
    nix::unistd::mkfifo(&f.root("AGENTS.md"), mode).unwrap();
    nix::unistd::mkfifo(&f.root("pipe.md"), mode).unwrap();
    f.write(&f.root("CLAUDE.md"), "@pipe.md");
    let places = f.places.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(load(&places, &places.root));
    });
    let loaded = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("loading blocked on a FIFO");
    assert_eq!(shown(&loaded.files), ["CLAUDE.md"]);
    let notices: Vec<String> = loaded.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        notices,
        [
            "AGENTS.md not given to the model: it is a FIFO, not a regular file",
            "CLAUDE.md:1: `@pipe.md` not imported: it is a FIFO, not a regular file",
        ]
    );
}

#[test]
fn a_symlink_out_is_not_read_and_a_second_name_of_a_file_is_given_once() {
    let f = Fixture::new();
    symlink("/etc/passwd", f.root("AGENTS.md")).unwrap();
    let loaded = load(&f.places, &f.places.root);
    assert!(loaded.files.is_empty());
    assert!(
        loaded.skipped[0]
            .to_string()
            .starts_with("AGENTS.md not given to the model: it resolves to /etc/passwd, outside"),
        "{:?}",
        loaded.skipped
    );
    std::fs::remove_file(f.root("AGENTS.md")).unwrap();
    f.write(&f.root("AGENTS.md"), "shared rules");
    symlink(f.root("AGENTS.md"), f.root("CLAUDE.md")).unwrap();
    let files = load(&f.places, &f.places.root).files;
    assert_eq!(shown(&files), ["AGENTS.md"]);
}

#[test]
fn a_huge_file_is_cut_with_a_note_and_the_total_budget_holds() {
    let f = Fixture::new();
    f.write(&f.root("AGENTS.md"), &"a".repeat(2 * 1024 * 1024));
    f.write(&f.root("CLAUDE.md"), &"b".repeat(40 * 1024));
    f.write(&f.root("CLAUDE.local.md"), &"c".repeat(10 * 1024));
    f.write(&f.root("sub/AGENTS.md"), "late");
    let files = load(&f.places, &f.root("sub")).files;
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
    let loaded = load(&f.places, &f.places.root);
    given.record_prompt("s1", f.places.clone(), &loaded);
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
    given.record_prompt("s1", f.places.clone(), &Loaded::default());
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
