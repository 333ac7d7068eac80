//! Files inside a skill folder: the path guard for reading one (no `..`, no absolute path, no
//! symlink leading outside the folder) and the listing of bundled files shown by `skill load`.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::error::SkillError;

/// Largest file `read_skill_file` returns.
pub const SKILL_FILE_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// Files listed by [`bundled_files`] at most.
pub const BUNDLED_FILES_MAX: usize = 200;
const BUNDLED_DEPTH_MAX: usize = 6;

/// Resolves `rel` inside the skill folder `dir`, refusing anything that leaves it.
pub fn resolve_in_skill(skill: &str, dir: &Path, rel: &str) -> Result<PathBuf, SkillError> {
    let escape = |reason| SkillError::PathEscape {
        skill: skill.to_string(),
        path: rel.to_string(),
        reason,
    };
    let p = Path::new(rel);
    if rel.is_empty() {
        return Err(escape("the path is empty"));
    }
    if p.is_absolute() {
        return Err(escape(
            "absolute paths are refused; give a path relative to the skill folder",
        ));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(escape("`..` is refused"));
    }
    let root = dir
        .canonicalize()
        .map_err(|e| SkillError::io("resolve", dir, e))?;
    let joined = root.join(p);
    let real = joined
        .canonicalize()
        .map_err(|e| SkillError::io("read", &joined, e))?;
    if !real.starts_with(&root) {
        return Err(escape(
            "it resolves (through a symlink) outside the skill folder",
        ));
    }
    Ok(real)
}

/// Reads a file of a skill after [`resolve_in_skill`].
pub fn read_skill_file(
    skill: &str,
    dir: &Path,
    rel: &str,
) -> Result<(PathBuf, Vec<u8>), SkillError> {
    let path = resolve_in_skill(skill, dir, rel)?;
    // A FIFO or device is refused by name before it is opened; the size is capped.
    let bytes = synapse_shared::bounded::read_bytes(&path, None, SKILL_FILE_MAX_BYTES)
        .map_err(|e| SkillError::io("read", &path, e))?;
    Ok((path, bytes))
}

/// Relative paths of the files in a skill folder other than SKILL.md (hidden files, VCS and
/// dependency folders skipped), sorted, capped at [`BUNDLED_FILES_MAX`]. The flag says whether
/// the list was cut.
pub fn bundled_files(dir: &Path) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut cut = false;
    walk(dir, dir, 0, &mut out, &mut cut);
    out.sort();
    (out, cut)
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>, cut: &mut bool) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.')
            || matches!(
                name.as_str(),
                "node_modules" | "__pycache__" | "target" | "venv"
            )
        {
            continue;
        }
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if depth < BUNDLED_DEPTH_MAX {
                walk(root, &path, depth + 1, out, cut);
            }
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        if depth == 0 && (rel == "SKILL.md" || rel == "skill.md") {
            continue;
        }
        if out.len() >= BUNDLED_FILES_MAX {
            *cut = true;
            return;
        }
        out.push(rel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_refuses_escapes() {
        let t = tempfile::tempdir().unwrap();
        let skill = t.path().join("s");
        fs::create_dir_all(skill.join("refs")).unwrap();
        fs::write(skill.join("refs/a.md"), "A").unwrap();
        fs::write(t.path().join("secret"), "S").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), skill.join("link")).unwrap();
        std::os::unix::fs::symlink("refs", skill.join("inner")).unwrap();

        assert_eq!(read_skill_file("s", &skill, "refs/a.md").unwrap().1, b"A");
        assert_eq!(read_skill_file("s", &skill, "inner/a.md").unwrap().1, b"A");
        for bad in ["../secret", "refs/../../secret", "/etc/passwd", "link", ""] {
            let err = read_skill_file("s", &skill, bad).unwrap_err();
            assert!(matches!(err, SkillError::PathEscape { .. }), "{bad}: {err}");
        }
        let (files, cut) = bundled_files(&skill);
        assert_eq!(files, vec!["inner", "link", "refs/a.md"]);
        assert!(!cut);
    }
}
