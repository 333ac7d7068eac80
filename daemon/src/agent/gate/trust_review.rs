//! What `synapse trust DIR` accepts, shown before it is accepted. [`review`] reads every file
//! trusting pins — the project's settings files, its custom commands and agents, its MCP
//! configs, and the project files each hook runs (user-level hooks included,
//! [`crate::hooks::named_files`]) — once, into a snapshot, and lists each one that is new or
//! changed since the last trust: a unified diff against the trusted copy when one is kept, its
//! SHA-256 and first lines when not. The review carries a [`Review::digest`] of the snapshot;
//! [`accept`] pins the snapshot's own bytes, so what is pinned is exactly what was shown, and
//! the caller refuses an accept whose digest is not the one of a fresh review (the content
//! moved while the user read it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::hooks::HookEntry;
use crate::hooks::named_files::{HookPlace, Named, named_files};
use crate::workspace::trust_pins;

/// Lines of a diff (or of a new file's start) shown per file; the rest is counted.
pub const DETAIL_LINES_MAX: usize = 120;
/// First lines of a file with no trusted copy to compare with.
const HEAD_LINES: usize = 20;

/// What a reviewed file is to the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Settings,
    HookScript,
    Command,
    Agent,
    Mcp,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Settings => "settings",
            ItemKind::HookScript => "hook script",
            ItemKind::Command => "command",
            ItemKind::Agent => "agent",
            ItemKind::Mcp => "MCP servers",
        }
    }
}

/// One file new or changed since the last trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewItem {
    pub kind: ItemKind,
    pub path: PathBuf,
    /// Never pinned before (else: changed since it was).
    pub new: bool,
    /// What it does (for a hook script: the hooks that run it).
    pub about: String,
    /// The unified diff against the trusted copy, or the hash and first lines.
    pub detail: String,
}

/// What trusting a folder would accept now.
#[derive(Debug, Clone)]
pub struct Review {
    pub root: PathBuf,
    /// Every file trusting pins, as read for this review.
    snapshot: Vec<(PathBuf, Vec<u8>)>,
    pub items: Vec<ReviewItem>,
    /// What trusting can't make run (a hook naming a folder), for the user.
    pub warnings: Vec<String>,
    pub digest: String,
}

/// Where a review looks.
pub struct ReviewPlaces<'a> {
    pub pins: &'a Path,
    /// The user's home (`~/.claude`, `$HOME` in hook commands).
    pub home: Option<&'a Path>,
    /// Every hook that could run in the project (the user's and the project's as they read now).
    pub hooks: &'a [HookEntry],
}

/// Reads what trusting `root` would pin and compares it with the pins.
pub fn review(root: &Path, places: &ReviewPlaces<'_>) -> Review {
    let mut warnings = Vec::new();
    let mut files: Vec<(PathBuf, ItemKind, String)> = Vec::new();
    for name in trust_pins::PINNED_PROJECT_FILES {
        files.push((
            root.join(name),
            ItemKind::Settings,
            "project settings".into(),
        ));
    }
    for path in crate::agent::custom::files::project_files(root) {
        let agent = path.components().any(|c| c.as_os_str() == "agents");
        let kind = if agent {
            ItemKind::Agent
        } else {
            ItemKind::Command
        };
        files.push((path, kind, String::new()));
    }
    let mcp = synapse_mcp::config::PROJECT_CONFIG_FILES
        .into_iter()
        .chain([synapse_mcp::sources::VSCODE_MCP_JSON]);
    for name in mcp {
        let about = "each server still needs `synapse mcp approve NAME`".to_string();
        files.push((root.join(name), ItemKind::Mcp, about));
    }
    let mut scripts: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for hook in places.hooks {
        let place = HookPlace::new(root, root, hook.origin.plugin_root.as_deref(), places.home);
        let label = format!(
            "{} hook `{}` (in {})",
            hook.event.name(),
            hook.command.lines().next().unwrap_or(""),
            hook.origin.file.display()
        );
        for named in named_files(&hook.command, &place) {
            match named {
                Named::File(p) => scripts.entry(p).or_default().push(label.clone()),
                Named::Unpinnable { path, why } => warnings.push(format!(
                    "{label} names {}, which {why}: it stays held; name the script file itself",
                    path.display()
                )),
            }
        }
    }
    for (path, hooks) in scripts {
        files.push((
            path,
            ItemKind::HookScript,
            format!("run by {}", hooks.join(", ")),
        ));
    }
    // A file named twice (a hook that runs a command file) is reviewed once, as what it is first.
    let mut seen = std::collections::BTreeSet::new();
    files.retain(|(path, _, _)| seen.insert(path.clone()));

    let pinned = trust_pins::pinned(places.pins).unwrap_or_default();
    let mut snapshot = Vec::new();
    let mut items = Vec::new();
    for (path, kind, about) in files {
        let bytes = match read(&path) {
            Ok(Some(b)) => b,
            Ok(None) => continue,
            Err(e) => {
                warnings.push(format!(
                    "{} cannot be read ({e}); it is not trusted",
                    path.display()
                ));
                continue;
            }
        };
        let hash = trust_pins::hash_bytes(&bytes);
        let before = pinned.get(&path.display().to_string());
        if before != Some(&hash) {
            let old = before.and_then(|_| trust_pins::trusted_bytes(places.pins, &path));
            items.push(ReviewItem {
                kind,
                new: before.is_none(),
                detail: detail(old.as_deref(), &bytes, &hash),
                path: path.clone(),
                about,
            });
        }
        snapshot.push((path, bytes));
    }
    snapshot.sort_by(|a, b| a.0.cmp(&b.0));
    let digest = digest_of(root, &snapshot);
    Review {
        root: root.to_path_buf(),
        snapshot,
        items,
        warnings,
        digest,
    }
}

