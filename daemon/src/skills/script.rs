//! The scripts of one skill: every program below its `scripts/` folder, nested folders too
//! (which files are programs and which are library modules is [`super::script_rules`]'s rule).
//! Each gets a command name `skill:<skill>:<name>` (nested: folders joined with `.`, so
//! `scripts/office/unpack.py` is `skill:<skill>:office.unpack`), a [`Runner`] (shebang first,
//! else by extension) and its parsed [`ScriptDoc`].
//!
//! Rules (each violation is skipped with a warning, the rest of the skill still loads):
//! - the name must be a safe command component (`a;b.sh` is refused);
//! - a name used twice (`run.py` and `run.sh`): the path first in byte order keeps it;
//! - a file with no shebang, no known extension and no execute bit is not a script (silently).

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use synapse_shared::skill::SkillWarning;
use synapse_shared::skill::naming::{check_command_component, script_stem, wrapper_name};

use super::docstring::{self, DOC_READ_LIMIT_BYTES, DocStyle, ScriptDoc};
use super::script_rules::{is_library, is_script_dir};

/// How deep below `scripts/` programs are looked for.
pub const SCRIPT_DIR_MAX_DEPTH: usize = 4;
/// Files looked at per skill (a vendored tree in `scripts/` must not stall a scan).
pub const SCRIPT_FILES_MAX: usize = 1000;

/// How the wrapper starts the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// The interpreter (and its one optional argument) from the `#!` line.
    Shebang(Vec<String>),
    /// An interpreter found on PATH, chosen by extension.
    Interpreter(&'static str),
    /// An executable without shebang (a binary): run it directly.
    Direct,
}

impl Runner {
    /// The command words before the script path.
    pub fn words(&self) -> Vec<String> {
        match self {
            Self::Shebang(w) => w.clone(),
            Self::Interpreter(i) => vec![(*i).to_string()],
            Self::Direct => Vec::new(),
        }
    }
}

/// One script of a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillScript {
    pub file_name: String,
    /// Path below `scripts/`, `/`-separated (`office/unpack.py`).
    pub rel_path: String,
    pub path: PathBuf,
    pub command: String,
    pub runner: Runner,
    pub doc: ScriptDoc,
}

/// Lists the scripts of the skill `skill` below `dir/scripts`, sorted by path; `skill_md` is
/// the skill's SKILL.md text (a file it names is a program).
pub fn scan_scripts(
    skill: &str,
    dir: &Path,
    skill_md: &str,
    warnings: &mut Vec<SkillWarning>,
) -> Vec<SkillScript> {
    let scripts_dir = dir.join("scripts");
    let mut files = Vec::new();
    collect_files(&scripts_dir, "", 0, &mut files);
    files.sort();
    // A plugin skill's name is `<plugin>:<skill>`: each part must be a valid component.
    let skill_ok = skill.split(':').try_for_each(check_command_component);
    let mut out: Vec<SkillScript> = Vec::new();
    for rel_path in files {
        let file_name = rel_path.rsplit('/').next().unwrap_or(&rel_path).to_string();
        if file_name.starts_with('.') || is_editor_junk(&file_name) {
            continue;
        }
        let path = scripts_dir.join(&rel_path);
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            // A FIFO, socket or device among the scripts is named, never opened (a FIFO would
            // hold the scan until a writer came).
            if let Some(why) = synapse_shared::bounded::NotRegular::of(meta.file_type())
                && why != synapse_shared::bounded::NotRegular::Directory
            {
                warnings.push(SkillWarning::new(&path, None, format!("skipped: {why}")));
            }
            continue;
        }
        let head = read_head(&path);
        let executable = meta.permissions().mode() & 0o111 != 0;
        let Some((runner, style)) = runner_for(&file_name, &head, executable) else {
            continue;
        };
        let tail = (meta.len() > DOC_READ_LIMIT_BYTES as u64).then(|| read_tail(&path));
        if is_library(&rel_path, &head, tail.as_deref(), skill_md) {
            continue;
        }
        let stem = command_stem(&rel_path);
        if let Err(reason) = &skill_ok {
            warnings.push(SkillWarning::new(
                &path,
                None,
                format!("no command for this script: skill name {skill:?} cannot be a command name ({reason})"),
            ));
            continue;
        }
        if let Err(reason) = check_command_component(&stem) {
            warnings.push(SkillWarning::new(
                &path,
                None,
                format!("skipped: {stem:?} cannot be a command name ({reason})"),
            ));
            continue;
        }
        let command = wrapper_name(skill, &stem);
        if let Some(first) = out.iter().find(|s| s.command == command) {
            warnings.push(SkillWarning::new(
                &path,
                None,
                format!(
                    "skipped: {command} is already provided by {} (first path wins)",
                    first.rel_path
                ),
            ));
            continue;
        }
        let doc = docstring::parse(&head, style, &file_name);
        out.push(SkillScript {
            file_name,
            rel_path,
            path,
            command,
            runner,
            doc,
        });
    }
    out.sort_by(|a, b| a.command.cmp(&b.command));
    out
}

