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
//! Every file is read under the boundary rules ([`synapse_shared::bounded`]): a regular file (a
//! FIFO or device is named and skipped, never waited on), no symlink out of its folder, text
//! (binary content is refused). `@path` imports (Claude Code's syntax) are followed to a bounded
//! depth, each file once, and only inside the project and the user's instruction folders; a
//! credential store or session log is never imported ([`imports`]). What is
//! skipped is a [`Skipped`] the user is shown (at the session's start, in `synapse doctor`); the
//! model sees nothing of it. Budgets per file and in total keep a huge file from filling the
//! context; a cut says so in the text.
//!
//! Instructions are text for the model and nothing else: nothing in them is parsed for rules,
//! and they never grant a permission (the gate reads only settings the user trusted).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[path = "instructions_imports.rs"]
mod imports;
#[path = "instructions_session.rs"]
mod session;

pub use imports::Skipped;
use imports::{Import, import_folders, import_paths, looks_binary, never_given, normalize};
pub use session::SessionInstructions;

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

/// The instruction files of a session, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub files: Vec<InstructionFile>,
    /// Files and imports not given to the model (a FIFO, a credential store, binary content).
    pub skipped: Vec<Skipped>,
}

/// Reads the instruction files of a session opened in `cwd` (inside `places.root`).
pub fn load(places: &Places, cwd: &Path) -> Loaded {
    let mut loader = Loader::new(places, TOTAL_MAX_BYTES, HashSet::new());
    for path in user_files(places) {
        loader.add(&path, Scope::User, 0, None);
    }
    for dir in chain(&places.root, cwd) {
        for name in INSTRUCTION_FILES {
            loader.add(&dir.join(name), Scope::Project, 0, None);
        }
    }
    Loaded {
        files: loader.files,
        skipped: loader.skipped,
    }
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
    skipped: Vec<Skipped>,
}

impl<'a> Loader<'a> {
    fn new(places: &'a Places, budget: usize, seen: HashSet<PathBuf>) -> Self {
        Self {
            places,
            budget,
            seen,
            files: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// Adds `path` (when it is an instruction file that may be read) and then its imports;
    /// `import` is the `@path` word (and the file, as shown, that holds it) that led here.
    fn add(&mut self, path: &Path, scope: Scope, depth: usize, import: Option<(&Import, &str)>) {
        let shown = self.shown(path);
        let skip = |why: String| Skipped {
            from: import.map(|(i, from)| (from.to_owned(), i.line)),
            what: import.map_or_else(|| shown.clone(), |(i, _)| i.raw.clone()),
            why,
        };
        // A missing file (or an `@mention` that names none) is no news.
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if let Some(why) = synapse_shared::bounded::NotRegular::of(meta.file_type()) {
            self.skipped.push(skip(why.to_string()));
            return;
        }
        let Some(within) = self.folder_of(path, import.is_some()) else {
            self.skipped.push(skip(
                "outside the project and the user's instruction folders (~/.claude, ~/.codex, \
                 $SYNAPSE_HOME)"
                    .to_owned(),
            ));
            return;
        };
        if let Some(why) = never_given(path, self.places) {
            self.skipped.push(skip(why.to_owned()));
            return;
        }
        if !self.seen.insert(real(path)) {
            return;
        }
        let max = FILE_MAX_BYTES.min(self.budget);
        let (text, bytes) =
            match synapse_shared::bounded::read_text_head(path, Some(&within), max as u64 + 1) {
                Ok(read) => read,
                Err(e) => {
                    self.skipped.push(skip(e.to_string()));
                    return;
                }
            };
        if looks_binary(&text) {
            self.skipped
                .push(skip(format!("binary content ({}), not text", size(bytes))));
            return;
        }
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
        let from = shown.clone();
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
            self.add(
                &import.path,
                Scope::Import,
                depth + 1,
                Some((&import, &from)),
            );
        }
    }

    /// The folder `path` may be read within. A file looked for by name lies in the project,
    /// the home or `$SYNAPSE_HOME` by construction; an import counts only in the project and
    /// the user's instruction folders ([`import_folders`]), so a cloned repository's `@~/.ssh/id_rsa` reads nothing.
    /// The user's own files may be links into the home (a dotfiles repository).
    fn folder_of(&self, path: &Path, imported: bool) -> Option<PathBuf> {
        let folders = if imported {
            import_folders(self.places)
        } else {
            [
                Some(self.places.root.clone()),
                self.places.home.clone(),
                self.places.synapse_home.clone(),
            ]
            .into_iter()
            .flatten()
            .collect()
        };
        folders.into_iter().find(|f| path.starts_with(f))
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
