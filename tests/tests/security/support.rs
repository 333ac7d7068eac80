//! Helpers of the security tests: folder snapshots that prove nothing changed, a search for
//! marker files an injection would create, and `synapse run` against the fake LLM.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use synapse_tests::fake_llm::FakeLlm;
use synapse_tests::{Run, TestEnv};

/// Every entry below a folder: relative path → kind, mode and content hash (links: target).
pub type Snapshot = BTreeMap<PathBuf, String>;

pub fn snapshot(dir: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    walk(dir, dir, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Snapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let mode = meta.permissions().mode() & 0o7777;
        let what = if meta.file_type().is_symlink() {
            format!("link -> {}", std::fs::read_link(&path).unwrap().display())
        } else if meta.is_dir() {
            walk(root, &path, out);
            format!("dir {mode:o}")
        } else {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let mut hash = DefaultHasher::new();
            bytes.hash(&mut hash);
            format!("file {mode:o} {} bytes #{:x}", bytes.len(), hash.finish())
        };
        out.insert(rel, what);
    }
}

/// Fails naming every entry added, removed or changed between two snapshots of `what`.
pub fn assert_unchanged(what: &str, before: &Snapshot, after: &Snapshot) {
    let mut diff: Vec<String> = before
        .iter()
        .filter(|(path, was)| after.get(*path) != Some(*was))
        .map(|(path, was)| match after.get(path) {
            Some(now) => format!("changed {}: {was} → {now}", path.display()),
            None => format!("removed {}", path.display()),
        })
        .collect();
    diff.extend(
        after
            .iter()
            .filter(|(path, _)| !before.contains_key(*path))
            .map(|(path, now)| format!("added {}: {now}", path.display())),
    );
    assert!(diff.is_empty(), "{what} changed:\n{}", diff.join("\n"));
}

/// Files named `pwned*` below `dir`: the marker every injection payload in these tests creates.
pub fn markers_below(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir)
        .into_keys()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pwned"))
        })
        .collect()
}

/// `synapse <args>` with both APIs pointed at `fake` and `vars` (the keys, the provider) added.
pub async fn synapse_with_llm(
    env: &TestEnv,
    fake: &FakeLlm,
    args: &[&str],
    vars: &[(&str, &str)],
) -> Run {
    let mut cmd = env.synapse();
    cmd.env("ANTHROPIC_BASE_URL", fake.anthropic_base_url())
        .env("OPENAI_BASE_URL", fake.openai_base_url())
        .envs(vars.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Run::from(tokio::process::Command::from(cmd).output().await.unwrap())
}