/// Pins the reviewed snapshot's bytes: from now on each file counts while it reads as shown.
pub fn accept(review: &Review, pins: &Path) -> Result<(), trust_pins::PinError> {
    trust_pins::pin_contents(pins, &review.snapshot)
}

/// The file's bytes: `None` when there is none (a missing file, nothing to pin); an error for
/// something that is there but is not a readable regular file.
fn read(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    synapse_shared::bounded::read_bytes(path, None, synapse_shared::bounded::CONFIG_MAX_BYTES)
        .map(Some)
}

fn digest_of(root: &Path, snapshot: &[(PathBuf, Vec<u8>)]) -> String {
    let mut h = Sha256::new();
    h.update(root.display().to_string().as_bytes());
    for (path, bytes) in snapshot {
        h.update(b"\n");
        h.update(path.display().to_string().as_bytes());
        h.update(b"\0");
        h.update(trust_pins::hash_bytes(bytes).as_bytes());
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A diff against the trusted copy, or (no copy, or not text) the hash and first lines.
fn detail(old: Option<&[u8]>, new: &[u8], hash: &str) -> String {
    let new_text = std::str::from_utf8(new).ok();
    if let (Some(old), Some(new_text)) = (old.and_then(|o| std::str::from_utf8(o).ok()), new_text) {
        let diff = similar::TextDiff::from_lines(old, new_text);
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header("as trusted", "now")
            .to_string();
        return cut(&text, DETAIL_LINES_MAX);
    }
    let mut out = format!("sha256 {hash}, {} bytes", new.len());
    match new_text {
        Some(text) => {
            out.push('\n');
            out.push_str(&cut(text, HEAD_LINES));
        }
        None => out.push_str(" (not text)"),
    }
    out
}

/// The first `max` lines of `text`, with a count of the rest.
fn cut(text: &str, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines
        .iter()
        .take(max)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > max {
        out.push_str(&format!("\n… {} more lines", lines.len() - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::HookSet;
    use crate::hooks::config::HookOrigin;

    #[test]
    fn a_review_lists_what_changed_with_a_diff_and_accepting_pins_what_was_shown() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("proj");
        std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
        std::fs::create_dir_all(root.join(".claude/commands")).unwrap();
        let settings = root.join(".claude/settings.json");
        let script = root.join(".claude/hooks/fmt.sh");
        std::fs::write(&settings, "{}").unwrap();
        std::fs::write(&script, "echo fmt\n").unwrap();
        std::fs::write(root.join(".claude/commands/go.md"), "Go.\n").unwrap();
        std::fs::write(root.join(".mcp.json"), r#"{"mcpServers": {}}"#).unwrap();
        let mut set = HookSet::default();
        let origin = HookOrigin {
            file: settings.clone(),
            plugin_root: None,
            plugin_data: None,
        };
        set.add(
            &serde_json::json!({"PreToolUse": [{"hooks": [{"command": "sh .claude/hooks/fmt.sh"}]}],
                                "Stop": [{"hooks": [{"command": "node .claude"}]}]}),
            &origin,
        );
        let pins = trust_pins::pin_file(&base.join("home"));
        let places = ReviewPlaces {
            pins: &pins,
            home: None,
            hooks: &set.entries,
        };

        let first = review(&root, &places);
        let kinds: Vec<ItemKind> = first.items.iter().map(|i| i.kind).collect();
        assert_eq!(
            kinds,
            [
                ItemKind::Settings,
                ItemKind::Command,
                ItemKind::Mcp,
                ItemKind::HookScript
            ]
        );
        assert!(first.items.iter().all(|i| i.new));
        let hook = &first.items[3];
        assert!(
            hook.about
                .contains("PreToolUse hook `sh .claude/hooks/fmt.sh`"),
            "{hook:?}"
        );
        assert!(hook.detail.starts_with("sha256 ") && hook.detail.contains("echo fmt"));
        assert!(
            first.warnings[0].contains("is a folder"),
            "{:?}",
            first.warnings
        );

        // The same content reviews to the same digest; a change moves it.
        assert_eq!(review(&root, &places).digest, first.digest);
        std::fs::write(&script, "echo fmt\necho pwned\n").unwrap();
        let moved = review(&root, &places);
        assert_ne!(moved.digest, first.digest);

        // Accepting the first review pins what it showed, not what the file reads by now.
        accept(&first, &pins).unwrap();
        let after = review(&root, &places);
        assert_eq!(after.items.len(), 1, "{:?}", after.items);
        let changed = &after.items[0];
        assert!(!changed.new && changed.path == script);
        assert!(changed.detail.contains("+echo pwned"), "{}", changed.detail);
        assert!(
            changed.detail.contains("--- as trusted"),
            "{}",
            changed.detail
        );

        accept(&after, &pins).unwrap();
        assert!(review(&root, &places).items.is_empty());
    }

    #[test]
    fn long_details_are_cut_with_a_count() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let shown = detail(None, text.as_bytes(), "abc");
        assert!(shown.contains("line 19") && !shown.contains("line 20\n"));
        assert!(shown.ends_with("… 180 more lines"), "{shown}");
        assert!(detail(None, &[0xff, 0xfe], "abc").ends_with("(not text)"));
    }
}
