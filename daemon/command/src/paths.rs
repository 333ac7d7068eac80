//! Where a path the model wrote lands. [`PathResolver::resolve`] is how agent commands read a
//! path word: `~` and `~/…` against the session's `HOME`, relative paths against the shell's
//! current folder. [`PathResolver::landing`] is what the permission check must judge: the same
//! path with the symlinks of its existing part followed, as the kernel will follow them when the
//! command writes — so `write ~/x` or `write link/x` (with `link` pointing out of the project) is
//! judged where the bytes go, not where the words seem to point.

use std::path::{Path, PathBuf};

use synapse_permissions::normalize;

/// Resolves path words for one command: the session's current folder and `HOME`.
#[derive(Debug, Clone, Copy)]
pub struct PathResolver<'a> {
    /// The session shell's current folder.
    pub cwd: &'a Path,
    /// The session's `HOME`, when it has one.
    pub home: Option<&'a Path>,
}

impl PathResolver<'_> {
    /// `~` and `~/…` against `HOME` (kept literal without one), relative paths against `cwd`.
    /// A name that is not UTF-8 is written with `\xNN` for its other bytes, as command output
    /// shows it: when the word as written names nothing, that form is decoded.
    pub fn resolve(&self, word: &str) -> PathBuf {
        let path = self.resolve_literal(word);
        if word.contains("\\x")
            && std::fs::symlink_metadata(&path).is_err()
            && let Some(decoded) = unescape_hex(word)
        {
            let raw = self.resolve_literal_os(&decoded);
            if std::fs::symlink_metadata(&raw).is_ok() {
                return raw;
            }
        }
        path
    }

    fn resolve_literal_os(&self, word: &std::ffi::OsStr) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        let bytes = word.as_bytes();
        if let (Some(rest), Some(home)) = (bytes.strip_prefix(b"~"), self.home) {
            if rest.is_empty() {
                return home.to_path_buf();
            }
            if rest.starts_with(b"/") {
                let rest = std::ffi::OsStr::from_bytes(&rest[1..]);
                return home.join(Path::new(rest));
            }
        }
        let p = Path::new(word);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    fn resolve_literal(&self, word: &str) -> PathBuf {
        match (word.strip_prefix('~'), self.home) {
            (Some(""), Some(home)) => return home.to_path_buf(),
            (Some(rest), Some(home)) if rest.starts_with('/') => {
                return home.join(rest.trim_start_matches('/'));
            }
            _ => {}
        }
        let p = Path::new(word);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.cwd.join(p)
        }
    }

    /// The file a write to `word` changes: its deepest existing ancestor with every symlink
    /// followed, then the rest, normalised. Reads the filesystem (a few `stat`s).
    pub fn landing(&self, word: &str) -> PathBuf {
        let path = self.resolve(word);
        for ancestor in path.ancestors() {
            if let Ok(real) = std::fs::canonicalize(ancestor) {
                let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
                return normalize(&real.join(rest));
            }
        }
        normalize(&path)
    }
}

/// `word` with each `\xNN` turned into that byte; `None` when it has none or the result is
/// valid UTF-8 (then it is not the escaped form of a name that is not).
fn unescape_hex(word: &str) -> Option<std::ffi::OsString> {
    use std::os::unix::ffi::OsStringExt;
    let bytes = word.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut changed = false;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && bytes.get(i + 1) == Some(&b'x')
            && let Some(hex) = bytes.get(i + 2..i + 4)
            && let Ok(b) = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or("zz"), 16)
        {
            out.push(b);
            i += 4;
            changed = true;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    (changed && std::str::from_utf8(&out).is_err()).then(|| std::ffi::OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_resolve_like_the_commands_and_land_where_symlinks_lead() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (cwd, home, outside) = (root.join("proj"), root.join("home"), root.join("out"));
        for d in [&cwd, &home, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(&outside, cwd.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("f"), cwd.join("file-link")).unwrap();
        std::fs::write(outside.join("f"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), cwd.join("dangling")).unwrap();
        let at = PathResolver {
            cwd: &cwd,
            home: Some(&home),
        };
        assert_eq!(at.resolve("~"), home);
        assert_eq!(at.resolve("~/.bashrc"), home.join(".bashrc"));
        assert_eq!(at.resolve("~user/x"), cwd.join("~user/x"));
        assert_eq!(at.resolve("/abs"), PathBuf::from("/abs"));
        assert_eq!(at.resolve("a/b"), cwd.join("a/b"));
        let cases = [
            ("~/.bashrc", home.join(".bashrc")),
            ("new/dir/f", cwd.join("new/dir/f")),
            ("link/x", outside.join("x")),
            ("link/../proj/y", cwd.join("y")),
            ("file-link", outside.join("f")),
            // A dangling last component is replaced by the atomic rename, not followed.
            ("dangling", cwd.join("dangling")),
            ("new/../../out/z", outside.join("z")),
        ];
        for (word, lands) in cases {
            assert_eq!(at.landing(word), lands, "{word}");
        }
        let no_home = PathResolver {
            cwd: &cwd,
            home: None,
        };
        assert_eq!(no_home.resolve("~/x"), cwd.join("~/x"));
    }

    #[test]
    fn names_that_are_not_utf8_resolve_from_their_escaped_form() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(dir.path().join(name), "x").unwrap();
        let at = PathResolver {
            cwd: dir.path(),
            home: None,
        };
        assert_eq!(at.resolve("caf\\xe9.txt"), dir.path().join(name));
        // A literal backslash name that exists wins; valid UTF-8 escapes are not decoded.
        std::fs::write(dir.path().join("a\\x41"), "x").unwrap();
        assert_eq!(at.resolve("a\\x41"), dir.path().join("a\\x41"));
        assert_eq!(at.resolve("b\\x41"), dir.path().join("b\\x41"));
    }
}
