//! `synapse plugin list|install|enable|disable|update` and `synapse plugin marketplace add`:
//! Claude Code's plugins on Claude Code's own records (the daemon's `Plugins` service), so a
//! plugin installed here shows in `claude plugin list` and the other way round.

use std::process::ExitCode;

use clap::Subcommand;
use synapse_shared::paths::Paths;
use synapse_shared::proto::plugins_client::PluginsClient;
use synapse_shared::proto::{
    PluginAction, PluginChangeRequest, PluginInfo, PluginListRequest, PluginListResponse,
};

use super::skill::{cwd, rpc};
use crate::connect;

#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// The installed plugins: enabled or not, version, marketplace, what each offers, and any
    /// plugin or record that could not be read.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Install <plugin>@<marketplace> from a known marketplace (enabled).
    Install {
        /// e.g. commit-commands@claude-code-plugins
        plugin: String,
    },
    /// Enable an installed plugin.
    Enable { plugin: String },
    /// Disable an installed plugin (it stays installed).
    Disable { plugin: String },
    /// Update an installed plugin to its marketplace's version.
    Update { plugin: String },
    /// Marketplaces: add one.
    #[command(subcommand)]
    Marketplace(MarketplaceCommand),
}

#[derive(Debug, Subcommand)]
pub enum MarketplaceCommand {
    /// Add a marketplace: a folder holding .claude-plugin/marketplace.json, or a git URL.
    Add {
        /// A folder (relative to here) or a git URL (https://…, git@…).
        source: String,
    },
}

pub async fn run(paths: Paths, cmd: PluginCommand) -> anyhow::Result<ExitCode> {
    let mut client = PluginsClient::new(connect::connect(&paths).await?);
    let (action, target) = match cmd {
        PluginCommand::List { json } => {
            let list = client
                .list(PluginListRequest {
                    cwd: crate::cli::mcp::caller_cwd(),
                })
                .await
                .map_err(rpc)?
                .into_inner();
            let text = if json {
                format!("{}\n", serde_json::to_string_pretty(&to_json(&list))?)
            } else {
                render(&list)
            };
            super::print_quietly(text.as_bytes())?;
            let broken =
                !list.problems.is_empty() || list.plugins.iter().any(|p| !p.problems.is_empty());
            return Ok(if broken {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            });
        }
        PluginCommand::Install { plugin } => (PluginAction::Install, plugin),
        PluginCommand::Enable { plugin } => (PluginAction::Enable, plugin),
        PluginCommand::Disable { plugin } => (PluginAction::Disable, plugin),
        PluginCommand::Update { plugin } => (PluginAction::Update, plugin),
        PluginCommand::Marketplace(MarketplaceCommand::Add { source }) => {
            (PluginAction::MarketplaceAdd, source)
        }
    };
    let done = client
        .change(PluginChangeRequest {
            action: action as i32,
            target,
            cwd: cwd(),
        })
        .await
        .map_err(rpc)?
        .into_inner();
    println!("{}", done.message);
    Ok(ExitCode::SUCCESS)
}

fn render(list: &PluginListResponse) -> String {
    let mut out = String::new();
    if list.plugins.is_empty() {
        out.push_str(
            "No Claude Code plugins installed. Add a marketplace with `synapse plugin marketplace \
             add <folder|git-url>`, then `synapse plugin install <plugin>@<marketplace>`.\n",
        );
    }
    for p in &list.plugins {
        out.push_str(&row(p));
    }
    if !list.marketplaces.is_empty() {
        out.push_str(&format!("marketplaces: {}\n", list.marketplaces.join(", ")));
    }
    for problem in &list.problems {
        out.push_str(&format!("BROKEN: {problem}\n"));
    }
    out
}

fn row(p: &PluginInfo) -> String {
    let state = if p.enabled { "enabled" } else { "disabled" };
    let mut out = format!(
        "{}@{} {} ({state})  {}\n",
        p.name, p.marketplace, p.version, p.root
    );
    let parts = [
        ("commands", &p.commands),
        ("agents", &p.agents),
        ("skills", &p.skills),
        ("hooks", &p.hooks),
        ("mcp servers", &p.mcp_servers),
    ];
    for (what, names) in parts {
        if !names.is_empty() {
            out.push_str(&format!("  {what}: {}\n", names.join(", ")));
        }
    }
    for problem in &p.problems {
        out.push_str(&format!("  BROKEN: {problem}\n"));
    }
    out
}

fn to_json(list: &PluginListResponse) -> serde_json::Value {
    let plugins: Vec<serde_json::Value> = list
        .plugins
        .iter()
        .map(|p| {
            serde_json::json!({
                "name": p.name,
                "marketplace": p.marketplace,
                "version": p.version,
                "enabled": p.enabled,
                "root": p.root,
                "commands": p.commands,
                "agents": p.agents,
                "skills": p.skills,
                "hooks": p.hooks,
                "mcpServers": p.mcp_servers,
                "problems": p.problems,
            })
        })
        .collect();
    serde_json::json!({
        "plugins": plugins,
        "marketplaces": list.marketplaces,
        "problems": list.problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_names_the_plugin_and_what_it_offers() {
        let p = PluginInfo {
            name: "demo".into(),
            marketplace: "mk".into(),
            version: "1.0.0".into(),
            enabled: false,
            root: "/r".into(),
            commands: vec!["/demo:greet".into()],
            problems: vec!["/r/hooks/hooks.json is not valid JSON".into()],
            ..Default::default()
        };
        assert_eq!(
            row(&p),
            "demo@mk 1.0.0 (disabled)  /r\n  commands: /demo:greet\n  BROKEN: /r/hooks/hooks.json is not valid JSON\n"
        );
    }
}
