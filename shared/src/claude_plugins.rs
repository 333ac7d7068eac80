//! Claude Code's plugins as Claude Code itself records them, read for every part of Synapse that
//! uses a plugin (skills, commands, agents, hooks, MCP servers): one owner of "which plugins are
//! installed, which are enabled, and where each one's files are".
//!
//! The records (what `claude plugin install` writes, below `~/.claude/`):
//! - `plugins/installed_plugins.json`: `plugins.<name>@<marketplace>` → a list of installs
//!   (`scope`, `installPath` = `plugins/cache/<marketplace>/<name>/<version>`, `version`, times);
//! - `plugins/known_marketplaces.json`: `<marketplace>` → `source` (`{"source": "directory",
//!   "path": …}` or a git source) and `installLocation` (where its `marketplace.json` lives);
//! - `settings.json`: `enabledPlugins.<name>@<marketplace>` (true / false) and
//!   `extraKnownMarketplaces`. A trusted project's `.claude/settings.json` and
//!   `.claude/settings.local.json` may turn plugins on or off for that project, local over
//!   project over user as in Claude Code; the caller decides trust and hands in the content that
//!   counts ([`ProjectPluginSettings`]: the daemon's gives the copies `synapse trust` pinned).
//!
//! A plugin's root (`${CLAUDE_PLUGIN_ROOT}`) is where Claude Code reads it from: for a marketplace
//! on a local folder, the plugin's own folder in that marketplace (so edits count at once, as
//! `claude plugin list` shows under "Read from"); otherwise the installed version folder in the
//! cache. Its data folder (`${CLAUDE_PLUGIN_DATA}`) is `plugins/data/<name>-<marketplace>`.
//! A record that can't be read, or a plugin whose folder is missing, is a problem naming it; the
//! other plugins still load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// `~/.claude/plugins`, relative to the home folder.
pub const PLUGINS_DIR: &str = ".claude/plugins";
/// The install records below [`PLUGINS_DIR`].
pub const INSTALLED_FILE: &str = "installed_plugins.json";
/// The known marketplaces below [`PLUGINS_DIR`].
pub const MARKETPLACES_FILE: &str = "known_marketplaces.json";
/// The project settings files that may enable plugins (trusted folders only), lowest first.
pub const PROJECT_SETTINGS_FILES: [&str; 2] =
    [".claude/settings.json", ".claude/settings.local.json"];

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// `commit-commands`.
    pub name: String,
    /// `claude-code-plugins`.
    pub marketplace: String,
    /// The installed version (`unknown` when no record says).
    pub version: String,
    /// `${CLAUDE_PLUGIN_ROOT}`: where its files are read from.
    pub root: PathBuf,
    /// `${CLAUDE_PLUGIN_DATA}`: its own writable folder.
    pub data_dir: PathBuf,
    /// Whether the settings in force turn it on.
    pub enabled: bool,
}

impl Plugin {
    /// `<name>@<marketplace>`, the key of every record.
    pub fn key(&self) -> String {
        format!("{}@{}", self.name, self.marketplace)
    }
}

/// Every installed plugin, and what could not be read.
#[derive(Debug, Clone, Default)]
pub struct PluginScan {
    /// In key order.
    pub plugins: Vec<Plugin>,
    /// Each names the file or plugin and says what to do.
    pub problems: Vec<String>,
}

impl PluginScan {
    /// The enabled plugins.
    pub fn enabled(&self) -> impl Iterator<Item = &Plugin> {
        self.plugins.iter().filter(|p| p.enabled)
    }
}

/// `<home>/.claude/plugins`.
pub fn plugins_dir(home: &Path) -> PathBuf {
    home.join(PLUGINS_DIR)
}

/// Claude Code's user settings file.
pub fn user_settings(home: &Path) -> PathBuf {
    home.join(".claude").join("settings.json")
}

/// The files whose change may change the user-level scan (for callers that cache it); a
/// project's own are [`ProjectPluginSettings::deciding_files`].
pub fn deciding_files(home: &Path) -> Vec<PathBuf> {
    let dir = plugins_dir(home);
    vec![
        user_settings(home),
        dir.join(INSTALLED_FILE),
        dir.join(MARKETPLACES_FILE),
    ]
}

/// A trusted project's settings documents that may turn plugins on or off, lowest first
/// (`.claude/settings.json`, then `.claude/settings.local.json`), each as the user trusted it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectLayers {
    /// Each file with the content that counts for it.
    pub docs: Vec<(PathBuf, Value)>,
}

