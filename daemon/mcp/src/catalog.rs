//! The catalog of MCP commands: every exposed tool of every server with its command name and
//! [`ToolSpec`], and the resource commands (`mcp:<server>:resources`, `mcp:<server>:read`) of
//! each server that offers resources. It is rebuilt whenever a tool list changes and shared
//! read-only (`Arc`) by calls, the wrapper writer, listings and `tools search`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::filter::ToolFilter;
use super::names::{CommandMap, ToolRef};
use super::schema::ToolSpec;
use super::server::ToolInfo;
use super::wrappers::WrapperEntry;

/// One line of the tools catalog that `tools search` merges with skill commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// `mcp:<server>:<tool>`.
    pub command: String,
    /// The first line of the tool's description.
    pub description: String,
}

/// One exposed tool of a server as `mcp list` (and `synapse mcp serve`, which re-offers it)
/// shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// `mcp:<server>:<tool>`.
    pub command: String,
    /// The first line of the description.
    pub summary: String,
    /// The tool's name as the server lists it.
    pub tool: String,
    /// The server's whole description.
    pub description: String,
    /// The input schema as the server gave it.
    pub input_schema: serde_json::Map<String, serde_json::Value>,
}

/// Which resource command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVerb {
    /// `mcp:<server>:resources`: the list (and the templates).
    List,
    /// `mcp:<server>:read <uri>`: one resource's contents.
    Read,
}

impl ResourceVerb {
    /// The last part of the command name.
    pub fn word(self) -> &'static str {
        match self {
            ResourceVerb::List => "resources",
            ResourceVerb::Read => "read",
        }
    }

    /// The description `tools search` shows for server `server`.
    pub fn description(self, server: &str) -> String {
        match self {
            ResourceVerb::List => {
                format!("List the resources (and templates) of MCP server {server}.")
            }
            ResourceVerb::Read => format!(
                "Read one of the resources by its URI (`read <uri>`) of MCP server {server}."
            ),
        }
    }
}

/// A resource command of a server that offers resources (and has no tool of that name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceCommand {
    pub command: String,
    /// The server's name as configured.
    pub server: String,
    pub verb: ResourceVerb,
}

/// The resource command names `server` would have.
pub fn resource_command_names(server: &str) -> [String; 2] {
    [ResourceVerb::List, ResourceVerb::Read].map(|v| {
        format!(
            "{}{}:{}",
            super::names::COMMAND_PREFIX,
            super::names::safe_part(server),
            v.word()
        )
    })
}

/// Exposed tools by command name.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    names: CommandMap,
    specs: BTreeMap<String, ToolSpec>,
    /// `(readOnlyHint, destructiveHint)` by command.
    hints: BTreeMap<String, (Option<bool>, Option<bool>)>,
    resources: Vec<ResourceCommand>,
}

impl Catalog {
    /// Names and describes every tool that its server's filter allows.
    pub fn build(servers: &[(String, Arc<Vec<ToolInfo>>, ToolFilter)]) -> Catalog {
        let mut exposed: Vec<(&str, &ToolInfo)> = Vec::new();
        for (server, tools, filter) in servers {
            exposed.extend(
                tools
                    .iter()
                    .filter(|t| filter.allows(&t.name))
                    .map(|t| (server.as_str(), t)),
            );
        }
        let names = CommandMap::build(exposed.iter().map(|(s, t)| (*s, t.name.as_str())));
        let mut specs = BTreeMap::new();
        let mut hints = BTreeMap::new();
        for (server, tool) in exposed {
            if let Some(command) = names.command(server, &tool.name) {
                hints.insert(command.to_string(), tool.hints);
                specs.insert(
                    command.to_string(),
                    ToolSpec::new(command, tool.description.as_deref(), &tool.input_schema),
                );
            }
        }
        Catalog {
            names,
            specs,
            hints,
            resources: Vec::new(),
        }
    }

    /// Adds the resource commands of `servers` (those offering resources), except a name one of
    /// the server's tools already has.
    pub fn with_resources<'a>(mut self, servers: impl IntoIterator<Item = &'a str>) -> Catalog {
        for server in servers {
            for (verb, command) in [ResourceVerb::List, ResourceVerb::Read]
                .into_iter()
                .zip(resource_command_names(server))
            {
                if self.names.resolve(&command).is_none() {
                    self.resources.push(ResourceCommand {
                        command,
                        server: server.to_string(),
                        verb,
                    });
                }
            }
        }
        self.resources.sort_by(|a, b| a.command.cmp(&b.command));
        self
    }

    /// The resource commands, sorted by command.
    pub fn resource_commands(&self) -> &[ResourceCommand] {
        &self.resources
    }

    /// A tool's `(readOnlyHint, destructiveHint)`; unknown commands have none.
    pub fn hints(&self, command: &str) -> (Option<bool>, Option<bool>) {
        self.hints.get(command).copied().unwrap_or_default()
    }

    /// The tool a command name leads to.
    pub fn resolve(&self, command: &str) -> Option<&ToolRef> {
        self.names.resolve(command)
    }

    /// The spec of a server's tool, if exposed.
    pub fn spec(&self, server: &str, tool: &str) -> Option<&ToolSpec> {
        self.names
            .command(server, tool)
            .and_then(|c| self.specs.get(c))
    }

    /// `{command, description}` for every exposed tool, sorted by command.
    pub fn entries(&self) -> Vec<CatalogEntry> {
        self.specs
            .iter()
            .map(|(command, spec)| CatalogEntry {
                command: command.clone(),
                description: spec.summary().to_string(),
            })
            .collect()
    }

    /// One server's exposed tools as listings show them.
    pub fn server_commands(&self, server: &str) -> Vec<ListedTool> {
        self.names
            .iter()
            .filter(|(_, r)| r.server == server)
            .filter_map(|(c, r)| {
                self.specs.get(c).map(|s| ListedTool {
                    command: c.clone(),
                    summary: s.summary().to_string(),
                    tool: r.tool.clone(),
                    description: s.description.clone(),
                    input_schema: s.root.clone(),
                })
            })
            .collect()
    }

    /// What the wrapper writer needs.
    pub fn wrapper_entries(&self) -> Vec<WrapperEntry> {
        self.names
            .iter()
            .filter_map(|(c, r)| {
                self.specs.get(c).map(|spec| WrapperEntry {
                    target: r.clone(),
                    spec: spec.clone(),
                })
            })
            .collect()
    }

    pub fn len(&self) -> usize {
        self.specs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}
