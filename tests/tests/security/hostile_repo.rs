//! Issue 27, "a cloned repo can exhaust the daemon's memory": a repository's skills whose
//! `SKILL.md` is a link to `/proc/self/pagemap` (endless), to `/dev/zero`, or to a file outside
//! the skill folder, and one 100 MB `SKILL.md`, are listed as broken skills with the reason — the
//! daemon, started under an address-space limit, reads none of them without bound and keeps
//! answering; the repository's good skill still loads.

use std::os::unix::fs::symlink;
use std::process::Command;

use synapse_tests::{TestEnv, bin};

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn hostile_skill_files_are_broken_skills_not_unbounded_reads() {
    let env = TestEnv::new();
    let repo = env.workdir().join("cloned");
    let skills = repo.join(".claude/skills");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let outside = env.root().join("elsewhere.md");
    std::fs::write(
        &outside,
        "---\nname: stolen\ndescription: read from outside the repo\n---\nconfidential\n",
    )
    .unwrap();
    for (name, target) in [
        ("pm", std::path::PathBuf::from("/proc/self/pagemap")),
        ("zero", "/dev/zero".into()),
        ("out", outside.clone()),
    ] {
        std::fs::create_dir_all(skills.join(name)).unwrap();
        symlink(&target, skills.join(name).join("SKILL.md")).unwrap();
    }
    std::fs::create_dir_all(skills.join("huge")).unwrap();
    let mut huge = String::from("---\nname: huge\ndescription: big\n---\n");
    huge.push_str(&"x".repeat(100 * 1024 * 1024));
    std::fs::write(skills.join("huge/SKILL.md"), huge).unwrap();
    std::fs::create_dir_all(skills.join("good")).unwrap();
    std::fs::write(
        skills.join("good/SKILL.md"),
        "---\nname: good\ndescription: A fine skill. Use when testing.\n---\nDo good.\n",
    )
    .unwrap();

    // The daemon runs under a 1 GiB address-space limit: an unbounded read would kill it.
    let mut start = Command::new("prlimit");
    start
        .arg("--as=1073741824")
        .arg(bin("synapse"))
        .args(["daemon", "start"]);
    env.apply_env(&mut start);
    let started = start.output().unwrap();
    assert!(started.status.success(), "{started:?}");
    let daemon = env.daemon_pid().unwrap();

    let mut list = Command::new(bin("synapse"));
    env.apply_env(&mut list);
    list.current_dir(&repo).args(["skill", "list"]);
    let listed = synapse_tests::run(&mut list);
    assert!(listed.success(), "{listed:?}");
    let text = format!("{}{}", listed.stdout, listed.stderr);
    for (name, why) in [
        ("pm", "outside"),
        ("zero", "not a regular file"),
        ("out", "outside"),
        ("huge", "larger than 4 MiB"),
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(name) && l.contains(why))
            .unwrap_or_else(|| panic!("{name} not listed as broken ({why}):\n{text}"));
        assert!(
            !line.contains("confidential") && !line.contains("stolen"),
            "{line}"
        );
    }
    assert!(text.contains("good"), "{text}");
    let mut load = Command::new(bin("synapse"));
    env.apply_env(&mut load);
    load.current_dir(&repo).args(["skill", "load", "good"]);
    let loaded = synapse_tests::run(&mut load);
    assert!(loaded.stdout.contains("Do good."), "{loaded:?}");
    // The daemon is alive and holds nothing like the 100 MB body.
    assert_eq!(env.daemon_pid(), Some(daemon));
    assert!(env.cli(&["daemon", "status"]).success());
    let rss = rss_kib(daemon);
    assert!(
        rss < 200 * 1024,
        "daemon RSS {rss} KiB after listing hostile skills"
    );
}
