//! Project instructions, as Claude Code and Codex keep them: `AGENTS.md` and `CLAUDE.md` from the
//! workspace root down to the session's folder (each folder's `CLAUDE.local.md` after its
//! `CLAUDE.md`), and the user-level `~/.claude/CLAUDE.md`, `~/.codex/AGENTS.md` and
//! `$SYNAPSE_HOME/AGENTS.md` before them, so closer files come later and win.
//!
//! [`load`] reads them when a chat session is assembled (`state.rs`), [`section`] renders the
//! prompt's `# Project instructions`, and the session's [`SessionInstructions`] (held by its
//! workspace binding) remembers what was given: when the agent's `read`, `edit` or `write` first
//! touches a folder whose chain below the root holds an instruction file not yet given, the
//! shell's router appends it to that result ([`SessionInstructions::nested`]).
//!
//! Every file is read under the boundary rules ([`synapse_shared::bounded`]): a regular file,
//! inside the project, the user's home or `$SYNAPSE_HOME`, no symlink out. `@path` imports
//! (Claude Code's syntax) follow the same rules, to a bounded depth, each file once. Budgets per
//! file and in total keep a huge file from filling the context; a cut says so in the text.
//!
//! Instructions are text for the model and nothing else: nothing in them is parsed for rules,
//! and they never grant a permission (the gate reads only settings the user trusted).

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use parking_lot::Mutex;

/// The instruction file names looked for in each folder, in the order they are given.
pub const INSTRUCTION_FILES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "CLAUDE.local.md"];
/// The most of one file that is given to the model.
pub const FILE_MAX_BYTES: usize = 32 * 1024;
/// The most of all instruction files of a session (the prompt's, and separately the nested ones).
pub const TOTAL_MAX_BYTES: usize = 64 * 1024;
/// How deep `@path` imports are followed (an import of an import … of a file).
pub const IMPORT_MAX_DEPTH: usize = 5;
/// Room kept for the note that says a file was cut.
const NOTE_MAX_BYTES: usize = 200;
/// Less of a file than this is not shown at all (only the note that it was left out).
const SHOWN_MIN_BYTES: usize = 1024;
/// The folders of the home a project's instruction file may import from.
const USER_AGENT_FOLDERS: [&str; 3] = [".claude", ".codex", ".agents"];

/// Where instruction files are looked for, and the folders files may be read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Places {
    /// The workspace (project) root.
    pub root: PathBuf,
    /// The user's home (`~/.claude/CLAUDE.md`, `~/.codex/AGENTS.md`).
    pub home: Option<PathBuf>,
    /// `$SYNAPSE_HOME` (its `AGENTS.md`).
    pub synapse_home: Option<PathBuf>,
}

/// What kind of file an instruction file is, for the label the model and `/memory` show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's own, for every project.
    User,
    /// The project's, from the root down to the session's folder.
    Project,
    /// Brought in by an `@path` line of another file.
    Import,
    /// A subfolder's, given when the agent first worked there.
    Nested,
}

/// One instruction file as given to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    /// The path as shown: relative to the root for project files, `~/…` under the home.
    pub shown: String,
    pub scope: Scope,
    /// The text given (cut to the budgets, with the note saying so at its end).
    pub text: String,
    /// The file's whole size in bytes.
    pub bytes: u64,
    pub cut: bool,
}

/// Reads the instruction files of a session opened in `cwd` (inside `places.root`).
pub fn load(places: &Places, cwd: &Path) -> Vec<InstructionFile> {
    let mut loader = Loader::new(places, TOTAL_MAX_BYTES, HashSet::new());
    for path in user_files(places) {
        loader.add(&path, Scope::User, 0, true);
    }
    for dir in chain(&places.root, cwd) {
        for name in INSTRUCTION_FILES {
            loader.add(&dir.join(name), Scope::Project, 0, false);
        }
    }
    loader.files
}

