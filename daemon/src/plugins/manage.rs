//! The plugin operations, each ending in the records Claude Code itself writes:
//! - [`add_marketplace`]: a local folder holding `.claude-plugin/marketplace.json` (recorded as
//!   `{"source": "directory", "path": …}`, read in place, works offline), or a git URL cloned
//!   into `plugins/marketplaces/<name>` (`{"source": "git", "url": …}`);
//! - [`install`]: copies the plugin's folder from its marketplace into
//!   `plugins/cache/<marketplace>/<plugin>/<version>` (the version from its `plugin.json`, else
//!   the marketplace entry, else `unknown`; a staging copy renamed into place), records it in
//!   `installed_plugins.json` and enables it;
//! - [`update`]: pulls a git marketplace, then installs again when the version moved;
//! - [`set_enabled`]: `enabledPlugins.<key>` in the user's settings.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use synapse_shared::claude_plugins::{self, read_json};

use super::records::Records;
use super::{PluginError, split_key, valid_part};

/// The most files one plugin copy may hold (a marketplace pointing at `/` is refused).
const COPY_FILES_MAX: usize = 20_000;

/// What an operation did, for the user.
pub type Done = Result<String, PluginError>;

/// Adds the marketplace at `source` (a folder, relative to `cwd`, or a git URL).
pub fn add_marketplace(records: &Records, source: &str, cwd: &Path) -> Done {
    let local = cwd.join(source);
    if local.is_dir() {
        let dir = local
            .canonicalize()
            .map_err(|e| PluginError::io(&local, e))?;
        let name = marketplace_name(&dir)?;
        let src = json!({"source": "directory", "path": dir.display().to_string()});
        records.add_marketplace(&name, &src, &dir)?;
        return Ok(format!(
            "Added marketplace {name} (the folder {}); install its plugins with `synapse plugin \
             install <plugin>@{name}`",
            dir.display()
        ));
    }
    if !looks_like_git(source) {
        return Err(PluginError::Usage(format!(
            "`{source}` is neither a folder (from {}) nor a git URL (https://…, git@…, \
             file://…); give the folder that holds .claude-plugin/marketplace.json",
            cwd.display()
        )));
    }
    let base = records.dir().join("marketplaces");
    std::fs::create_dir_all(&base).map_err(|e| PluginError::io(&base, e))?;
    let staging = base.join(format!(".clone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    git(
        &["clone", "--depth", "1", "--", source],
        Some(&staging),
        &base,
    )?;
    let name = match marketplace_name(&staging) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let dest = base.join(&name);
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::rename(&staging, &dest).map_err(|e| PluginError::io(&dest, e))?;
    records.add_marketplace(&name, &json!({"source": "git", "url": source}), &dest)?;
    Ok(format!(
        "Added marketplace {name} (cloned from {source}); install its plugins with `synapse \
         plugin install <plugin>@{name}`"
    ))
}

/// Installs `key` (`<plugin>@<marketplace>`) from its marketplace, enabled.
pub fn install(records: &Records, key: &str) -> Done {
    let version = copy_and_record(records, key)?;
    records.set_enabled(key, true)?;
    Ok(format!(
        "Installed {key} {version} (enabled); its commands, agents, skills, hooks and MCP servers \
         count from the next turn"
    ))
}

/// Copies `key` from its marketplace into the cache and records the install; its version.
fn copy_and_record(records: &Records, key: &str) -> Result<String, PluginError> {
    let (plugin, market) = split_key(key)?;
    let (src, version) = source_of(records, plugin, market)?;
    let dest = records
        .dir()
        .join("cache")
        .join(market)
        .join(plugin)
        .join(&version);
    copy_into_place(&src, &dest)?;
    records.record_install(key, &dest, &version)?;
    Ok(version)
}

/// Updates `key` to its marketplace's current version (enabled or not, as it was).
pub fn update(records: &Records, key: &str) -> Done {
    let (plugin, market) = split_key(key)?;
    let scan = claude_plugins::scan(&records.home, None);
    let Some(installed) = scan.plugins.iter().find(|p| p.key() == key) else {
        return Err(not_installed(key));
    };
    let markets = records.read(&records.marketplaces())?;
    if let Some(m) = markets.get(market)
        && m.pointer("/source/source").and_then(Value::as_str) == Some("git")
        && let Some(dir) = m.get("installLocation").and_then(Value::as_str)
    {
        git(&["pull", "--ff-only", "--quiet"], None, Path::new(dir))?;
    }
    let (_, version) = source_of(records, plugin, market)?;
    if version == installed.version {
        return Ok(format!("{key} is up to date ({version})"));
    }
    let old = installed.version.clone();
    copy_and_record(records, key)?;
    Ok(format!("Updated {key} from {old} to {version}"))
}

/// Enables or disables an installed plugin.
pub fn set_enabled(records: &Records, key: &str, on: bool) -> Done {
    split_key(key)?;
    let scan = claude_plugins::scan(&records.home, None);
    if !scan.plugins.iter().any(|p| p.key() == key) {
        return Err(not_installed(key));
    }
    records.set_enabled(key, on)?;
    Ok(format!("{} {key}", if on { "Enabled" } else { "Disabled" }))
}

fn not_installed(key: &str) -> PluginError {
    PluginError::NotFound(format!(
        "{key} is not installed; install it with `synapse plugin install {key}` (`synapse plugin \
         list` shows what is)"
    ))
}

/// The folder and version of `plugin` in marketplace `market`.
fn source_of(
    records: &Records,
    plugin: &str,
    market: &str,
) -> Result<(PathBuf, String), PluginError> {
    let markets = records.read(&records.marketplaces())?;
    let Some(location) = markets
        .get(market)
        .and_then(|m| m.get("installLocation"))
        .and_then(Value::as_str)
        .map(PathBuf::from)
    else {
        return Err(PluginError::NotFound(format!(
            "no marketplace `{market}` is known; add it with `synapse plugin marketplace add \
             <folder|git-url>` (or `claude plugin marketplace add`)"
        )));
    };
    let manifest_path = location.join(".claude-plugin/marketplace.json");
    let manifest = read_json(&manifest_path)
        .map_err(PluginError::Record)?
        .ok_or_else(|| {
            PluginError::NotFound(format!(
                "{} is missing; the marketplace {market} is gone from {}",
                manifest_path.display(),
                location.display()
            ))
        })?;
    let entries = manifest.get("plugins").and_then(Value::as_array);
    let Some(entry) = entries
        .into_iter()
        .flatten()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(plugin))
    else {
        let names: Vec<&str> = entries
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("name").and_then(Value::as_str))
            .collect();
        return Err(PluginError::NotFound(format!(
            "the marketplace {market} has no plugin `{plugin}` (it has: {})",
            names.join(", ")
        )));
    };
    let Some(rel) = entry.get("source").and_then(Value::as_str) else {
        return Err(PluginError::Usage(format!(
            "{}: the source of `{plugin}` is not a folder of the marketplace; install it with \
             `claude plugin install {plugin}@{market}` (Synapse then uses it as installed)",
            manifest_path.display()
        )));
    };
    let dir = location.join(rel);
    let inside = dir
        .canonicalize()
        .ok()
        .zip(location.canonicalize().ok())
        .is_some_and(|(d, l)| d.starts_with(l));
    if !inside || !dir.is_dir() {
        return Err(PluginError::NotFound(format!(
            "{}: the source `{rel}` of `{plugin}` is not a folder inside the marketplace",
            manifest_path.display()
        )));
    }
    let own = read_json(&dir.join(".claude-plugin/plugin.json")).map_err(PluginError::Record)?;
    let version = own
        .as_ref()
        .and_then(|v| v.get("version"))
        .or_else(|| entry.get("version"))
        .and_then(Value::as_str)
        .filter(|v| valid_part(v))
        .unwrap_or("unknown")
        .to_string();
    Ok((dir, version))
}

