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

/// `path` relative to `cwd` when below it, else absolute.
pub fn display(cwd: &Path, path: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
