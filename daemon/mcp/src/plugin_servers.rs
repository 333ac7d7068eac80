//! The MCP servers of the enabled Claude Code plugins, in the user's layer: a plugin's
//! `.mcp.json` (else the `mcpServers` of its `plugin.json`), each server named as Claude Code
//! names it but with `_` for `:` (a server name holds no `:`): `plugin_<plugin>_<server>`, its
//! commands `mcp:plugin_<plugin>_<server>:<tool>`,
//! with `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` expanded to the plugin's folders.
//!
//! A plugin's server runs code someone else wrote, so it waits for the user's approval like a
//! project's server ([`crate::approval`]): pinned by its entry and by the content of the plugin
//! files it runs, keyed by the plugin's root, so an update that changes the server asks again.
//! `synapse mcp approve plugin_<plugin>_<server>` approves it ([`approve`]). A server of the
//! user's own files with the same name wins.
//!
//! A plugin that only a trusted project's settings turn on ([`add_project`]: the pinned
//! `enabledPlugins` of its `.claude/settings.json` and `.claude/settings.local.json`) has its
//! servers in that workspace's layer instead, under the same approval.

use std::path::{Path, PathBuf};

use synapse_shared::claude_plugins::{self, Plugin, ProjectLayers};

use super::approval::{self, ApprovalError, ApproveOutcome};
use super::config::{ConfigProblem, McpConfig};

/// The start of every plugin server's name.
pub const PREFIX: &str = "plugin_";

/// Adds the enabled plugins' servers of `home` to `config` (held until approved).
pub fn add(
    config: &mut McpConfig,
    home: &Path,
    mcp_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) {
    let scan = claude_plugins::scan(home, None);
    add_plugins(config, scan.enabled(), mcp_dir, lookup);
}

/// Adds to a workspace's `config` the servers of the plugins its trusted project settings
/// (`layers`) turn on and the user's alone do not (those run in the user's layer already), and
/// turns off there the servers of the plugins the user enabled and the project turns off
/// (`"p@m": false`): each becomes a disabled server of the same name in the workspace's layer,
/// which hides the user's in that project only ([`is_turned_off`]).
pub fn add_project(
    config: &mut McpConfig,
    home: &Path,
    layers: &ProjectLayers,
    mcp_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) {
    let user_scan = claude_plugins::scan(home, None);
    let user: Vec<&Plugin> = user_scan.enabled().collect();
    let scan = claude_plugins::scan_layered(home, Some(layers));
    let on: Vec<String> = scan.enabled().map(Plugin::key).collect();
    let only_project = scan
        .enabled()
        .filter(|p| !user.iter().any(|u| u.key() == p.key()));
    add_plugins(config, only_project, mcp_dir, lookup);
    for plugin in user.into_iter().filter(|p| !on.contains(&p.key())) {
        // The last layer that says "off" is the one that decided.
        let key = plugin.key();
        let decided = layers.docs.iter().rev().find(|(_, doc)| {
            doc.get("enabledPlugins").and_then(|m| m.get(&key))
                == Some(&serde_json::Value::Bool(false))
        });
        if let Some((file, _)) = decided {
            turn_off(config, plugin, file);
        }
    }
}

/// Whether a server of a workspace's layer named `name`, from `source`, stands for a user
/// plugin's server the project turned off (see [`add_project`]): a plugin server's name whose
/// entry comes from a project settings file, not from the plugin.
pub fn is_turned_off(name: &str, source: &Path) -> bool {
    name.starts_with(PREFIX)
        && source
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| {
                claude_plugins::PROJECT_SETTINGS_FILES
                    .iter()
                    .any(|f| f.ends_with(n))
            })
}

/// Disabled entries in `config`, from the project settings `file` that turned `plugin` off, for
/// every server of `plugin`: they never start and hide the user's of the same name.
fn turn_off(config: &mut McpConfig, plugin: &Plugin, file: &Path) {
    let Ok((_, servers)) = claude_plugins::mcp_servers(&plugin.root) else {
        return;
    };
    let named: serde_json::Map<String, serde_json::Value> = servers
        .keys()
        .map(|name| {
            let entry = serde_json::json!({"command": "true", "disabled": true});
            (format!("{PREFIX}{}_{name}", plugin.name), entry)
        })
        .collect();
    if named.is_empty() {
        return;
    }
    let text = serde_json::json!({ "mcpServers": named }).to_string();
    let mut own = McpConfig::default();
    own.merge_text(file, &text, &|_| None);
    merge_below(config, own);
}

fn add_plugins<'a>(
    config: &mut McpConfig,
    plugins: impl Iterator<Item = &'a Plugin>,
    mcp_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) {
    for plugin in plugins {
        let (file, servers) = match claude_plugins::mcp_servers(&plugin.root) {
            Ok(found) => found,
            Err(message) => {
                config.problems.push(ConfigProblem {
                    path: plugin.root.clone(),
                    line: 0,
                    column: 0,
                    server: None,
                    message: format!("plugin {}: {message}", plugin.key()),
                });
                continue;
            }
        };
        if servers.is_empty() {
            continue;
        }
        let named: serde_json::Map<String, serde_json::Value> = servers
            .into_iter()
            .map(|(name, entry)| (format!("{PREFIX}{}_{name}", plugin.name), entry))
            .collect();
        let text = serde_json::json!({ "mcpServers": named }).to_string();
        let root = plugin.root.display().to_string();
        let data = plugin.data_dir.display().to_string();
        let plugin_lookup = |k: &str| match k {
            "CLAUDE_PLUGIN_ROOT" => Some(root.clone()),
            "CLAUDE_PLUGIN_DATA" => Some(data.clone()),
            other => lookup(other),
        };
        let mut own = McpConfig::default();
        own.files.push(file.clone());
        own.merge_text(&file, &text, &plugin_lookup);
        approval::hold_unapproved(&mut own, &plugin.root, mcp_dir);
        merge_below(config, own);
    }
}

