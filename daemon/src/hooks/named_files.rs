//! Which project files a hook's command line runs: what `synapse trust` pins besides the
//! command line itself, so a trusted `sh .claude/hooks/fmt.sh` stops running once anyone
//! (the agent, a `git pull`) rewrites `fmt.sh`.
//!
//! [`named_files`] reads the command with the permission engine's bash parser
//! ([`synapse_permissions::parse`], which also looks into `sh -c "…"`/`bash -c` strings and
//! substitutions), expands `$CLAUDE_PROJECT_DIR`, `$CLAUDE_PLUGIN_ROOT`, `$HOME` and `~` in its
//! words, resolves relative words against the folder the hook runs in (and every `cd` target
//! of the line), and keeps each word that lands — after symlinks — on something inside the
//! project root. A word that lands on a regular file there is a [`Named::File`]; one that lands
//! on a symlink leading out of the project, or on something that can't be read is
//! [`Named::Unpinnable`]: its content can't be pinned, so the hook is held (fail closed). A
//! folder is data handed to the program (`prettier --write .`, `ruff check src`) unless it is
//! what an interpreter runs (`node .`, `python3 tool/` run the code inside it): then it holds
//! the hook too.
//! Words this can't know without running the line (other variables, substitutions) are not
//! guessed; program names without a `/` are looked up in `PATH` by the shell, not here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use synapse_shared::paths::normalize;

/// How many folders a line's `cd`s add to the ones relative words are resolved against.
const BASES_MAX: usize = 8;

/// Where a hook runs, for resolving the words of its command.
#[derive(Debug, Clone)]
pub struct HookPlace {
    /// The folder the hook runs in: relative words resolve against it.
    pub cwd: PathBuf,
    /// The project root: a named file inside it must be pinned.
    pub root: PathBuf,
    /// Variables expanded in words (`CLAUDE_PROJECT_DIR`, `CLAUDE_PLUGIN_ROOT`, `HOME`).
    pub vars: Vec<(String, PathBuf)>,
}

impl HookPlace {
    /// A hook of a session in `cwd` whose project is `root`; `plugin_root` for a plugin's hook.
    pub fn new(
        cwd: &Path,
        root: &Path,
        plugin_root: Option<&Path>,
        home: Option<&Path>,
    ) -> HookPlace {
        let mut vars = vec![
            ("CLAUDE_PROJECT_DIR".to_string(), root.to_path_buf()),
            ("SYNAPSE_PROJECT_DIR".to_string(), root.to_path_buf()),
        ];
        if let Some(p) = plugin_root {
            vars.push(("CLAUDE_PLUGIN_ROOT".to_string(), p.to_path_buf()));
        }
        if let Some(h) = home {
            vars.push(("HOME".to_string(), h.to_path_buf()));
        }
        HookPlace {
            cwd: cwd.to_path_buf(),
            root: root.to_path_buf(),
            vars,
        }
    }
}

/// A project file a hook's command names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Named {
    /// A regular file inside the project (its path after symlinks): pinned by content.
    File(PathBuf),
    /// Something inside the project whose content can't be pinned: holds the hook.
    Unpinnable { path: PathBuf, why: String },
}

impl Named {
    pub fn path(&self) -> &Path {
        match self {
            Named::File(p) | Named::Unpinnable { path: p, .. } => p,
        }
    }
}

/// The project files `command` names when run at `place`, sorted and without repeats.
pub fn named_files(command: &str, place: &HookPlace) -> Vec<Named> {
    let parsed = synapse_permissions::parse(command);
    let root = place
        .root
        .canonicalize()
        .unwrap_or_else(|_| normalize(&place.root));
    let lexical_root = normalize(&place.root);
    let mut bases = vec![normalize(&place.cwd)];
    // Each word, and whether it is what the line runs (a program, or an interpreter's script).
    let mut words: Vec<(String, bool)> = Vec::new();
    for cmd in parsed.all_commands() {
        let program = cmd.words.first().map(String::as_str).unwrap_or("");
        if matches!(program, "cd" | "pushd") {
            if let Some(target) = cmd.words.iter().skip(1).find(|w| !w.starts_with('-'))
                && let Some(expanded) = expand(target, place)
                && bases.len() < BASES_MAX
            {
                let dirs: Vec<PathBuf> = bases
                    .iter()
                    .map(|b| normalize(&b.join(&expanded)))
                    .collect();
                for d in dirs {
                    if !bases.contains(&d) && bases.len() < BASES_MAX {
                        bases.push(d);
                    }
                }
            }
            continue;
        }
        let script = interpreter_script(&cmd.words);
        for (i, word) in cmd.words.iter().enumerate() {
            // A bare program name is looked up in PATH by the shell.
            if i == 0 && !word.contains('/') {
                continue;
            }
            words.push((word.clone(), i == 0 || Some(i) == script));
            if let Some((_, value)) = word.split_once('=') {
                words.push((value.to_string(), false));
            }
        }
        for assignment in &cmd.assignments {
            if let Some((_, value)) = assignment.split_once('=') {
                words.push((value.to_string(), false));
            }
        }
        for redirect in &cmd.redirects {
            if redirect.op == synapse_permissions::RedirectOp::Read {
                words.push((redirect.target.clone(), true));
            }
        }
    }
    let mut out = BTreeSet::new();
    for (word, runs) in words {
        if word.is_empty() || (word.starts_with('-') && !word.contains('/')) {
            continue;
        }
        let Some(expanded) = expand(&word, place) else {
            continue;
        };
        for base in &bases {
            let path = normalize(&base.join(&expanded));
            if let Some(named) = classify(&path, &root, &lexical_root, runs) {
                out.insert(named);
            }
        }
    }
    out.into_iter().collect()
}

