//! A project's plugin settings as they count: [`TrustedProjectPlugins`] answers
//! [`ProjectPluginSettings`] for every user of a plugin (hooks, commands and agents, MCP
//! servers). A project's `enabledPlugins` turns a plugin's hooks and servers on, and those run
//! outside the sandbox, so they count as project hooks do: only in a folder the user trusted
//! (`synapse trust`), and only as the user trusted each file — the copy pinned by content. A file
//! a session (or a `git pull`) changed since counts as it was when trusted; one never reviewed
//! counts not at all; a trust list or pin file that can't be read trusts nothing.

use std::path::{Path, PathBuf};

use synapse_shared::claude_plugins::{
    PROJECT_SETTINGS_FILES, ProjectLayers, ProjectPluginSettings,
};
use synapse_shared::trust;

use crate::workspace::trust_pins::{self, PinState};

/// The daemon's project plugin settings: the trust list and pins of `$SYNAPSE_HOME`.
#[derive(Debug, Clone)]
pub struct TrustedProjectPlugins {
    trust_file: PathBuf,
    pins: PathBuf,
}

impl TrustedProjectPlugins {
    /// For the daemon whose home is `synapse_home`.
    pub fn new(synapse_home: &Path) -> Self {
        Self {
            trust_file: synapse_home.join(trust::TRUST_FILE),
            pins: trust_pins::pin_file(synapse_home),
        }
    }
}

impl ProjectPluginSettings for TrustedProjectPlugins {
    fn layers(&self, root: &Path) -> Option<ProjectLayers> {
        let trusted = trust::load(&self.trust_file)
            .map(|list| trust::is_trusted(&list, root))
            .unwrap_or(false);
        if !trusted {
            return None;
        }
        let mut layers = ProjectLayers::default();
        for file in PROJECT_SETTINGS_FILES.iter().map(|f| root.join(f)) {
            if let Some(doc) = trusted_doc(&self.pins, &file) {
                layers.docs.push((file, doc));
            }
        }
        Some(layers)
    }

    fn deciding_files(&self, root: &Path) -> Vec<PathBuf> {
        let mut files = vec![self.trust_file.clone(), self.pins.clone()];
        files.extend(PROJECT_SETTINGS_FILES.iter().map(|f| root.join(f)));
        files
    }
}

/// The content of `file` that counts: the pinned copy, or (pinned before copies were kept) the
/// file itself while it matches its pin.
fn trusted_doc(pins: &Path, file: &Path) -> Option<serde_json::Value> {
    if let Some(copy) = trust_pins::trusted_content(pins, file) {
        return Some(copy);
    }
    if trust_pins::state(pins, file) != PinState::Matches {
        return None;
    }
    synapse_shared::claude_plugins::read_json(file)
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn only_a_trusted_project_counts_and_only_as_pinned() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("synapse");
        let root = t.path().join("proj");
        fs::create_dir_all(root.join(".claude")).unwrap();
        fs::create_dir_all(&home).unwrap();
        let settings = root.join(".claude/settings.json");
        fs::write(&settings, r#"{"enabledPlugins":{"kit@m":true}}"#).unwrap();
        let source = TrustedProjectPlugins::new(&home);
        assert_eq!(source.layers(&root), None, "untrusted: no layer");

        trust::add(&home.join(trust::TRUST_FILE), &root).unwrap();
        let layers = source.layers(&root).unwrap();
        assert!(
            layers.docs.is_empty(),
            "trusted but never pinned: {layers:?}"
        );

        trust_pins::pin(&trust_pins::pin_file(&home), &settings).unwrap();
        let layers = source.layers(&root).unwrap();
        assert_eq!(layers.docs.len(), 1);
        assert_eq!(layers.docs[0].1["enabledPlugins"]["kit@m"], true);

        // Rewritten since (by a session, say): the trusted copy still counts, not the new text.
        fs::write(&settings, r#"{"enabledPlugins":{"evil@m":true}}"#).unwrap();
        let layers = source.layers(&root).unwrap();
        assert_eq!(layers.docs[0].1["enabledPlugins"]["kit@m"], true);
        assert!(layers.docs[0].1["enabledPlugins"].get("evil@m").is_none());
    }
}