/// Where a project's plugin settings come from. The daemon's answer gives a project's
/// `enabledPlugins` only for a trusted folder and only as pinned by `synapse trust` (a file a
/// session rewrote counts as it was when trusted), so content a session could have written never
/// turns a plugin's hooks or servers on.
pub trait ProjectPluginSettings: Send + Sync {
    /// The layers of the project at `root`; `None` when the folder is not trusted (or its trust
    /// can't be established).
    fn layers(&self, root: &Path) -> Option<ProjectLayers>;
    /// The files whose change may change [`layers`](Self::layers) (settings files, trust list,
    /// pins).
    fn deciding_files(&self, root: &Path) -> Vec<PathBuf>;
}

/// No project layer anywhere: the user's settings alone decide.
#[derive(Debug, Clone, Copy, Default)]
pub struct UserOnly;

impl ProjectPluginSettings for UserOnly {
    fn layers(&self, _: &Path) -> Option<ProjectLayers> {
        None
    }
    fn deciding_files(&self, _: &Path) -> Vec<PathBuf> {
        Vec::new()
    }
}

/// The installed plugins of `home`, enabled as the user's settings say, overlaid (when given) by
/// the settings of `trusted_project` as they read now — pass a project root only when the folder
/// is trusted; [`scan_layered`] takes the content the user trusted instead.
pub fn scan(home: &Path, trusted_project: Option<&Path>) -> PluginScan {
    let mut problems = Vec::new();
    let layers = trusted_project.map(|root| {
        let mut layers = ProjectLayers::default();
        for file in PROJECT_SETTINGS_FILES.iter().map(|f| root.join(f)) {
            match read_json(&file) {
                Ok(Some(v)) => layers.docs.push((file, v)),
                Ok(None) => {}
                Err(why) => problems.push(format!("{why}; its enabledPlugins are not used")),
            }
        }
        layers
    });
    let mut out = scan_layered(home, layers.as_ref());
    out.problems.extend(problems);
    out
}

/// The installed plugins of `home`, enabled as Claude Code decides: the user's
/// `enabledPlugins`, overridden key by key by each project layer in order (project, then local),
/// so a project may turn on a plugin the user turned off and the other way round.
pub fn scan_layered(home: &Path, project: Option<&ProjectLayers>) -> PluginScan {
    let mut out = PluginScan::default();
    let dir = plugins_dir(home);
    let mut enabled = match read_json(&user_settings(home)) {
        Ok(Some(v)) => enabled_map(&v),
        Ok(None) => BTreeMap::new(),
        Err(why) => {
            // Fail closed: without the settings no plugin counts as turned on.
            out.problems.push(format!(
                "{why}; no Claude Code plugin is enabled until it parses"
            ));
            return with_installed(out, &dir, &BTreeMap::new(), false);
        }
    };
    for (_, doc) in project.map(|p| p.docs.as_slice()).unwrap_or_default() {
        enabled.extend(enabled_map(doc));
    }
    with_installed(out, &dir, &enabled, true)
}

fn with_installed(
    mut out: PluginScan,
    dir: &Path,
    enabled: &BTreeMap<String, bool>,
    settings_ok: bool,
) -> PluginScan {
    let records = match read_json(&dir.join(INSTALLED_FILE)) {
        Ok(v) => v.unwrap_or(Value::Null),
        Err(why) => {
            out.problems.push(why);
            Value::Null
        }
    };
    let markets = match read_json(&dir.join(MARKETPLACES_FILE)) {
        Ok(v) => v.unwrap_or(Value::Null),
        Err(why) => {
            out.problems.push(why);
            Value::Null
        }
    };
    let mut installed: BTreeMap<String, (Option<PathBuf>, Option<String>)> = BTreeMap::new();
    for (key, entry) in records
        .get("plugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let last = match entry {
            Value::Array(list) => list.last(),
            other => Some(other),
        };
        let path = last
            .and_then(|e| e.get("installPath"))
            .and_then(Value::as_str)
            .map(PathBuf::from);
        let version = last
            .and_then(|e| e.get("version"))
            .and_then(Value::as_str)
            .map(str::to_string);
        installed.insert(key.clone(), (path, version));
    }
    // Plugins cached without a record (an older Claude Code) still count, newest version first.
    let cache = dir.join("cache");
    for market in subdirs(&cache) {
        for plugin in subdirs(&market) {
            let (Some(m), Some(p)) = (file_name(&market), file_name(&plugin)) else {
                continue;
            };
            installed.entry(format!("{p}@{m}")).or_insert((None, None));
        }
    }
    for (key, (path, version)) in installed {
        let Some((name, marketplace)) = key.rsplit_once('@') else {
            out.problems.push(format!(
                "{}: `{key}` is not <plugin>@<marketplace>; it is skipped",
                dir.join(INSTALLED_FILE).display()
            ));
            continue;
        };
        let cached = cache.join(marketplace).join(name);
        let install = path
            .filter(|p| p.is_dir())
            .or_else(|| newest_version(&cached));
        let root = local_source(&markets, marketplace, name).or(install.clone());
        let Some(root) = root else {
            out.problems.push(format!(
                "{key}: its files are missing (no folder in {}); reinstall it with \
                 `synapse plugin install {key}`",
                cached.display()
            ));
            continue;
        };
        let version = version
            .or_else(|| install.as_deref().and_then(file_name))
            .unwrap_or_else(|| "unknown".into());
        out.plugins.push(Plugin {
            name: name.to_string(),
            marketplace: marketplace.to_string(),
            version,
            data_dir: dir.join("data").join(format!("{name}-{marketplace}")),
            enabled: settings_ok && enabled.get(&key) == Some(&true),
            root,
        });
    }
    out
}

