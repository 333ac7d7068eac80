//! Claude Code plugins as a skill source, the way Claude Code itself decides: a plugin's skills
//! load only when `~/.claude/settings.json` has `"enabledPlugins": {"<plugin>@<marketplace>": true}`
//! (disabled and merely cached plugins stay out; a settings file that does not parse enables none,
//! with a warning), and only from the installed version (`installPath` in
//! `~/.claude/plugins/installed_plugins.json`, else the highest version folder in the cache).
//! Plugin skills are named `<plugin>:<skill>`, so they never shadow the user's own skills.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The `<plugin>` of a skill folder `<cache>/<marketplace>/<plugin>/<version>/skills/<folder>`.
pub fn plugin_of_skill_dir(dir: &Path) -> Option<String> {
    let plugin = dir.parent()?.parent()?.parent()?;
    Some(plugin.file_name()?.to_string_lossy().into_owned())
}

/// The `skills` folders of the enabled plugins under `<home>/.claude/plugins/cache`, in path order.
pub fn enabled_skill_dirs(home: &Path) -> Vec<PathBuf> {
    enabled_plugin_roots(home)
        .into_iter()
        .map(|v| v.join("skills"))
        .filter(|s| s.is_dir())
        .collect()
}

/// The installed version folders (`${CLAUDE_PLUGIN_ROOT}`) of the enabled plugins under
/// `<home>/.claude/plugins/cache`, in path order.
pub fn enabled_plugin_roots(home: &Path) -> Vec<PathBuf> {
    let cache = home.join(".claude").join("plugins").join("cache");
    if !cache.is_dir() {
        return Vec::new();
    }
    let settings = home.join(".claude").join("settings.json");
    let enabled = match enabled_plugins(&settings) {
        Ok(e) => e,
        Err(why) => {
            tracing::warn!(
                "Claude plugins: {why}; no plugin skills or hooks load until {} parses",
                settings.display()
            );
            return Vec::new();
        }
    };
    let installed = installed_paths(&home.join(".claude/plugins/installed_plugins.json"));
    let mut out = Vec::new();
    for market in subdirs(&cache) {
        let Some(market_name) = file_name(&market) else {
            continue;
        };
        for plugin in subdirs(&market) {
            let Some(plugin_name) = file_name(&plugin) else {
                continue;
            };
            let key = format!("{plugin_name}@{market_name}");
            if enabled.get(&key) != Some(&true) {
                continue;
            }
            let version = match installed.get(&key) {
                Some(p) if p.starts_with(&plugin) && p.is_dir() => Some(p.clone()),
                _ => newest_version(&plugin),
            };
            out.extend(version);
        }
    }
    out.sort();
    out
}

/// `enabledPlugins` of Claude Code's settings: missing file or key → none enabled; a file that
/// does not parse → an error (the caller enables none).
fn enabled_plugins(settings: &Path) -> Result<BTreeMap<String, bool>, String> {
    let text = match synapse_shared::bounded::read_text(
        settings,
        None,
        synapse_shared::bounded::CONFIG_MAX_BYTES,
    ) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", settings.display())),
    };
    let v: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map_err(|e| format!("{} is not valid JSON ({e})", settings.display()))?;
    Ok(v.get("enabledPlugins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_bool() == Some(true)))
                .collect()
        })
        .unwrap_or_default())
}

/// `<plugin>@<marketplace>` → `installPath`, from either layout of installed_plugins.json
/// (`plugins.<key>` as one entry or a list of entries); unreadable → empty.
fn installed_paths(file: &Path) -> BTreeMap<String, PathBuf> {
    let Some(v) =
        synapse_shared::bounded::read_text(file, None, synapse_shared::bounded::CONFIG_MAX_BYTES)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for (key, entry) in v
        .get("plugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let path = match entry {
            Value::Array(list) => list.iter().rev().find_map(|e| e.get("installPath")),
            other => other.get("installPath"),
        };
        if let Some(p) = path.and_then(Value::as_str) {
            out.insert(key.clone(), PathBuf::from(p));
        }
    }
    out
}

/// The highest version folder of a cached plugin (numeric parts compared as numbers).
fn newest_version(plugin: &Path) -> Option<PathBuf> {
    subdirs(plugin)
        .into_iter()
        .max_by(|a, b| version_key(a).cmp(&version_key(b)))
}

fn version_key(dir: &Path) -> Vec<(u64, String)> {
    file_name(dir)
        .unwrap_or_default()
        .split(['.', '-', '+'])
        .map(|part| (part.parse::<u64>().unwrap_or(0), part.to_string()))
        .collect()
}

fn file_name(p: &Path) -> Option<String> {
    p.file_name().map(|f| f.to_string_lossy().into_owned())
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::fs;

    fn plugin(home: &Path, market: &str, name: &str, version: &str) -> PathBuf {
        let skills = home
            .join(".claude/plugins/cache")
            .join(market)
            .join(name)
            .join(version)
            .join("skills");
        fs::create_dir_all(&skills).unwrap();
        skills
    }

    #[test]
    fn only_enabled_plugins_load_from_their_installed_version() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let _old = plugin(home, "market", "docs", "1.9.0");
        let new = plugin(home, "market", "docs", "1.10.0");
        let off = plugin(home, "market", "off", "1.0.0");
        let _unlisted = plugin(home, "market", "cached-only", "1.0.0");
        fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"docs@market": true, "off@market": false}}"#,
        )
        .unwrap();
        assert_eq!(enabled_skill_dirs(home), vec![new.clone()]);

        // installed_plugins.json names the installed version, even when a newer one is cached.
        fs::write(
            home.join(".claude/plugins/installed_plugins.json"),
            format!(
                r#"{{"version": 2, "plugins": {{"docs@market": [{{"installPath": "{}"}}]}}}}"#,
                new.parent().unwrap().with_file_name("1.9.0").display()
            ),
        )
        .unwrap();
        assert_eq!(
            enabled_skill_dirs(home),
            vec![new.parent().unwrap().with_file_name("1.9.0").join("skills")]
        );
        assert!(!enabled_skill_dirs(home).contains(&off));
    }

    #[test]
    fn a_settings_file_that_does_not_parse_enables_no_plugin() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        plugin(home, "market", "docs", "1.0.0");
        fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledPlugins": {"docs@market": true},"#,
        )
        .unwrap();
        assert!(enabled_skill_dirs(home).is_empty());
        fs::remove_file(home.join(".claude/settings.json")).unwrap();
        assert!(
            enabled_skill_dirs(home).is_empty(),
            "no settings: none enabled"
        );
    }

    #[test]
    fn the_plugin_name_comes_from_the_cache_layout() {
        let dir = Path::new("/h/.claude/plugins/cache/market/docs/1.0.0/skills/pdf");
        assert_eq!(plugin_of_skill_dir(dir).as_deref(), Some("docs"));
    }
}