/// Programs that run the code a word names (a script file, or a folder's entry point).
const INTERPRETERS: [&str; 14] = [
    "sh", "bash", "zsh", "dash", "ksh", "python", "python3", "node", "deno", "bun", "ruby", "perl",
    "php", "tsx",
];

/// The index of the word an interpreter at the head of `words` runs: its first argument that is
/// not an option (`python3 -u tool/` → `tool/`); `None` for other programs and for `-c`/`-e`
/// lines, whose code is a string (the parser reads `sh -c` strings itself).
fn interpreter_script(words: &[String]) -> Option<usize> {
    let program = words.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !INTERPRETERS.contains(&name) {
        return None;
    }
    for (i, word) in words.iter().enumerate().skip(1) {
        if matches!(word.as_str(), "-c" | "-e" | "-m" | "--eval") {
            return None;
        }
        if !word.starts_with('-') {
            return Some(i);
        }
    }
    None
}

/// `word` with the known variables and `~` expanded; `None` when something else is left that
/// only running the line would tell (another variable, a substitution).
fn expand(word: &str, place: &HookPlace) -> Option<String> {
    let mut text = word.to_string();
    if text == "~" || text.starts_with("~/") {
        let home = place.vars.iter().find(|(k, _)| k == "HOME")?;
        text = format!("{}{}", home.1.display(), &text[1..]);
    }
    for (name, value) in &place.vars {
        let value = value.display().to_string();
        text = text.replace(&format!("${{{name}}}"), &value);
        text = replace_bare(&text, name, &value);
    }
    (!text.contains('$') && !text.contains('`')).then_some(text)
}

