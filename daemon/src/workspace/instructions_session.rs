//! What one chat session was given of its instruction files ([`SessionInstructions`]), and the
//! nested files it is still to be given: when the agent's `read`, `edit` or `write` first touches
//! a folder whose chain below the root holds an instruction file not yet given, the shell's
//! router appends it to that result. What a nested load skips is named there, with nothing of
//! its content.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::{
    INSTRUCTION_FILES, InstructionFile, Loaded, Loader, Places, Scope, Skipped, TOTAL_MAX_BYTES,
    chain, normalize, real,
};

/// What one chat session was given, and what its agent is still to be given when it works in a
/// subfolder. Shared by the clones of the session's workspace binding; entries are per shell
/// session name, so only the session that recorded its prompt gets nested files.
#[derive(Debug, Default)]
pub struct SessionInstructions {
    inner: Mutex<HashMap<String, Given>>,
}

#[derive(Debug)]
struct Given {
    places: Places,
    /// Every file given so far (the prompt's and the nested ones), by real path.
    seen: HashSet<PathBuf>,
    /// What was given, in order (for `/memory`).
    files: Vec<InstructionFile>,
    /// What the prompt left out (told to the user when a client attaches).
    skipped: Vec<Skipped>,
    /// Bytes of nested files given so far.
    nested_bytes: usize,
}

impl SessionInstructions {
    /// Records what the prompt of the shell session `session` holds.
    pub fn record_prompt(&self, session: &str, places: Places, loaded: &Loaded) {
        let seen = loaded.files.iter().map(|f| real(&f.path)).collect();
        self.inner.lock().insert(
            session.to_owned(),
            Given {
                places,
                seen,
                files: loaded.files.clone(),
                skipped: loaded.skipped.clone(),
                nested_bytes: 0,
            },
        );
    }

    /// What the prompt of `session` left out, as notices for the user.
    pub fn skipped(&self, session: &str) -> Vec<String> {
        self.inner
            .lock()
            .get(session)
            .map(|g| g.skipped.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    }

    /// Every file the session was given so far, in order.
    pub fn given(&self, session: &str) -> Vec<InstructionFile> {
        self.inner
            .lock()
            .get(session)
            .map(|g| g.files.clone())
            .unwrap_or_default()
    }

    /// The instruction files not yet given to `session` in the folders from the root down to
    /// the folder of `touched` (a file the agent read or changed), rendered to append to that
    /// command's result; `None` when there are none. Blocking (it reads files).
    pub fn nested(&self, session: &str, touched: &Path) -> Option<String> {
        let mut inner = self.inner.lock();
        let given = inner.get_mut(session)?;
        let touched = normalize(touched);
        let folder = touched.parent()?;
        if !folder.starts_with(&given.places.root) {
            return None;
        }
        // A file the agent reads itself needs no second copy.
        if INSTRUCTION_FILES
            .iter()
            .any(|n| touched.file_name() == Some(n.as_ref()))
        {
            given.seen.insert(real(&touched));
        }
        let budget = TOTAL_MAX_BYTES.saturating_sub(given.nested_bytes);
        let seen = std::mem::take(&mut given.seen);
        let mut loader = Loader::new(&given.places, budget, seen);
        for dir in chain(&given.places.root, folder) {
            for name in INSTRUCTION_FILES {
                loader.add(&dir.join(name), Scope::Nested, 0, None);
            }
        }
        given.seen = loader.seen;
        given.nested_bytes += budget - loader.budget;
        if loader.files.is_empty() && loader.skipped.is_empty() {
            return None;
        }
        let mut out = String::new();
        // Named, with nothing of their content.
        for s in &loader.skipped {
            tracing::warn!("instruction file: {s}");
            out.push_str(&format!("\n\n[{s}]"));
        }
        for f in &loader.files {
            let applies = match Path::new(&f.shown).parent() {
                _ if f.scope == Scope::Import => String::new(),
                Some(p) if !p.as_os_str().is_empty() => {
                    format!(" (they apply to files below {}/)", p.display())
                }
                _ => String::new(),
            };
            out.push_str(&format!(
                "\n\nInstructions from {}{applies}:\n{}",
                f.shown,
                f.text.trim_end()
            ));
        }
        given.files.extend(loader.files);
        Some(out)
    }
}
