//! The file walk shared by `glob` and `search`: gitignore-aware (also outside git repos),
//! hidden files included, `.git` skipped, sorted for stable output.

use std::path::Path;

use ignore::WalkBuilder;

pub fn walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git");
    builder
}

/// `path` relative to `cwd` when below it, else absolute; bytes that are not UTF-8 shown as
/// `\xNN`, which `read` and the other path words accept back.
pub fn display(cwd: &Path, path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let shown = match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => return ".".to_owned(),
        Ok(rel) => rel,
        Err(_) => path,
    };
    crate::shell::capture::escape_bytes(shown.as_os_str().as_bytes())
}