/// For a marketplace on a local folder, the plugin's folder inside it (`None` otherwise, or
/// when it is gone).
fn local_source(markets: &Value, marketplace: &str, name: &str) -> Option<PathBuf> {
    let market = markets.get(marketplace)?;
    let source = market.get("source")?;
    if source.get("source").and_then(Value::as_str) != Some("directory") {
        return None;
    }
    let location = market
        .get("installLocation")
        .or_else(|| source.get("path"))
        .and_then(Value::as_str)
        .map(PathBuf::from)?;
    let manifest = read_json(&location.join(".claude-plugin/marketplace.json"))
        .ok()
        .flatten()?;
    let entry = manifest
        .get("plugins")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))?;
    let rel = entry.get("source")?.as_str()?;
    let dir = location.join(rel);
    let dir = dir.canonicalize().ok()?;
    (dir.starts_with(location.canonicalize().ok()?) && dir.is_dir()).then_some(dir)
}

/// A plugin's MCP server entries as written (`${CLAUDE_PLUGIN_ROOT}` not yet expanded), with the
/// file they come from: `.mcp.json` when it exists (Claude Code then ignores the manifest's),
/// else the `mcpServers` object of `.claude-plugin/plugin.json`. `Err` names a file that does
/// not parse.
pub fn mcp_servers(root: &Path) -> Result<(PathBuf, serde_json::Map<String, Value>), String> {
    let from = |v: Value| {
        v.get("mcpServers")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let file = root.join(".mcp.json");
    if let Some(v) = read_json(&file)? {
        return Ok((file, from(v)));
    }
    let manifest = root.join(".claude-plugin/plugin.json");
    let servers = read_json(&manifest)?.map(from).unwrap_or_default();
    Ok((manifest, servers))
}

/// `enabledPlugins` of a settings document.
fn enabled_map(v: &Value) -> BTreeMap<String, bool> {
    v.get("enabledPlugins")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_bool() == Some(true)))
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON file: `Ok(None)` when it does not exist, `Err` naming it when it can't be read or
/// parsed.
pub fn read_json(path: &Path) -> Result<Option<Value>, String> {
    let text = match crate::bounded::read_text(path, None, crate::bounded::CONFIG_MAX_BYTES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .map(Some)
        .map_err(|e| format!("{} is not valid JSON ({e})", path.display()))
}

/// The highest version folder of a cached plugin (numeric parts compared as numbers).
pub fn newest_version(plugin: &Path) -> Option<PathBuf> {
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

    fn cached(home: &Path, market: &str, name: &str, version: &str) -> PathBuf {
        let dir = plugins_dir(home)
            .join("cache")
            .join(market)
            .join(name)
            .join(version);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn enabled_plugins_come_from_their_installed_version() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let _old = cached(home, "m", "docs", "1.9.0");
        let new = cached(home, "m", "docs", "1.10.0");
        cached(home, "m", "off", "1.0.0");
        fs::write(
            user_settings(home),
            r#"{"enabledPlugins": {"docs@m": true, "off@m": false}}"#,
        )
        .unwrap();
        let s = scan(home, None);
        let on: Vec<_> = s.enabled().map(|p| (p.key(), p.root.clone())).collect();
        assert_eq!(on, vec![("docs@m".to_string(), new.clone())]);
        assert_eq!(s.plugins.len(), 2);
        assert_eq!(s.plugins[0].data_dir, plugins_dir(home).join("data/docs-m"));
    }

    #[test]
    fn a_local_marketplace_plugin_is_read_from_its_own_folder() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let market = t.path().join("mkt");
        fs::create_dir_all(market.join(".claude-plugin")).unwrap();
        fs::create_dir_all(market.join("plugins/demo")).unwrap();
        fs::write(
            market.join(".claude-plugin/marketplace.json"),
            r#"{"name":"mk","plugins":[{"name":"demo","source":"./plugins/demo"}]}"#,
        )
        .unwrap();
        let install = cached(&home, "mk", "demo", "1.0.0");
        fs::write(
            plugins_dir(&home).join(MARKETPLACES_FILE),
            format!(
                r#"{{"mk":{{"source":{{"source":"directory","path":"{0}"}},"installLocation":"{0}"}}}}"#,
                market.display()
            ),
        )
        .unwrap();
        fs::write(
            plugins_dir(&home).join(INSTALLED_FILE),
            format!(
                r#"{{"version":2,"plugins":{{"demo@mk":[{{"installPath":"{}","version":"1.0.0"}}]}}}}"#,
                install.display()
            ),
        )
        .unwrap();
        fs::write(
            user_settings(&home),
            r#"{"enabledPlugins":{"demo@mk":true}}"#,
        )
        .unwrap();
        let s = scan(&home, None);
        assert_eq!(
            s.plugins[0].root,
            market.join("plugins/demo").canonicalize().unwrap()
        );
        assert_eq!(s.plugins[0].version, "1.0.0");
        // The marketplace folder gone: the cached copy is used.
        fs::remove_dir_all(&market).unwrap();
        assert_eq!(scan(&home, None).plugins[0].root, install);
    }

    #[test]
    fn bad_settings_enable_nothing_and_project_settings_count_only_when_passed() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let project = t.path().join("proj");
        cached(&home, "m", "docs", "1.0.0");
        fs::create_dir_all(project.join(".claude")).unwrap();
        fs::write(
            project.join(".claude/settings.json"),
            r#"{"enabledPlugins":{"docs@m":true}}"#,
        )
        .unwrap();
        assert_eq!(scan(&home, None).enabled().count(), 0);
        assert_eq!(scan(&home, Some(&project)).enabled().count(), 1);
        fs::write(user_settings(&home), "{").unwrap();
        let s = scan(&home, Some(&project));
        assert_eq!(s.enabled().count(), 0);
        assert!(
            s.problems[0].contains("settings.json is not valid JSON"),
            "{s:?}"
        );
    }

    #[test]
    fn local_settings_beat_project_settings_beat_the_users() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        for name in ["a", "b", "c"] {
            cached(home, "m", name, "1.0.0");
        }
        fs::write(
            user_settings(home),
            r#"{"enabledPlugins":{"a@m":false,"b@m":true,"c@m":true}}"#,
        )
        .unwrap();
        let doc = |v: &str| (PathBuf::from("x"), serde_json::from_str(v).unwrap());
        let layers = ProjectLayers {
            docs: vec![
                doc(r#"{"enabledPlugins":{"a@m":true,"b@m":false}}"#),
                doc(r#"{"enabledPlugins":{"b@m":true,"c@m":false}}"#),
            ],
        };
        let on = |s: PluginScan| s.enabled().map(|p| p.name.clone()).collect::<Vec<_>>();
        assert_eq!(on(scan_layered(home, None)), ["b", "c"]);
        assert_eq!(on(scan_layered(home, Some(&layers))), ["a", "b"]);
        assert_eq!(
            on(scan_layered(home, Some(&ProjectLayers::default()))),
            ["b", "c"]
        );
    }

    #[test]
    fn a_plugin_without_files_is_a_problem_naming_it() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        cached(home, "m", "good", "1.0.0");
        fs::write(
            plugins_dir(home).join(INSTALLED_FILE),
            r#"{"plugins":{"gone@m":[{"installPath":"/nowhere/x"}]}}"#,
        )
        .unwrap();
        let s = scan(home, None);
        assert_eq!(s.plugins.len(), 1);
        assert!(
            s.problems[0].starts_with("gone@m: its files are missing"),
            "{s:?}"
        );
    }
}