/// `office/unpack.py` → `office.unpack`; `run.sh` → `run`.
pub fn command_stem(rel_path: &str) -> String {
    let (folders, file) = match rel_path.rsplit_once('/') {
        Some((d, f)) => (Some(d), f),
        None => (None, rel_path),
    };
    let stem = script_stem(file);
    match folders {
        Some(d) => format!("{}.{stem}", d.replace('/', ".")),
        None => stem.to_string(),
    }
}

/// Relative paths of the files below `dir` (depth- and count-limited, script folders only).
fn collect_files(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= SCRIPT_FILES_MAX {
            return;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        // A symlinked folder is not followed (no loops, no escape from the skill).
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir {
            if depth < SCRIPT_DIR_MAX_DEPTH && is_script_dir(&name) {
                collect_files(&e.path(), &format!("{rel}/"), depth + 1, out);
            }
        } else {
            out.push(rel);
        }
    }
}

fn is_editor_junk(name: &str) -> bool {
    name.ends_with('~')
        || [
            ".swp", ".swx", ".tmp", ".bak", ".orig", ".pyc", ".md", ".txt", ".json", ".yaml",
            ".yml",
        ]
        .iter()
        .any(|ext| name.ends_with(ext))
}

fn read_head(path: &Path) -> String {
    let buf = synapse_shared::bounded::read_bytes_head(path, None, DOC_READ_LIMIT_BYTES as u64)
        .map(|(head, _)| head)
        .unwrap_or_default();
    if buf.contains(&0) {
        return String::new();
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Bytes read from the end of a script longer than [`DOC_READ_LIMIT_BYTES`], where its
/// `__main__` block usually is.
const TAIL_READ_BYTES: u64 = 16 * 1024;

/// The last [`TAIL_READ_BYTES`] of a file, from its first whole line.
fn read_tail(path: &Path) -> String {
    use std::io::{Seek, SeekFrom};
    let mut buf = Vec::new();
    if let Ok((mut f, _)) = synapse_shared::bounded::open_regular(path)
        && f.seek(SeekFrom::End(-(TAIL_READ_BYTES as i64))).is_ok()
    {
        let _ = f.take(TAIL_READ_BYTES).read_to_end(&mut buf);
    }
    let text = String::from_utf8_lossy(&buf);
    match text.split_once('\n') {
        Some((_, rest)) => rest.to_string(),
        None => String::new(),
    }
}

/// Chooses the runner: the shebang, else the extension, else direct execution when executable.
fn runner_for(file_name: &str, head: &str, executable: bool) -> Option<(Runner, DocStyle)> {
    let ext = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let by_ext = match ext.as_str() {
        "py" => Some(("python3", DocStyle::Python)),
        "sh" | "bash" => Some(("bash", DocStyle::Hash)),
        "js" | "mjs" | "cjs" => Some(("node", DocStyle::Slash)),
        "rb" => Some(("ruby", DocStyle::Hash)),
        "pl" => Some(("perl", DocStyle::Hash)),
        _ => None,
    };
    if let Some(line) = head.lines().next().and_then(|l| l.strip_prefix("#!")) {
        let words = shebang_words(line);
        if !words.is_empty() {
            let interp = words
                .last()
                .map(|w| w.rsplit('/').next().unwrap_or(w))
                .unwrap_or("");
            let style = by_ext
                .map(|(_, s)| s)
                .unwrap_or(if interp.starts_with("python") {
                    DocStyle::Python
                } else if matches!(interp, "node" | "deno" | "bun" | "tsx" | "ts-node") {
                    DocStyle::Slash
                } else {
                    DocStyle::Hash
                });
            return Some((Runner::Shebang(words), style));
        }
    }
    if let Some((interp, style)) = by_ext {
        return Some((Runner::Interpreter(interp), style));
    }
    executable.then_some((Runner::Direct, DocStyle::Hash))
}

/// Like the kernel: the interpreter, then the rest of the line as one optional argument.
fn shebang_words(line: &str) -> Vec<String> {
    let line = line.trim();
    match line.split_once(char::is_whitespace) {
        Some((interp, arg)) if !arg.trim().is_empty() => {
            vec![interp.to_string(), arg.trim().to_string()]
        }
        _ if !line.is_empty() => vec![line.to_string()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn runners_stems_and_skips() {
        let t = tempfile::tempdir().unwrap();
        let s = t.path().join("scripts");
        fs::create_dir_all(&s).unwrap();
        fs::write(s.join("a.py"), "print(1)\n").unwrap();
        fs::write(s.join("b"), "#!/usr/bin/env python3 -u\n\"\"\"Bee.\"\"\"\n").unwrap();
        fs::write(s.join("c.js"), "// Sea\n").unwrap();
        fs::write(s.join("a;b.sh"), "echo\n").unwrap();
        fs::write(s.join("a.sh"), "echo\n").unwrap();
        fs::write(s.join("data.csv"), "1,2\n").unwrap();
        fs::write(s.join("notes.md"), "x\n").unwrap();
        let mut w = Vec::new();
        let got = scan_scripts("sk", t.path(), "", &mut w);
        let summary: Vec<(&str, Runner)> = got
            .iter()
            .map(|s| (s.command.as_str(), s.runner.clone()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("skill:sk:a", Runner::Interpreter("python3")),
                (
                    "skill:sk:b",
                    Runner::Shebang(vec!["/usr/bin/env".into(), "python3 -u".into()])
                ),
                ("skill:sk:c", Runner::Interpreter("node")),
            ]
        );
        assert_eq!(got[1].doc.summary.as_deref(), Some("Bee."));
        let w: Vec<String> = w.iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w.iter()
                .any(|x| x.contains("a;b.sh: skipped: \"a;b\" cannot be a command name")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|x| x.contains(
                "a.sh: skipped: skill:sk:a is already provided by a.py (first path wins)"
            )),
            "{w:?}"
        );
    }

    #[test]
    fn nested_programs_get_dotted_names_and_packages_get_none() {
        let t = tempfile::tempdir().unwrap();
        let office = t.path().join("scripts/office");
        fs::create_dir_all(office.join("helpers")).unwrap();
        fs::create_dir_all(office.join("__pycache__")).unwrap();
        fs::write(office.join("helpers/__init__.py"), "").unwrap();
        fs::write(
            office.join("helpers/xml.py"),
            "import re\ndef f():\n    pass\n",
        )
        .unwrap();
        fs::write(office.join("__pycache__/pack.py"), "print(1)\n").unwrap();
        fs::write(
            office.join("pack.py"),
            "from helpers import xml\nif __name__ == '__main__':\n    xml.f()\n",
        )
        .unwrap();
        fs::write(office.join("unpack.py"), "from helpers import xml\n").unwrap();
        let mut w = Vec::new();
        let md = "Unpack with `python scripts/office/unpack.py in.docx out/`.";
        let got = scan_scripts("docx", t.path(), md, &mut w);
        let names: Vec<&str> = got.iter().map(|s| s.command.as_str()).collect();
        assert_eq!(
            names,
            ["skill:docx:office.pack", "skill:docx:office.unpack"]
        );
        assert_eq!(got[1].rel_path, "office/unpack.py");
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn a_fifo_among_the_scripts_is_named_and_never_opened() {
        let t = tempfile::tempdir().unwrap();
        let s = t.path().join("scripts");
        fs::create_dir_all(&s).unwrap();
        fs::write(s.join("a.py"), "print(1)\n").unwrap();
        nix::unistd::mkfifo(
            &s.join("b.py"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        let dir = t.path().to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut w = Vec::new();
            let got = scan_scripts("sk", &dir, "", &mut w);
            let names: Vec<String> = got.into_iter().map(|s| s.command).collect();
            let w: Vec<String> = w.iter().map(|w| w.to_string()).collect();
            let _ = tx.send((names, w));
        });
        let (names, w) = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("the scan blocked on a FIFO");
        assert_eq!(names, ["skill:sk:a"]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("b.py: skipped: it is a FIFO, not a regular file"),
            "{w:?}"
        );
    }
}
