//! Tests of [`super`]: each step of the guarantee, on a real folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn setup() -> (tempfile::TempDir, PathBuf, SnapshotGate) {
    setup_with_copy_limit(STAGING_MAX_BYTES)
}

/// Skills `a` and `b` (SKILL.md "<name> v1") and a gate over them.
fn setup_with_copy_limit(limit: u64) -> (tempfile::TempDir, PathBuf, SnapshotGate) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("skills");
    for name in ["a", "b"] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join("SKILL.md"), format!("{name} v1")).unwrap();
    }
    let versions = Versions::new(tmp.path().join("versions"));
    let gate = SnapshotGate::with_copy_limit(root.clone(), versions, limit);
    (tmp, root, gate)
}

fn before(gate: &SnapshotGate, work: Work, cwd: &Path) {
    gate.0.before(work, cwd);
}

#[test]
fn a_visible_target_is_saved_before_the_command() {
    let (_tmp, root, gate) = setup();
    before(
        &gate,
        Work::Shell("sed -i s/v1/v2/ a/SKILL.md".into()),
        &root,
    );
    std::fs::write(root.join("a/SKILL.md"), "a v2").unwrap();
    let run = gate.finish();
    assert_eq!(run.saved, vec![("a".to_string(), 1)]);
    let saved = gate.0.versions.list("a");
    assert_eq!(saved[0].reason, REASON_BEFORE);
}

#[test]
fn an_unseen_change_is_saved_from_the_copy_after_the_run() {
    let (tmp, root, gate) = setup();
    before(
        &gate,
        Work::Shell("python3 -c 'change things'".into()),
        &root,
    );
    std::fs::write(root.join("b/SKILL.md"), "b changed").unwrap();
    std::fs::create_dir_all(root.join("new")).unwrap();
    std::fs::write(root.join("new/SKILL.md"), "new").unwrap();
    let run = gate.finish();
    assert_eq!(run.saved, vec![("b".to_string(), 1)]);
    assert!(run.unversioned.is_empty());
    let versions = gate.0.versions.clone();
    versions.rollback("b", &root.join("b"), Some(1)).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("b/SKILL.md")).unwrap(),
        "b v1"
    );
    assert!(versions.list("new").is_empty());
    // The staging copy is gone.
    let left: Vec<_> = std::fs::read_dir(tmp.path().join("versions"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".staging-"))
        .collect();
    assert!(left.is_empty());
}

#[test]
fn a_skill_changed_unseen_then_named_keeps_its_start_of_run_bytes() {
    let (_tmp, root, gate) = setup();
    before(&gate, Work::Shell("./tool.sh".into()), &root);
    std::fs::write(root.join("a/SKILL.md"), "a by the script").unwrap();
    before(&gate, Work::Paths(vec![root.join("a/SKILL.md")]), &root);
    let run = gate.finish();
    assert_eq!(run.saved, vec![("a".to_string(), 1)]);
    let copy = gate.0.versions.list("a");
    assert_eq!(copy.len(), 1);
    gate.0
        .versions
        .rollback("a", &root.join("a"), Some(1))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("a/SKILL.md")).unwrap(),
        "a v1"
    );
}

#[test]
fn writes_elsewhere_and_new_skills_save_nothing() {
    let (tmp, root, gate) = setup();
    before(&gate, Work::Paths(vec![tmp.path().join("x.txt")]), &root);
    before(&gate, Work::Paths(vec![root.join("c/SKILL.md")]), &root);
    assert_eq!(gate.finish(), RunVersions::default());
}

#[test]
fn over_the_copy_limit_an_unseen_change_is_reported_and_a_seen_one_still_saved() {
    let (_tmp, root, gate) = setup_with_copy_limit(1);
    before(&gate, Work::Shell("./tool.sh".into()), &root);
    std::fs::write(root.join("b/SKILL.md"), "b by the tool").unwrap();
    before(
        &gate,
        Work::Shell("sed -i s/v1/v2/ a/SKILL.md".into()),
        &root,
    );
    let run = gate.finish();
    assert_eq!(run.saved, vec![("a".to_string(), 1)]);
    assert_eq!(run.unversioned, vec!["b".to_string()]);
    assert!(run.notes().contains("Warning: b was changed"));
}
