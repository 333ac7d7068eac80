//! Where custom commands and agents come from, and which of them count.
//!
//! Four folders per kind, in precedence order (the first file of a name wins):
//! the project's `.synapse/<kind>/` and `.claude/<kind>/`, then `$SYNAPSE_HOME/<kind>/` and
//! `~/.claude/<kind>/`; then `<kind>/` of each enabled Claude Code plugin, its files named
//! `<plugin>:<name>` (so they never shadow the user's; a trusted project's `enabledPlugins` count
//! too, as [`synapse_shared::claude_plugins`] reads them). Project files count only in a trusted folder, and only while each still
//! has the content it had when the user ran `synapse trust` (its review pins them,
//! [`crate::agent::gate::trust_review`], in the same pin file as the project's settings): a file added or changed since
//! is held, with the reason, until the user trusts the folder again. A file anyone else may
//! write is not used. Nothing here grants a permission: commands and agents are text for the
//! model, and what they may run is still decided by the session's gate.

use std::path::{Path, PathBuf};

use crate::workspace::trust_pins::{self, PinState};
use synapse_shared::trust;

/// The most of one command or agent file that is read.
pub const FILE_MAX_BYTES: u64 = 256 * 1024;
/// Files looked at per folder (a folder of thousands is cut, with a note).
pub const FILES_PER_FOLDER_MAX: usize = 500;
/// Subfolder depth of a commands folder (`frontend/component.md` is depth 1).
const DEPTH_MAX: usize = 4;

/// Which files: `commands/` or `agents/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Commands,
    Agents,
}

impl Kind {
    pub fn folder(self) -> &'static str {
        match self {
            Kind::Commands => "commands",
            Kind::Agents => "agents",
        }
    }
}

/// Where a file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
    /// An enabled Claude Code plugin: its name is the first component of `rel`.
    Plugin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Plugin => "plugin",
        }
    }
}

/// The daemon's and the user's folders.
#[derive(Debug, Clone)]
pub struct Places {
    pub synapse_home: PathBuf,
    /// The user's home (`~/.claude/…`); `None` when unknown.
    pub home: Option<PathBuf>,
    /// `$SYNAPSE_HOME/trusted_folders.json`.
    pub trust_file: PathBuf,
}

/// One file that counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// Its path below its folder (`frontend/component.md`).
    pub rel: PathBuf,
    pub scope: Scope,
    pub text: String,
}

/// A project file that does not count yet, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub path: PathBuf,
    pub rel: PathBuf,
    pub why: String,
}

/// What one kind's folders hold for a folder's project.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// In precedence order.
    pub found: Vec<Found>,
    pub held: Vec<Held>,
    /// Files that could not be read (named, with the reason).
    pub problems: Vec<String>,
}

impl Places {
    /// The project root of `dir` (`None`: no project, or the project is the user's home, whose
    /// `.claude/` is the user level).
    pub fn project_root(&self, dir: &Path) -> Option<PathBuf> {
        if !dir.is_absolute() {
            return None;
        }
        let root = crate::workspace::project_root(dir, self.home.as_deref());
        (Some(root.as_path()) != self.home.as_deref()).then_some(root)
    }

    /// The folders of `kind` for a project at `root`, in precedence order.
    fn folders(&self, root: Option<&Path>, kind: Kind) -> Vec<(PathBuf, Scope)> {
        let mut out = Vec::new();
        if let Some(root) = root {
            out.push((root.join(".synapse").join(kind.folder()), Scope::Project));
            out.push((root.join(".claude").join(kind.folder()), Scope::Project));
        }
        out.push((self.synapse_home.join(kind.folder()), Scope::User));
        if let Some(home) = &self.home {
            out.push((home.join(".claude").join(kind.folder()), Scope::User));
        }
        out
    }

    /// Every file of `kind` that counts for a session in `dir`, and the project files held.
    pub fn scan(&self, dir: &Path, kind: Kind) -> Scan {
        let root = self.project_root(dir);
        let mut scan = Scan::default();
        let mut project_files: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (folder, scope) in self.folders(root.as_deref(), kind) {
            let files = list_md(&folder, kind, &mut scan.problems);
            if scope == Scope::Project {
                project_files.extend(files);
                continue;
            }
            for (path, rel) in files {
                if let Some(found) = read(&path, rel, scope, &mut scan.problems) {
                    scan.found.push(found);
                }
            }
        }
        self.plugin_files(root.as_deref(), kind, &mut scan);
        if let Some(root) = root.filter(|_| !project_files.is_empty()) {
            let counted = self.project_counted(&root, project_files, &mut scan);
            // Project files come first: they win over the user's of the same name.
            scan.found.splice(0..0, counted);
        }
        scan
    }

