//! Which skills' `allowed-tools` the user approved, pinned by the content of the skill folder.
//!
//! Skills live in folders a session may write (`$SYNAPSE_HOME/skills` is writable from the
//! sandbox by design, so the agent can grow its memory). Whatever in a skill skips a question
//! must therefore not count on its own: a skill's `allowed-tools` pre-approve nothing until the
//! user approved that exact folder content — `synapse skill approve <name>`, or "always" to the
//! question the REPL asks at `skill load`. The approval records a SHA-256 over every file of the
//! folder ([`folder_hash`]); a skill created or changed by any session, or by anyone since the
//! approval, is [`GrantState::Changed`] or [`GrantState::NotApproved`] again.
//!
//! The record lives in `$SYNAPSE_HOME/skill_approvals.json`, outside every sandbox-writable
//! folder and on the gate's list of rules files, so no session can approve for itself. Only the
//! daemon writes it (atomically, under [`ApprovalStore`]'s lock); a record that does not parse
//! approves nothing (fail closed) and is reported, never reset.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The approvals file's name inside `$SYNAPSE_HOME`.
pub use synapse_shared::paths::SKILL_APPROVALS_FILE as APPROVALS_FILE;
/// A folder with more files than this is not hashed (and so cannot be approved).
const HASH_MAX_FILES: usize = 2_000;
/// Nor one whose files hold more bytes than this in all.
const HASH_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Folders deeper than this below the skill folder are not followed.
const HASH_MAX_DEPTH: usize = 8;

/// Whether a skill's `allowed-tools` may pre-approve anything now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantState {
    /// The user approved exactly this content.
    Approved,
    /// Never approved (or the approval was revoked).
    NotApproved,
    /// Approved once, but a file of the folder changed since.
    Changed,
    /// The folder could not be hashed or the record not read: nothing is pre-approved.
    Unknown(String),
}

impl GrantState {
    /// What the model and the user are told about an unapproved list.
    pub fn why_not(&self) -> Option<String> {
        match self {
            GrantState::Approved => None,
            GrantState::NotApproved => Some("the user has not approved them".into()),
            GrantState::Changed => Some("the skill changed since the user approved them".into()),
            GrantState::Unknown(why) => Some(why.clone()),
        }
    }

    /// A short word for listings (`skill show`).
    pub fn label(&self) -> &'static str {
        match self {
            GrantState::Approved => "approved",
            GrantState::NotApproved => "not approved",
            GrantState::Changed => "changed since approved",
            GrantState::Unknown(_) => "unknown",
        }
    }
}

/// One approval as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Approval {
    name: String,
    sha256: String,
    allowed_tools: Vec<String>,
    approved_at_unix: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ApprovalsFile {
    /// Keyed by the skill folder's absolute path.
    #[serde(default)]
    skills: BTreeMap<PathBuf, Approval>,
}

/// The approvals record of one `$SYNAPSE_HOME`.
pub struct ApprovalStore {
    file: PathBuf,
    /// Serialises read-modify-write; readers read the file afresh (it is small).
    lock: Mutex<()>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a valid approvals file ({reason}); fix or remove it", path.display())]
    Corrupt { path: PathBuf, reason: String },
    #[error("{0}")]
    Hash(String),
}