/// The `name` of the marketplace in `dir`.
fn marketplace_name(dir: &Path) -> Result<String, PluginError> {
    let file = dir.join(".claude-plugin/marketplace.json");
    let doc = read_json(&file)
        .map_err(PluginError::Record)?
        .ok_or_else(|| {
            PluginError::NotFound(format!(
                "{} is missing: a marketplace is a folder with .claude-plugin/marketplace.json",
                file.display()
            ))
        })?;
    match doc.get("name").and_then(Value::as_str) {
        Some(n) if valid_part(n) => Ok(n.to_string()),
        other => Err(PluginError::Record(format!(
            "{}: `name` must be a marketplace name (letters, digits, `-`, `_`, `.`), got {other:?}",
            file.display()
        ))),
    }
}

fn looks_like_git(source: &str) -> bool {
    ["https://", "http://", "git@", "ssh://", "file://", "git://"]
        .iter()
        .any(|p| source.starts_with(p))
}

/// Runs `git args [dest]` in `cwd`.
fn git(args: &[&str], dest: Option<&Path>, cwd: &Path) -> Result<(), PluginError> {
    let mut cmd = Command::new("git");
    cmd.args(args)
        .current_dir(cwd)
        .env("GIT_TERMINAL_PROMPT", "0");
    if let Some(d) = dest {
        cmd.arg(d);
    }
    let out = cmd
        .output()
        .map_err(|e| PluginError::Git(format!("cannot run git: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(PluginError::Git(format!(
        "`git {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// Copies `src` to `dest` through a staging folder beside it (`.git` left out), replacing an
/// older copy only once the new one is complete.
fn copy_into_place(src: &Path, dest: &Path) -> Result<(), PluginError> {
    let parent = dest
        .parent()
        .ok_or_else(|| PluginError::Usage(format!("{} has no parent", dest.display())))?;
    std::fs::create_dir_all(parent).map_err(|e| PluginError::io(parent, e))?;
    let staging = parent.join(format!(".staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let mut count = 0;
    if let Err(e) = copy_dir(src, &staging, &mut count) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(dest);
    std::fs::rename(&staging, dest).map_err(|e| PluginError::io(dest, e))
}

fn copy_dir(src: &Path, dest: &Path, count: &mut usize) -> Result<(), PluginError> {
    std::fs::create_dir_all(dest).map_err(|e| PluginError::io(dest, e))?;
    let entries = std::fs::read_dir(src).map_err(|e| PluginError::io(src, e))?;
    for entry in entries.flatten() {
        *count += 1;
        if *count > COPY_FILES_MAX {
            return Err(PluginError::Usage(format!(
                "{} holds more than {COPY_FILES_MAX} files; that is not a plugin folder",
                src.display()
            )));
        }
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let from = entry.path();
        let to = dest.join(&name);
        let kind = entry.file_type().map_err(|e| PluginError::io(&from, e))?;
        if kind.is_dir() {
            copy_dir(&from, &to, count)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&from).map_err(|e| PluginError::io(&from, e))?;
            std::os::unix::fs::symlink(&target, &to).map_err(|e| PluginError::io(&to, e))?;
        } else if kind.is_file() {
            std::fs::copy(&from, &to).map_err(|e| PluginError::io(&from, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn marketplace(dir: &Path, version: &str) {
        fs::create_dir_all(dir.join(".claude-plugin")).unwrap();
        fs::create_dir_all(dir.join("plugins/demo/.claude-plugin")).unwrap();
        fs::create_dir_all(dir.join("plugins/demo/commands")).unwrap();
        fs::write(
            dir.join(".claude-plugin/marketplace.json"),
            r#"{"name":"mk","plugins":[{"name":"demo","source":"./plugins/demo"}]}"#,
        )
        .unwrap();
        fs::write(
            dir.join("plugins/demo/.claude-plugin/plugin.json"),
            format!(r#"{{"name":"demo","version":"{version}"}}"#),
        )
        .unwrap();
        fs::write(dir.join("plugins/demo/commands/go.md"), "Go $ARGUMENTS").unwrap();
    }

    #[test]
    fn add_install_disable_update_round_trip() {
        let t = tempfile::tempdir().unwrap();
        let records = Records {
            home: t.path().join("home"),
        };
        let mkt = t.path().join("mkt");
        marketplace(&mkt, "1.0.0");
        let said = add_marketplace(&records, "mkt", t.path()).unwrap();
        assert!(said.starts_with("Added marketplace mk"), "{said}");
        assert!(
            install(&records, "nope@mk")
                .unwrap_err()
                .to_string()
                .contains("it has: demo")
        );
        install(&records, "demo@mk").unwrap();
        let cached = records.dir().join("cache/mk/demo/1.0.0/commands/go.md");
        assert!(cached.is_file());
        let scan = claude_plugins::scan(&records.home, None);
        assert_eq!(scan.enabled().count(), 1, "{scan:?}");
        set_enabled(&records, "demo@mk", false).unwrap();
        assert_eq!(
            claude_plugins::scan(&records.home, None).enabled().count(),
            0
        );
        assert_eq!(
            update(&records, "demo@mk").unwrap(),
            "demo@mk is up to date (1.0.0)"
        );
        marketplace(&mkt, "1.1.0");
        assert_eq!(
            update(&records, "demo@mk").unwrap(),
            "Updated demo@mk from 1.0.0 to 1.1.0"
        );
        let scan = claude_plugins::scan(&records.home, None);
        assert_eq!(scan.plugins[0].version, "1.1.0");
        assert!(records.dir().join("cache/mk/demo/1.1.0").is_dir());
        assert_eq!(scan.enabled().count(), 0, "an update keeps it disabled");
        assert!(set_enabled(&records, "other@mk", true).is_err());
    }
}