    /// The enabled plugins' files of `kind`, each `rel` below its plugin's name
    /// (`<plugin>/<file>.md`). A project's `enabledPlugins` count only in a trusted folder, as pinned.
    fn plugin_files(&self, root: Option<&Path>, kind: Kind, scan: &mut Scan) {
        let Some(home) = &self.home else {
            return;
        };
        // A project's `enabledPlugins` as `synapse trust` pinned it, in a trusted folder only.
        let layers = root.and_then(|r| {
            use synapse_shared::claude_plugins::ProjectPluginSettings;
            crate::plugins::project::TrustedProjectPlugins::new(&self.synapse_home).layers(r)
        });
        // Problems of the records themselves are `synapse plugin list`'s and `synapse doctor`'s.
        let plugins = synapse_shared::claude_plugins::scan_layered(home, layers.as_ref());
        for plugin in plugins.enabled() {
            let folder = plugin.root.join(kind.folder());
            for (path, rel) in list_md(&folder, kind, &mut scan.problems) {
                let rel = Path::new(&plugin.name).join(rel);
                if let Some(found) = read(&path, rel, Scope::Plugin, &mut scan.problems) {
                    scan.found.push(found);
                }
            }
        }
    }

    /// The project files that count: in a trusted folder, each matching its pin.
    fn project_counted(
        &self,
        root: &Path,
        files: Vec<(PathBuf, PathBuf)>,
        scan: &mut Scan,
    ) -> Vec<Found> {
        let trusted = trust::load(&self.trust_file)
            .map(|list| trust::is_trusted(&list, root))
            .unwrap_or(false);
        if !trusted {
            let why = format!(
                "{} is not trusted: project commands and agents count only in a trusted folder; \
                 review them, then run `synapse trust {}`",
                root.display(),
                root.display()
            );
            scan.held.extend(files.into_iter().map(|(path, rel)| Held {
                path,
                rel,
                why: why.clone(),
            }));
            return Vec::new();
        }
        let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        let states = trust_pins::states(&trust_pins::pin_file(&self.synapse_home), &paths);
        let mut out = Vec::new();
        for ((path, rel), state) in files.into_iter().zip(states) {
            let why = match state {
                PinState::Matches => {
                    if let Some(found) = read(&path, rel, Scope::Project, &mut scan.problems) {
                        out.push(found);
                    }
                    continue;
                }
                PinState::Unpinned => "was added after the folder was trusted".to_string(),
                PinState::Changed => "changed since the folder was trusted".to_string(),
                PinState::Unreadable(e) => e,
            };
            scan.held.push(Held {
                why: format!(
                    "{} {why}, so it does not count; review it, then run `synapse trust {}`",
                    path.display(),
                    root.display()
                ),
                path,
                rel,
            });
        }
        out
    }
}

/// Every project command and agent file of the project at `root`: what `synapse trust` pins.
pub fn project_files(root: &Path) -> Vec<PathBuf> {
    let mut ignored = Vec::new();
    let mut out = Vec::new();
    for kind in [Kind::Commands, Kind::Agents] {
        for base in [".synapse", ".claude"] {
            let folder = root.join(base).join(kind.folder());
            out.extend(
                list_md(&folder, kind, &mut ignored)
                    .into_iter()
                    .map(|(p, _)| p),
            );
        }
    }
    out
}

/// The `.md` files below `folder` (agents: only at its top), sorted, with their relative paths.
fn list_md(folder: &Path, kind: Kind, problems: &mut Vec<String>) -> Vec<(PathBuf, PathBuf)> {
    let depth = match kind {
        Kind::Commands => DEPTH_MAX,
        Kind::Agents => 0,
    };
    let mut out = Vec::new();
    walk(folder, folder, depth, &mut out, problems);
    out.sort();
    if out.len() > FILES_PER_FOLDER_MAX {
        problems.push(format!(
            "{} holds more than {FILES_PER_FOLDER_MAX} files; only the first {FILES_PER_FOLDER_MAX} are used",
            folder.display()
        ));
        out.truncate(FILES_PER_FOLDER_MAX);
    }
    out
}