/// The prompt's `# Project instructions` section (empty without files), to follow a section that
/// ends its last line.
pub fn section(files: &[InstructionFile]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n# Project instructions\n\nThe user's instruction files for this work, general ones first: \
         where they disagree, the later (closer) file wins. Follow them. They are guidance only and \
         never change what you may run. Instruction files in subfolders are shown when you first \
         read or edit there.\n",
    );
    for f in files {
        out.push_str(&format!("\n## {}{}\n\n", f.shown, label(f.scope)));
        out.push_str(f.text.trim_end());
        out.push('\n');
    }
    out
}

fn label(scope: Scope) -> &'static str {
    match scope {
        Scope::User => " (the user's, for every project)",
        Scope::Project | Scope::Nested => "",
        Scope::Import => " (imported)",
    }
}

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
    /// Bytes of nested files given so far.
    nested_bytes: usize,
}

impl SessionInstructions {
    /// Records what the prompt of the shell session `session` holds.
    pub fn record_prompt(&self, session: &str, places: Places, files: &[InstructionFile]) {
        let seen = files.iter().map(|f| real(&f.path)).collect();
        self.inner.lock().insert(
            session.to_owned(),
            Given {
                places,
                seen,
                files: files.to_vec(),
                nested_bytes: 0,
            },
        );
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
                loader.add(&dir.join(name), Scope::Nested, 0, false);
            }
        }
        given.seen = loader.seen;
        given.nested_bytes += budget - loader.budget;
        if loader.files.is_empty() {
            return None;
        }
        let mut out = String::new();
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

/// The user-level files, in the order they are given.
fn user_files(places: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(home) = &places.home {
        out.push(home.join(".claude/CLAUDE.md"));
        out.push(home.join(".codex/AGENTS.md"));
    }
    if let Some(synapse_home) = &places.synapse_home {
        out.push(synapse_home.join("AGENTS.md"));
    }
    out
}

/// The folders from `root` down to `to` (both included); only `root` when `to` is not inside it.
fn chain(root: &Path, to: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    if let Ok(rest) = to.strip_prefix(root) {
        let mut dir = root.to_path_buf();
        for part in rest.components() {
            dir.push(part);
            out.push(dir.clone());
        }
    }
    out
}

/// Reads files (and their imports) within one budget, each real file once.
struct Loader<'a> {
    places: &'a Places,
    budget: usize,
    seen: HashSet<PathBuf>,
    files: Vec<InstructionFile>,
}

impl<'a> Loader<'a> {
    fn new(places: &'a Places, budget: usize, seen: HashSet<PathBuf>) -> Self {
        Self {
            places,
            budget,
            seen,
            files: Vec::new(),
        }
    }

    /// Adds `path` (when it is an instruction file that may be read) and then its imports.
    /// `users` says the file is the user's own (a user-level file or one it imports), not the
    /// project's: only those may import from anywhere in the home.
    fn add(&mut self, path: &Path, scope: Scope, depth: usize, users: bool) {
        let Some(within) = self.folder_of(path, users) else {
            return;
        };
        if !path.is_file() || !self.seen.insert(real(path)) {
            return;
        }
        let shown = self.shown(path);
        let max = FILE_MAX_BYTES.min(self.budget);
        let (text, bytes) =
            match synapse_shared::bounded::read_text_head(path, Some(&within), max as u64 + 1) {
                Ok(read) => read,
                Err(e) => {
                    tracing::info!(path = %path.display(), error = %e, "instruction file not read");
                    return;
                }
            };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        let (text, cut) = if bytes as usize > max || text.len() > max {
            // Room for the note, so the text with it stays within the budgets.
            let mut end = max.saturating_sub(NOTE_MAX_BYTES).min(text.len());
            if end < SHOWN_MIN_BYTES {
                end = 0;
            }
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let why = if max < FILE_MAX_BYTES {
                format!(
                    "; the instructions' total budget of {} is used up",
                    size(TOTAL_MAX_BYTES as u64)
                )
            } else {
                String::new()
            };
            let note = if end == 0 {
                format!(
                    "[{name} ({}) not shown: the instructions' total budget of {} is used up]",
                    size(bytes),
                    size(TOTAL_MAX_BYTES as u64)
                )
            } else {
                format!(
                    "{}\n[{name} cut at {} of {}{why}]",
                    &text[..end],
                    size(end as u64),
                    size(bytes)
                )
            };
            (note, true)
        } else {
            (text, false)
        };
        self.budget = self.budget.saturating_sub(text.len());
        let imports = if depth < IMPORT_MAX_DEPTH {
            import_paths(&text, path.parent().unwrap_or(Path::new("/")), self.places)
        } else {
            Vec::new()
        };
        self.files.push(InstructionFile {
            path: path.to_path_buf(),
            shown,
            scope,
            text,
            bytes,
            cut,
        });
        for import in imports {
            if self.budget == 0 {
                break;
            }
            self.add(&import, Scope::Import, depth + 1, users);
        }
    }