/// The plugin root a plugin server's entry came from (its `.mcp.json` or
/// `.claude-plugin/plugin.json` sits in it).
pub fn root_of(source: &Path) -> PathBuf {
    let parent = source.parent().unwrap_or(Path::new("/"));
    if parent.file_name().is_some_and(|n| n == ".claude-plugin") {
        parent.parent().unwrap_or(parent).to_path_buf()
    } else {
        parent.to_path_buf()
    }
}

/// Approves the held plugin servers named in `names` (every one with `all`) of the user's layer
/// and of `project`'s (the caller's workspace, for plugins its settings turn on); names that are
/// not plugin servers are left for the project's approval.
pub async fn approve(
    user: &super::McpManager,
    project: Option<&super::McpManager>,
    mcp_dir: &Path,
    names: &[String],
    all: bool,
) -> Result<ApproveOutcome, ApprovalError> {
    let mut outcome = ApproveOutcome::default();
    let mut running = Vec::new();
    for manager in std::iter::once(user).chain(project) {
        let config = manager.load_config();
        let before = outcome.approved.len();
        for (name, held) in &config.held {
            let asked = names.iter().any(|n| n == name);
            if !name.starts_with(PREFIX) || !(all || asked) || outcome.approved.contains(name) {
                continue;
            }
            approval::approve(mcp_dir, &root_of(&held.config.source), &[&held.config])?;
            outcome.approved.push(name.clone());
        }
        if outcome.approved.len() > before {
            manager.refresh().await;
        }
        running.extend(config.servers.into_keys());
    }
    for name in names.iter().filter(|n| n.starts_with(PREFIX)) {
        if !outcome.approved.contains(name) {
            let why = if running.contains(name) {
                "already approved"
            } else {
                "no enabled plugin has this server (`synapse plugin list` shows them)"
            };
            outcome.not_waiting.push(format!("{name}: {why}"));
        }
    }
    Ok(outcome)
}

/// `top`'s entries join `base` where `base` has none of the name.
fn merge_below(base: &mut McpConfig, top: McpConfig) {
    let taken = |base: &McpConfig, n: &str| {
        base.servers.contains_key(n) || base.invalid.contains_key(n) || base.held.contains_key(n)
    };
    for (name, s) in top.servers {
        if !taken(base, &name) {
            base.servers.insert(name, s);
        }
    }
    for (name, s) in top.held {
        if !taken(base, &name) {
            base.held.insert(name, s);
        }
    }
    for (name, s) in top.invalid {
        if !taken(base, &name) {
            base.invalid.insert(name, s);
        }
    }
    base.problems.extend(top.problems);
    base.files.extend(top.files);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_plugin_server_is_named_expanded_and_held_until_approved() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let root = home.join(".claude/plugins/cache/mk/demo/1.0.0");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("srv.py"), "print()").unwrap();
        fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers":{"m1":{"command":"python3","args":["${CLAUDE_PLUGIN_ROOT}/srv.py"]}}}"#,
        )
        .unwrap();
        fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledPlugins":{"demo@mk":true}}"#,
        )
        .unwrap();
        let mcp_dir = t.path().join("mcp");
        let mut config = McpConfig::default();
        add(&mut config, &home, &mcp_dir, &|_| None);
        let held = &config.held["plugin_demo_m1"];
        assert!(
            held.reason().contains("synapse mcp approve plugin_demo_m1"),
            "{}",
            held.reason()
        );
        let super::super::config::Transport::Stdio { args, .. } = &held.config.transport else {
            panic!("stdio expected");
        };
        assert_eq!(args[0], format!("{}/srv.py", root.display()));
        assert_eq!(root_of(&held.config.source), root);

        approval::approve(&mcp_dir, &root, &[&held.config]).unwrap();
        let mut config = McpConfig::default();
        add(&mut config, &home, &mcp_dir, &|_| None);
        assert!(config.servers.contains_key("plugin_demo_m1"), "{config:?}");
        // The script it runs changed: approval again.
        fs::write(root.join("srv.py"), "import os").unwrap();
        let mut config = McpConfig::default();
        add(&mut config, &home, &mcp_dir, &|_| None);
        assert!(config.held.contains_key("plugin_demo_m1"));
    }

    #[test]
    fn a_project_adds_only_the_servers_of_plugins_it_alone_turns_on() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let root = home.join(".claude/plugins/cache/mk/demo/1.0.0");
        fs::create_dir_all(&root).unwrap();
        fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers":{"m1":{"command":"true"}}}"#,
        )
        .unwrap();
        let user = |on: bool| {
            fs::write(
                home.join(".claude/settings.json"),
                format!(r#"{{"enabledPlugins":{{"demo@mk":{on}}}}}"#),
            )
            .unwrap()
        };
        let layers = ProjectLayers {
            docs: vec![(
                PathBuf::from("settings.json"),
                serde_json::json!({"enabledPlugins": {"demo@mk": true}}),
            )],
        };
        let mcp_dir = t.path().join("mcp");
        user(false);
        let mut config = McpConfig::default();
        add_project(&mut config, &home, &layers, &mcp_dir, &|_| None);
        assert!(config.held.contains_key("plugin_demo_m1"), "{config:?}");
        // The user's own "on" runs it in the user's layer already.
        user(true);
        let mut config = McpConfig::default();
        add_project(&mut config, &home, &layers, &mcp_dir, &|_| None);
        assert!(
            config.held.is_empty() && config.servers.is_empty(),
            "{config:?}"
        );
    }
}