/// `$NAME` replaced where the name is not the start of a longer one (`$HOMEDIR` stays).
fn replace_bare(text: &str, name: &str, value: &str) -> String {
    let needle = format!("${name}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&needle) {
        let after = &rest[at + needle.len()..];
        let longer = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if longer { &needle } else { value });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// What is at `path` (absolute, normalised), as far as the project is concerned; `runs`: the
/// word is what the line runs, so a folder there is code, not data.
fn classify(path: &Path, root: &Path, lexical_root: &Path, runs: bool) -> Option<Named> {
    let lexically_inside = path.starts_with(root) || path.starts_with(lexical_root);
    let unpinnable = |why: String| {
        lexically_inside.then(|| Named::Unpinnable {
            path: path.to_path_buf(),
            why,
        })
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return unpinnable(format!("cannot be read ({e})")),
        Ok(_) => {}
    }
    let real = match path.canonicalize() {
        Ok(r) => r,
        Err(e) => return unpinnable(format!("is a link that leads nowhere readable ({e})")),
    };
    if !real.starts_with(root) {
        // A link out to a file nobody of ours can change (a venv's `python` → `/usr/bin`) runs
        // what it ran when trusted; one we could change is pinned like a project file.
        let writable = nix::unistd::access(&real, nix::unistd::AccessFlags::W_OK).is_ok();
        return match std::fs::metadata(&real) {
            Ok(m) if m.is_file() && !writable => None,
            Ok(m) if m.is_file() => lexically_inside.then_some(Named::File(real)),
            _ => unpinnable(format!(
                "is a link leading out of the project (to {})",
                real.display()
            )),
        };
    }
    match std::fs::metadata(&real) {
        Ok(m) if m.is_file() => Some(Named::File(real)),
        Ok(m) if m.is_dir() && !runs => None,
        Ok(m) if m.is_dir() => Some(Named::Unpinnable {
            path: real,
            why: "is a folder an interpreter runs, whose content cannot be pinned".into(),
        }),
        Ok(_) => Some(Named::Unpinnable {
            path: real,
            why: "is not a regular file".into(),
        }),
        Err(e) => Some(Named::Unpinnable {
            path: real,
            why: format!("cannot be read ({e})"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Project {
        _dir: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
    }

    fn project() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("proj");
        let outside = base.join("elsewhere");
        std::fs::create_dir_all(root.join(".claude/hooks")).unwrap();
        std::fs::create_dir_all(root.join("scripts")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join(".claude/hooks/fmt.sh"), "echo fmt\n").unwrap();
        std::fs::write(root.join("scripts/check.py"), "print(1)\n").unwrap();
        std::fs::write(outside.join("tool.sh"), "echo tool\n").unwrap();
        Project {
            _dir: dir,
            root,
            outside,
        }
    }

    fn place(p: &Project) -> HookPlace {
        HookPlace::new(&p.root, &p.root, None, None)
    }

    fn files(command: &str, place: &HookPlace) -> Vec<PathBuf> {
        named_files(command, place)
            .into_iter()
            .map(|n| match n {
                Named::File(p) => p,
                other => panic!("{command}: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_relative_script_and_the_project_dir_variable_name_the_file() {
        let p = project();
        let fmt = p.root.join(".claude/hooks/fmt.sh");
        for command in [
            "sh .claude/hooks/fmt.sh",
            "./.claude/hooks/fmt.sh",
            "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.sh",
            "${CLAUDE_PROJECT_DIR}/.claude/hooks/fmt.sh --fix",
            "bash -c 'sh .claude/hooks/fmt.sh && true'",
            "sh -c \"cd scripts && sh ../.claude/hooks/fmt.sh\"",
            "sh < .claude/hooks/fmt.sh",
            "FILE=.claude/hooks/fmt.sh sh \"$FILE\"",
        ] {
            assert!(files(command, &place(&p)).contains(&fmt), "{command}");
        }
    }

    #[test]
    fn relative_words_resolve_from_where_the_hook_runs_and_every_cd() {
        let p = project();
        let sub = HookPlace::new(&p.root.join("scripts"), &p.root, None, None);
        assert_eq!(
            files("python3 check.py", &sub),
            vec![p.root.join("scripts/check.py")]
        );
        assert_eq!(
            files(
                "cd \"$CLAUDE_PROJECT_DIR\" && python3 scripts/check.py",
                &sub
            ),
            vec![p.root.join("scripts/check.py")]
        );
    }

    #[test]
    fn programs_from_path_output_files_and_files_outside_are_not_named() {
        let p = project();
        std::fs::write(p.root.join("log.txt"), "").unwrap();
        let tool = p.outside.join("tool.sh");
        for command in [
            "jq -r .tool_input >> log.txt",
            &format!("sh {}", tool.display()),
            "echo $UNKNOWN/x.sh",
            "sh missing.sh",
            "cat > log.txt",
        ] {
            assert!(named_files(command, &place(&p)).is_empty(), "{command}");
        }
    }

    #[test]
    fn a_plugin_root_is_expanded_and_its_files_are_outside_the_project() {
        let p = project();
        let plugin = HookPlace::new(&p.root, &p.root, Some(&p.outside), None);
        assert!(named_files("sh \"${CLAUDE_PLUGIN_ROOT}\"/tool.sh", &plugin).is_empty());
        std::os::unix::fs::symlink(p.root.join(".claude/hooks/fmt.sh"), p.outside.join("l.sh"))
            .unwrap();
        assert_eq!(
            files("sh $CLAUDE_PLUGIN_ROOT/l.sh", &plugin),
            vec![p.root.join(".claude/hooks/fmt.sh")],
            "a link from outside into the project names the project file"
        );
    }

    #[test]
    fn a_folder_handed_to_a_program_is_data_not_code() {
        let p = project();
        for command in [
            "prettier --write .",
            "npx eslint scripts",
            "ruff check \"$CLAUDE_PROJECT_DIR\"",
        ] {
            assert_eq!(named_files(command, &place(&p)), vec![], "{command}");
        }
        assert_eq!(
            files("python3 -m tool scripts/x", &place(&p)),
            Vec::<PathBuf>::new(),
            "a missing path names nothing"
        );
    }

    #[test]
    fn a_link_out_to_a_file_we_can_change_pins_that_file() {
        let p = project();
        std::os::unix::fs::symlink(p.outside.join("tool.sh"), p.root.join("out.sh")).unwrap();
        assert_eq!(
            files("sh out.sh", &place(&p)),
            vec![p.outside.join("tool.sh")]
        );
    }

    #[test]
    fn folders_links_out_and_odd_files_inside_hold_the_hook() {
        let p = project();
        std::os::unix::fs::symlink(p.outside.join("gone"), p.root.join("out.sh")).unwrap();
        std::os::unix::fs::symlink(p.root.join("nowhere"), p.root.join("dangling.sh")).unwrap();
        nix::unistd::mkfifo(&p.root.join("fifo.sh"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        for (command, why) in [
            ("sh out.sh", "leads nowhere"),
            ("sh dangling.sh", "leads nowhere"),
            ("node scripts", "is a folder an interpreter runs"),
            ("python3 -u scripts", "is a folder an interpreter runs"),
            ("sh fifo.sh", "not a regular file"),
        ] {
            let named = named_files(command, &place(&p));
            assert!(
                matches!(&named[..], [Named::Unpinnable { why: w, .. }] if w.contains(why)),
                "{command}: {named:?}"
            );
        }
    }
}