impl ApprovalStore {
    pub fn new(synapse_home: &Path) -> Self {
        Self {
            file: synapse_home.join(APPROVALS_FILE),
            lock: Mutex::new(()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.file
    }

    /// The state of the skill in `dir` as its folder is now.
    pub fn state(&self, dir: &Path) -> GrantState {
        let record = match self.read() {
            Ok(r) => r,
            Err(e) => return GrantState::Unknown(e.to_string()),
        };
        let Some(approval) = record.skills.get(dir) else {
            return GrantState::NotApproved;
        };
        match folder_hash(dir) {
            Ok(h) if h == approval.sha256 => GrantState::Approved,
            Ok(_) => GrantState::Changed,
            Err(e) => GrantState::Unknown(e),
        }
    }

    /// Records that the user approved the skill `name` in `dir` as it is now, with its list.
    /// Returns the hash recorded.
    pub fn approve(
        &self,
        name: &str,
        dir: &Path,
        allowed_tools: &[String],
    ) -> Result<String, ApprovalError> {
        let sha256 = folder_hash(dir).map_err(ApprovalError::Hash)?;
        let _guard = self.lock.lock();
        let mut record = self.read()?;
        let approved_at_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        record.skills.insert(
            dir.to_path_buf(),
            Approval {
                name: name.to_string(),
                sha256: sha256.clone(),
                allowed_tools: allowed_tools.to_vec(),
                approved_at_unix,
            },
        );
        self.write(&record)?;
        Ok(sha256)
    }

    /// Forgets the approval of the skill in `dir`; whether there was one.
    pub fn revoke(&self, dir: &Path) -> Result<bool, ApprovalError> {
        let _guard = self.lock.lock();
        let mut record = self.read()?;
        let had = record.skills.remove(dir).is_some();
        if had {
            self.write(&record)?;
        }
        Ok(had)
    }

    fn read(&self) -> Result<ApprovalsFile, ApprovalError> {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ApprovalsFile::default());
            }
            Err(source) => {
                return Err(ApprovalError::Io {
                    path: self.file.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|e| ApprovalError::Corrupt {
            path: self.file.clone(),
            reason: e.to_string(),
        })
    }

    fn write(&self, record: &ApprovalsFile) -> Result<(), ApprovalError> {
        let mut text = serde_json::to_vec_pretty(record).map_err(|e| ApprovalError::Corrupt {
            path: self.file.clone(),
            reason: e.to_string(),
        })?;
        text.push(b'\n');
        synapse_shared::atomic::write_atomic_mode(&self.file, &text, 0o600).map_err(|source| {
            ApprovalError::Io {
                path: self.file.clone(),
                source,
            }
        })
    }
}

/// SHA-256 over every entry of the skill folder: relative path, kind, and content, in path order.
/// A symlink counts with its target text and, when it leads out of the folder to a file, with
/// that file's content too — so a script reached through a link cannot change while the approval
/// stands; a link leading out to a folder cannot be approved at all (its files could change
/// unseen). Bounded: a folder with more than [`HASH_MAX_FILES`] entries or [`HASH_MAX_BYTES`]
/// bytes is refused rather than half-hashed.
pub fn folder_hash(dir: &Path) -> Result<String, String> {
    let mut entries = Vec::new();
    collect(dir, dir, 0, &mut entries)?;
    entries.sort();
    let inside =
        std::fs::canonicalize(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    for rel in entries {
        let path = dir.join(&rel);
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        hasher.update(rel.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            hasher.update(b"L");
            hasher.update(target.as_os_str().as_encoded_bytes());
            hash_link_target(&mut hasher, &path, &inside, &mut total)?;
        } else if meta.is_file() {
            hasher.update(b"F");
            hash_content(&mut hasher, &path, meta.len(), dir, &mut total)?;
        } else {
            hasher.update(b"O");
        }
        hasher.update([0]);
    }
    Ok(hex(&hasher.finalize()))
}

/// What a symlink of the skill reaches outside its folder: a file's content is hashed, a folder
/// is refused; a link inside the folder (its target is hashed as its own entry) or a dangling
/// one adds nothing.
fn hash_link_target(
    hasher: &mut Sha256,
    link: &Path,
    inside: &Path,
    total: &mut u64,
) -> Result<(), String> {
    let Ok(resolved) = std::fs::canonicalize(link) else {
        return Ok(());
    };
    if resolved.starts_with(inside) {
        return Ok(());
    }
    let meta = std::fs::metadata(&resolved)
        .map_err(|e| format!("cannot read {}: {e}", resolved.display()))?;
    if meta.is_dir() {
        return Err(format!(
            "{} links to the folder {} outside the skill, whose files could change without the \
             approval noticing; copy it into the skill to approve it",
            link.display(),
            resolved.display()
        ));
    }
    if meta.is_file() {
        hasher.update(b"C");
        hash_content(hasher, &resolved, meta.len(), inside, total)?;
    }
    Ok(())
}

/// Feeds `len` bytes of the regular file `path` to `hasher`, counting them against the folder's
/// byte budget.
fn hash_content(
    hasher: &mut Sha256,
    path: &Path,
    len: u64,
    dir: &Path,
    total: &mut u64,
) -> Result<(), String> {
    *total += len;
    if *total > HASH_MAX_BYTES {
        return Err(format!(
            "{} holds more than {} MB; too large to approve",
            dir.display(),
            HASH_MAX_BYTES / (1024 * 1024)
        ));
    }
    let mut file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut buf = [0u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let n = file
            .read(&mut buf)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        let n = n.min(usize::try_from(left).unwrap_or(usize::MAX));
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    Ok(())
}

/// What `synapse skill approve` did.
#[derive(Debug, Clone)]
pub struct ApproveOutcome {
    pub skill: super::SkillSummary,
    /// The patterns the list pre-approves now, and the entries it never will (with why).
    pub patterns: Vec<String>,
    pub skipped: Vec<String>,
    /// The folder hash recorded (empty on revoke).
    pub sha256: String,
    pub revoked: bool,
}

/// Approves (or, with `revoke`, forgets) the `allowed-tools` of the skill `name` visible from
/// `scope`, as its folder is now. Only the user's own client reaches this (the service refuses
/// sandboxed callers).
pub fn approve_skill(
    store: &super::SkillStore,
    name: &str,
    scope: &Path,
    revoke: bool,
) -> Result<ApproveOutcome, super::SkillError> {
    let skill = store.show_in(name, scope)?;
    let fail = |reason: String| super::SkillError::Approval {
        name: skill.name.clone(),
        reason,
    };
    let t = super::allowed_tools::translate(&skill.allowed_tools);
    if revoke {
        let revoked = store
            .approvals()
            .revoke(&skill.dir)
            .map_err(|e| fail(e.to_string()))?;
        return Ok(ApproveOutcome {
            skill,
            patterns: Vec::new(),
            skipped: t.skipped,
            sha256: String::new(),
            revoked,
        });
    }
    if skill.allowed_tools.is_empty() {
        return Err(fail(
            "its SKILL.md lists no allowed-tools; there is nothing to approve".into(),
        ));
    }
    let sha256 = store
        .approvals()
        .approve(&skill.name, &skill.dir, &skill.allowed_tools)
        .map_err(|e| fail(e.to_string()))?;
    Ok(ApproveOutcome {
        skill,
        patterns: t.patterns,
        skipped: t.skipped,
        sha256,
        revoked: false,
    })
}

fn collect(root: &Path, dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in read {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        if kind.is_dir() {
            if depth >= HASH_MAX_DEPTH {
                return Err(format!("{} is nested too deep to approve", path.display()));
            }
            collect(root, &path, depth + 1, out)?;
        } else {
            out.push(rel);
        }
        if out.len() > HASH_MAX_FILES {
            return Err(format!(
                "{} holds more than {HASH_MAX_FILES} files; too many to approve",
                root.display()
            ));
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(dir: &Path) -> PathBuf {
        let d = dir.join("skills/helper");
        std::fs::create_dir_all(d.join("scripts")).unwrap();
        std::fs::write(
            d.join("SKILL.md"),
            "---\nname: helper\ndescription: x\nallowed-tools: [Write]\n---\nbody\n",
        )
        .unwrap();
        std::fs::write(d.join("scripts/run.sh"), "echo hi\n").unwrap();
        d
    }

    #[test]
    fn an_approval_holds_until_any_file_of_the_folder_changes() {
        let home = tempfile::tempdir().unwrap();
        let dir = skill(home.path());
        let store = ApprovalStore::new(home.path());
        assert_eq!(store.state(&dir), GrantState::NotApproved);
        store.approve("helper", &dir, &["Write".into()]).unwrap();
        assert_eq!(store.state(&dir), GrantState::Approved);
        // A script (not only SKILL.md) changing voids it.
        std::fs::write(dir.join("scripts/run.sh"), "rm -rf ~\n").unwrap();
        assert_eq!(store.state(&dir), GrantState::Changed);
        store.approve("helper", &dir, &["Write".into()]).unwrap();
        assert_eq!(store.state(&dir), GrantState::Approved);
        // So does a new file.
        std::fs::write(dir.join("extra.py"), "x").unwrap();
        assert_eq!(store.state(&dir), GrantState::Changed);
        assert!(store.revoke(&dir).unwrap());
        assert_eq!(store.state(&dir), GrantState::NotApproved);
    }

    #[test]
    fn a_corrupt_record_approves_nothing_and_is_kept() {
        let home = tempfile::tempdir().unwrap();
        let dir = skill(home.path());
        let store = ApprovalStore::new(home.path());
        store.approve("helper", &dir, &[]).unwrap();
        std::fs::write(store.path(), "{ not json").unwrap();
        assert!(matches!(store.state(&dir), GrantState::Unknown(_)));
        assert!(store.approve("helper", &dir, &[]).is_err());
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "{ not json");
    }

    #[test]
    fn a_symlink_counts_by_its_target_text() {
        let home = tempfile::tempdir().unwrap();
        let dir = skill(home.path());
        std::os::unix::fs::symlink("scripts/run.sh", dir.join("link")).unwrap();
        let a = folder_hash(&dir).unwrap();
        std::fs::remove_file(dir.join("link")).unwrap();
        std::os::unix::fs::symlink("SKILL.md", dir.join("link")).unwrap();
        assert_ne!(a, folder_hash(&dir).unwrap());
    }

    #[test]
    fn a_file_reached_through_a_link_out_of_the_folder_cannot_change_unseen() {
        let home = tempfile::tempdir().unwrap();
        let dir = skill(home.path());
        let outside = home.path().join("elsewhere.sh");
        std::fs::write(&outside, "echo safe\n").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("scripts/tool.sh")).unwrap();
        let store = ApprovalStore::new(home.path());
        store.approve("helper", &dir, &["Write".into()]).unwrap();
        assert_eq!(store.state(&dir), GrantState::Approved);
        std::fs::write(&outside, "rm -rf ~\n").unwrap();
        assert_eq!(store.state(&dir), GrantState::Changed);
    }

    #[test]
    fn a_link_to_a_folder_outside_cannot_be_approved() {
        let home = tempfile::tempdir().unwrap();
        let dir = skill(home.path());
        let lib = home.path().join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        std::os::unix::fs::symlink(&lib, dir.join("scripts/lib")).unwrap();
        let err = folder_hash(&dir).unwrap_err();
        assert!(err.contains("outside the skill"), "{err}");
        let store = ApprovalStore::new(home.path());
        assert!(matches!(store.state(&dir), GrantState::NotApproved));
        assert!(store.approve("helper", &dir, &[]).is_err());
    }
}
