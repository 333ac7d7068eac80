//! Claude Code plugins as a skill source, the way Claude Code itself decides: a plugin's skills
//! load only while it is enabled (`enabledPlugins` in `~/.claude/settings.json`), from the folder
//! Claude Code reads it from ([`synapse_shared::claude_plugins`] owns that decision). Plugin
//! skills are named `<plugin>:<skill>`, so they never shadow the user's own skills.

use std::path::{Path, PathBuf};

use synapse_shared::claude_plugins;

/// The `<plugin>` of a skill folder `<root>/skills/<folder>`: the `name` of its
/// `.claude-plugin/plugin.json`, else the cache layout's `<cache>/<marketplace>/<plugin>/<version>`,
/// else the root folder's own name.
pub fn plugin_of_skill_dir(dir: &Path) -> Option<String> {
    let root = dir.parent()?.parent()?;
    let manifest = claude_plugins::read_json(&root.join(".claude-plugin/plugin.json"));
    if let Ok(Some(v)) = manifest
        && let Some(name) = v.get("name").and_then(serde_json::Value::as_str)
        && !name.is_empty()
    {
        return Some(name.to_string());
    }
    let in_cache = root
        .ancestors()
        .nth(3)
        .is_some_and(|c| c.file_name().is_some_and(|n| n == "cache"));
    let named = if in_cache { root.parent()? } else { root };
    Some(named.file_name()?.to_string_lossy().into_owned())
}

/// The `skills` folders of the enabled plugins, in path order.
pub fn enabled_skill_dirs(home: &Path) -> Vec<PathBuf> {
    enabled_plugin_roots(home)
        .into_iter()
        .map(|v| v.join("skills"))
        .filter(|s| s.is_dir())
        .collect()
}

/// The roots (`${CLAUDE_PLUGIN_ROOT}`) of the user's enabled plugins, in path order.
pub fn enabled_plugin_roots(home: &Path) -> Vec<PathBuf> {
    let scan = claude_plugins::scan(home, None);
    for problem in &scan.problems {
        tracing::warn!("Claude plugins: {problem}");
    }
    let mut out: Vec<PathBuf> = scan.enabled().map(|p| p.root.clone()).collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    #[test]
    fn the_plugin_name_comes_from_its_manifest_or_the_cache_layout() {
        let dir = Path::new("/h/.claude/plugins/cache/market/docs/1.0.0/skills/pdf");
        assert_eq!(plugin_of_skill_dir(dir).as_deref(), Some("docs"));
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("plugins/folder");
        fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        fs::create_dir_all(root.join("skills/pdf")).unwrap();
        assert_eq!(
            plugin_of_skill_dir(&root.join("skills/pdf")).as_deref(),
            Some("folder")
        );
        fs::write(
            root.join(".claude-plugin/plugin.json"),
            r#"{"name":"demo"}"#,
        )
        .unwrap();
        assert_eq!(
            plugin_of_skill_dir(&root.join("skills/pdf")).as_deref(),
            Some("demo")
        );
    }

    #[test]
    fn only_enabled_plugins_give_skill_folders() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let on = home.join(".claude/plugins/cache/m/docs/1.0.0/skills");
        let off = home.join(".claude/plugins/cache/m/off/1.0.0/skills");
        fs::create_dir_all(&on).unwrap();
        fs::create_dir_all(&off).unwrap();
        fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"docs@m": true, "off@m": false}}"#,
        )
        .unwrap();
        assert_eq!(enabled_skill_dirs(home), vec![on]);
    }
}
