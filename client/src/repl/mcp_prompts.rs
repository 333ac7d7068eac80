//! MCP prompts as REPL slash commands, as in Claude Code: `/mcp:<server>:<prompt> args` gets the
//! prompt from the server (arguments as `name=value`, or positional in the prompt's declared
//! order) and runs one turn with its text. Tab offers every ready server's prompts; they are
//! fetched in the background at start so the prompt appears at once.

use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::{McpListRequest, McpQueryRequest, McpServerState};
use tonic::transport::Channel;

use super::Repl;
use super::input::SlashGroups;

/// One listed prompt: `/mcp:s:name`, its arguments in order (name, required), its description.
pub type Listed = (String, Vec<(String, bool)>, String);

/// The prompts of the daemon's rendered list (`/mcp:s:name <a> [b]  — description`).
pub fn parse_listing(text: &str) -> Vec<Listed> {
    text.lines()
        .filter(|l| l.starts_with("/mcp:"))
        .map(|l| {
            let (head, desc) = l.split_once("  — ").unwrap_or((l, ""));
            let mut words = head.split_whitespace();
            let name = words.next().unwrap_or_default().to_string();
            let args = words
                .map(|w| {
                    let required = w.starts_with('<');
                    (w.trim_matches(['<', '>', '[', ']']).to_string(), required)
                })
                .collect();
            (name, args, desc.to_string())
        })
        .collect()
}

/// Words typed after the command as prompt arguments: `name=value`, else the next declared name.
pub fn map_arguments(
    words: &[&str],
    declared: &[(String, bool)],
) -> Result<std::collections::HashMap<String, String>, String> {
    let mut out = std::collections::HashMap::new();
    let mut next = declared.iter().map(|(n, _)| n.as_str());
    for w in words {
        match w.split_once('=') {
            Some((k, v)) if declared.iter().any(|(n, _)| n == k) => {
                out.insert(k.to_string(), v.to_string());
            }
            _ => {
                let name = next
                    .by_ref()
                    .find(|n| !out.contains_key(*n))
                    .ok_or_else(|| {
                        format!("too many arguments (the prompt takes {})", names(declared))
                    })?;
                out.insert(name.to_string(), w.to_string());
            }
        }
    }
    if let Some((missing, _)) = declared
        .iter()
        .find(|(n, req)| *req && !out.contains_key(n))
    {
        return Err(format!(
            "missing <{missing}> (the prompt takes {})",
            names(declared)
        ));
    }
    Ok(out)
}

fn names(declared: &[(String, bool)]) -> String {
    if declared.is_empty() {
        return "no arguments".into();
    }
    declared
        .iter()
        .map(|(n, req)| {
            if *req {
                format!("<{n}>")
            } else {
                format!("[{n}]")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

async fn query(channel: Channel, server: &str, kind: &str) -> Option<String> {
    let r = McpClient::new(channel)
        .query(McpQueryRequest {
            server: server.to_string(),
            kind: kind.into(),
            ..Default::default()
        })
        .await
        .ok()?
        .into_inner();
    (r.exit_code == 0).then(|| String::from_utf8_lossy(&r.stdout).into_owned())
}

/// Fetches every ready server's prompts and hands them to Tab (run in the background).
pub async fn refresh(channel: Channel, groups: SlashGroups) {
    let Ok(list) = McpClient::new(channel.clone())
        .list(McpListRequest {
            include_tools: false,
            cwd: crate::cli::mcp::caller_cwd(),
            env: crate::cli::mcp::caller_env(),
            session: String::new(),
        })
        .await
    else {
        return;
    };
    let mut entries = Vec::new();
    for s in list.into_inner().servers {
        if McpServerState::try_from(s.state) != Ok(McpServerState::Ready) {
            continue;
        }
        if let Some(text) = query(channel.clone(), &s.name, "prompts").await {
            for (name, args, desc) in parse_listing(&text) {
                let hint = names(&args);
                entries.push((name, format!("{hint}  {desc}")));
            }
        }
    }
    groups.set("prompts", entries);
}

impl Repl {
    /// Starts the background fetch of MCP prompts for Tab.
    pub(super) fn refresh_prompt_commands(&self) {
        let channel = self.link.channel().clone();
        let groups = self.input.slash_groups();
        tokio::spawn(refresh(channel, groups));
    }

    /// `/mcp:<server>:<prompt> args`: gets the prompt and runs a turn with it.
    pub(super) async fn invoke_prompt(&mut self, slash: &str, args: &str) -> anyhow::Result<()> {
        let Some((server, prompt)) = slash.strip_prefix("/mcp:").and_then(|r| r.split_once(':'))
        else {
            self.say(&format!(
                "Unknown command: {slash}. Type /help to see the commands.\n"
            ));
            return Ok(());
        };
        let listing = query(self.link.channel().clone(), server, "prompts")
            .await
            .unwrap_or_default();
        let declared = parse_listing(&listing)
            .into_iter()
            .find(|(n, _, _)| n == slash)
            .map(|(_, a, _)| a);
        let Some(declared) = declared else {
            self.say(&format!(
                "MCP server {server} has no prompt {prompt:?}; `synapse mcp prompts {server}` lists them.\n"
            ));
            return Ok(());
        };
        let words: Vec<&str> = args.split_whitespace().collect();
        let arguments = match map_arguments(&words, &declared) {
            Ok(a) => a,
            Err(e) => {
                self.say(&self.theme.red(&format!("{slash}: {e}\n")));
                return Ok(());
            }
        };
        let r = McpClient::new(self.link.channel().clone())
            .query(McpQueryRequest {
                server: server.to_string(),
                kind: "prompt".into(),
                target: prompt.to_string(),
                arguments,
                cwd: crate::cli::mcp::caller_cwd(),
                ..Default::default()
            })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner();
        if r.exit_code != 0 {
            self.say(&self.theme.red(&String::from_utf8_lossy(&r.stderr)));
            return Ok(());
        }
        let text = String::from_utf8_lossy(&r.stdout).trim().to_string();
        self.turn(text).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_parse_and_arguments_map_by_name_or_position() {
        let got = parse_listing(
            "/mcp:w:args-prompt <city> [state]  — Weather\n/mcp:w:simple-prompt  — Plain\n",
        );
        assert_eq!(got[0].0, "/mcp:w:args-prompt");
        assert_eq!(
            got[0].1,
            vec![("city".to_string(), true), ("state".to_string(), false)]
        );
        assert_eq!(got[1].2, "Plain");
        let declared = &got[0].1;
        let a = map_arguments(&["Paris"], declared).unwrap();
        assert_eq!(a["city"], "Paris");
        let a = map_arguments(&["state=TX", "Austin"], declared).unwrap();
        assert_eq!((a["city"].as_str(), a["state"].as_str()), ("Austin", "TX"));
        assert!(
            map_arguments(&[], declared)
                .unwrap_err()
                .contains("missing <city>")
        );
        assert!(map_arguments(&["a", "b", "c"], declared).is_err());
    }
}