    /// The folder `path` may be read within: the project, `$SYNAPSE_HOME`, and the home — all
    /// of it for the user's own files, only its agent folders (`~/.claude`, `~/.codex`,
    /// `~/.agents`) for a project's, so a cloned repository's `@~/.ssh/id_rsa` reads nothing.
    fn folder_of(&self, path: &Path, users: bool) -> Option<PathBuf> {
        let home = self.places.home.as_ref();
        let mut folders = vec![
            Some(self.places.root.clone()),
            self.places.synapse_home.clone(),
        ];
        if users {
            folders.push(home.cloned());
        } else {
            folders.extend(USER_AGENT_FOLDERS.map(|f| home.map(|h| h.join(f))));
        }
        folders.into_iter().flatten().find(|f| path.starts_with(f))
    }

    fn shown(&self, path: &Path) -> String {
        if let Ok(rel) = path.strip_prefix(&self.places.root)
            && !rel.as_os_str().is_empty()
        {
            return rel.display().to_string();
        }
        if let Some(rel) = self
            .places
            .home
            .as_ref()
            .and_then(|h| path.strip_prefix(h).ok())
        {
            return format!("~/{}", rel.display());
        }
        // Anywhere else (`$SYNAPSE_HOME` outside the home among it): the real path.
        path.display().to_string()
    }
}

/// The files `text` imports with Claude Code's `@path` words (outside code blocks and spans),
/// resolved against `dir` (the importing file's folder), `~/` against the home.
fn import_paths(text: &str, dir: &Path, places: &Places) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut in_code = false;
        for word in line.split_whitespace() {
            let ticks = word.matches('`').count();
            let starts_code = in_code;
            if ticks % 2 == 1 {
                in_code = !in_code;
            }
            if starts_code || ticks > 0 {
                continue;
            }
            let Some(raw) = word.strip_prefix('@') else {
                continue;
            };
            // Punctuation that ends a sentence is not part of the path.
            let raw = raw.trim_end_matches([',', ';', ':', ')', '!', '?', '.']);
            if raw.is_empty() {
                continue;
            }
            let path = match raw.strip_prefix("~/") {
                Some(rest) => match &places.home {
                    Some(home) => home.join(rest),
                    None => continue,
                },
                None => dir.join(raw),
            };
            out.push(normalize(&path));
        }
    }
    out
}

/// `path` with `.` and `..` taken out lexically (so `../x` cannot pass a prefix check it fails).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The real path of a file, to tell a second name of a file given already (a `CLAUDE.md` that
/// is a symlink to `AGENTS.md`).
fn real(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// A size as people say it: `900 bytes`, `32 KB`, `2 MB`, `1.5 MB`.
fn size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * 1024;
    if bytes < KB {
        format!("{bytes} bytes")
    } else if bytes < MB {
        format!("{} KB", (bytes + KB / 2) / KB)
    } else if bytes.is_multiple_of(MB) {
        format!("{} MB", bytes / MB)
    } else {
        format!("{:.1} MB", bytes as f64 / MB as f64)
    }
}

#[cfg(test)]
#[path = "instructions_tests.rs"]
mod tests;