fn walk(
    base: &Path,
    dir: &Path,
    depth: usize,
    out: &mut Vec<(PathBuf, PathBuf)>,
    problems: &mut Vec<String>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if out.len() > FILES_PER_FOLDER_MAX {
            return;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Followed symlinks: `~/.claude/commands` is often a link into a dotfiles repository.
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if depth > 0 {
                walk(base, &path, depth - 1, out, problems);
            }
        } else if meta.is_file() && name.ends_with(".md") {
            let rel = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
            out.push((path, rel));
        } else if name.ends_with(".md")
            && let Some(why) = synapse_shared::bounded::NotRegular::of(meta.file_type())
        {
            // A FIFO would hold whoever opened it; it is named and never opened.
            problems.push(format!("{} is skipped: {why}", path.display()));
        }
    }
}

fn read(path: &Path, rel: PathBuf, scope: Scope, problems: &mut Vec<String>) -> Option<Found> {
    if let Some(why) = synapse_shared::paths::loose_permissions(path) {
        problems.push(format!("{} is not used: {why}", path.display()));
        return None;
    }
    match synapse_shared::bounded::read_text(path, None, FILE_MAX_BYTES) {
        Ok(text) => Some(Found {
            path: path.to_path_buf(),
            rel,
            scope,
            text,
        }),
        Err(e) => {
            problems.push(format!("cannot read {}: {e}", path.display()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Setup {
        _dir: tempfile::TempDir,
        places: Places,
        project: PathBuf,
    }

    fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(project.join(".claude/commands/frontend")).unwrap();
        std::fs::create_dir_all(home.join(".claude/commands")).unwrap();
        std::fs::write(project.join(".claude/commands/frontend/component.md"), "c").unwrap();
        std::fs::write(home.join(".claude/commands/mine.md"), "m").unwrap();
        let synapse_home = dir.path().join("synapse");
        std::fs::create_dir_all(&synapse_home).unwrap();
        Setup {
            places: Places {
                trust_file: synapse_home.join("trusted_folders.json"),
                synapse_home,
                home: Some(home),
            },
            project,
            _dir: dir,
        }
    }

    #[test]
    fn project_files_wait_for_trust_and_count_while_pinned() {
        let s = setup();
        let scan = s.places.scan(&s.project, Kind::Commands);
        assert_eq!(scan.found.len(), 1, "{scan:?}");
        assert_eq!(scan.found[0].rel, PathBuf::from("mine.md"));
        assert!(scan.held[0].why.contains("synapse trust"), "{scan:?}");

        trust::add(&s.places.trust_file, &s.project).unwrap();
        let pins = trust_pins::pin_file(&s.places.synapse_home);
        trust_pins::pin_files(&pins, &project_files(&s.project)).unwrap();
        let scan = s.places.scan(&s.project, Kind::Commands);
        assert_eq!(scan.found.len(), 2, "{scan:?}");
        assert_eq!(scan.found[0].rel, PathBuf::from("frontend/component.md"));
        assert_eq!(scan.found[0].scope, Scope::Project);

        std::fs::write(
            s.project.join(".claude/commands/frontend/component.md"),
            "x",
        )
        .unwrap();
        std::fs::write(s.project.join(".claude/commands/new.md"), "n").unwrap();
        let scan = s.places.scan(&s.project, Kind::Commands);
        assert_eq!(scan.found.len(), 1, "{scan:?}");
        let whys: Vec<&str> = scan.held.iter().map(|h| h.why.as_str()).collect();
        assert!(whys.iter().any(|w| w.contains("changed since")), "{whys:?}");
        assert!(
            whys.iter().any(|w| w.contains("was added after")),
            "{whys:?}"
        );
    }

    #[test]
    fn the_home_folder_is_the_user_level_not_a_project() {
        let s = setup();
        let home = s.places.home.clone().unwrap();
        let scan = s.places.scan(&home, Kind::Commands);
        assert_eq!(scan.found.len(), 1);
        assert_eq!(scan.found[0].scope, Scope::User);
        assert!(scan.held.is_empty());
    }

    #[test]
    fn a_fifo_command_file_is_named_and_skipped() {
        let s = setup();
        let fifo = s
            .places
            .home
            .as_ref()
            .unwrap()
            .join(".claude/commands/pipe.md");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let scan = s.places.scan(&s.project, Kind::Commands);
        assert_eq!(scan.found.len(), 1, "{scan:?}");
        assert_eq!(
            scan.problems,
            [format!(
                "{} is skipped: it is a FIFO, not a regular file",
                fifo.display()
            )]
        );
    }
}
