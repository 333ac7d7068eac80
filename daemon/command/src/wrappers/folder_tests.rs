use super::*;
use pretty_assertions::assert_eq;
use std::os::unix::fs::PermissionsExt;

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn sync_rewrites_only_changes_removes_stale_and_leaves_other_prefixes() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("mcp:a:b"), "keep").unwrap();
    fs::write(bin.join("skill:old:x"), "stale").unwrap();
    fs::write(bin.join(".skill:c:d.tmp.1.2"), "crash").unwrap();
    let mut w = WrapperFolder::open(bin.clone(), "skill:");
    assert!(
        !bin.join(".skill:c:d.tmp.1.2").exists(),
        "crash leftovers go"
    );
    let wanted: BTreeMap<String, String> = [("skill:a:b".to_string(), "one".to_string())].into();
    let c = w.sync(wanted.clone(), &|_| false);
    assert_eq!(
        (c.written, c.removed),
        (
            vec!["skill:a:b".to_string()],
            vec!["skill:old:x".to_string()]
        )
    );
    assert_eq!(mode(&bin.join("skill:a:b")), WRAPPER_MODE);
    let again = WrapperFolder::open(bin.clone(), "skill:").sync(wanted, &|_| false);
    assert_eq!(again, WrapperChanges::default());
    assert_eq!(fs::read_to_string(bin.join("mcp:a:b")).unwrap(), "keep");
}

#[test]
fn keep_leaves_unwanted_files_and_bad_names_are_reported_not_written() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    let mut w = WrapperFolder::open(bin.clone(), "mcp:");
    let first: BTreeMap<String, String> = [
        ("mcp:down:t".to_string(), "a".to_string()),
        ("mcp:gone:t".to_string(), "b".to_string()),
    ]
    .into();
    assert_eq!(w.sync(first, &|_| false).written.len(), 2);
    let long = format!("mcp:s:{}", "x".repeat(300));
    let second: BTreeMap<String, String> = [
        ("mcp:up:t".to_string(), "c".to_string()),
        ("mcp:../escape".to_string(), "d".to_string()),
        (long, "e".to_string()),
    ]
    .into();
    let c = w.sync(second, &|name| name.starts_with("mcp:down:"));
    assert_eq!(c.removed, ["mcp:gone:t"]);
    assert_eq!(c.written, ["mcp:up:t"]);
    assert_eq!(c.errors.len(), 2, "{:?}", c.errors);
    assert!(
        c.errors.iter().any(|e| e.contains("306 bytes")),
        "{:?}",
        c.errors
    );
    assert!(bin.join("mcp:down:t").exists());
    assert!(!t.path().join("escape").exists());
}

#[test]
fn new_wrappers_become_executable_only_when_complete_and_never_clobber() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skill:a:b");
    write_new(&path, b"#!/bin/sh\necho hi\n", WRAPPER_MODE).unwrap();
    assert_eq!(mode(&path), WRAPPER_MODE);
    let err = write_new(&path, b"other", WRAPPER_MODE).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(fs::read_to_string(&path).unwrap(), "#!/bin/sh\necho hi\n");

    // A sync over thousands of new wrappers (the parallel path) writes each one whole.
    let mut writer = WrapperFolder::open(dir.path().join("bin"), "skill:");
    let wanted: BTreeMap<String, String> = (0..600)
        .map(|i| (format!("skill:s{i}:run"), format!("#!/bin/sh\necho {i}\n")))
        .collect();
    let changes = writer.sync(wanted.clone(), &|_| false);
    assert_eq!(changes.written.len(), 600, "{:?}", changes.errors);
    for (command, content) in &wanted {
        let p = dir.path().join("bin").join(command);
        assert_eq!(&fs::read_to_string(&p).unwrap(), content);
        assert_eq!(mode(&p), WRAPPER_MODE);
    }
}

#[test]
fn a_removed_folder_is_recreated_on_the_next_write() {
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    let mut w = WrapperFolder::open(bin.clone(), "skill:");
    let mut c = WrapperChanges::default();
    w.put("skill:a:b", "one".into(), &mut c);
    fs::remove_dir_all(&bin).unwrap();
    w.forget();
    w.put("skill:a:b", "one".into(), &mut c);
    assert_eq!(c.written, ["skill:a:b", "skill:a:b"], "{:?}", c.errors);
    assert_eq!(fs::read_to_string(bin.join("skill:a:b")).unwrap(), "one");
}
