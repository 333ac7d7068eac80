//! `/<name> args` for the user's custom slash commands (Claude Code's `commands/*.md`): the
//! daemon lists them (`Custom.List`) and expands them when the turn's text arrives, so the REPL
//! only offers them — in `/help` and on Tab, with their `argument-hint` — and sends the line as
//! typed. Built-in commands come first, then user-invocable skills; a custom command of the
//! same name as either is not offered.

use synapse_shared::proto::custom_client::CustomClient;
use synapse_shared::proto::{ListCustomRequest, ListCustomResponse, SkillInfo};

use super::Repl;
use super::complete::slash_commands;

/// `/<name>` and what Tab shows beside it, for the commands no built-in or skill shadows.
pub fn entries(list: &ListCustomResponse, skills: &[SkillInfo]) -> Vec<(String, String)> {
    let builtins = slash_commands();
    list.commands
        .iter()
        .filter(|c| {
            let slash = format!("/{}", c.name.to_lowercase());
            !builtins.iter().any(|(b, _)| *b == slash)
                && !skills.iter().any(|s| s.name.eq_ignore_ascii_case(&c.name))
        })
        .map(|c| {
            let hint = if c.argument_hint.is_empty() {
                String::new()
            } else {
                format!("{}  ", c.argument_hint)
            };
            let what = c.description.lines().next().unwrap_or_default();
            (format!("/{}", c.name), format!("{hint}{what}"))
        })
        .collect()
}

/// The `/help` section: the custom commands, those waiting for trust, files with problems.
pub fn help_section(list: &ListCustomResponse, offered: &[(String, String)]) -> String {
    let mut out = String::new();
    if !offered.is_empty() {
        let width = offered.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        out.push_str("\nCustom commands (commands/*.md):\n");
        for (name, what) in offered {
            out.push_str(&format!("  {name:<width$}  {what}\n"));
        }
    }
    if !list.held.is_empty() {
        out.push_str("\nProject commands and agents not in use yet:\n");
        for why in &list.held {
            out.push_str(&format!("  {why}\n"));
        }
    }
    if !list.problems.is_empty() {
        out.push_str("\nCustom command or agent files with problems:\n");
        for problem in &list.problems {
            out.push_str(&format!("  {problem}\n"));
        }
    }
    out
}

impl Repl {
    /// The custom commands for this folder (an empty list when the daemon cannot say).
    async fn list_custom(&mut self) -> ListCustomResponse {
        if self.ensure_link().await.is_err() {
            return ListCustomResponse::default();
        }
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        CustomClient::new(self.link.channel().clone())
            .list(ListCustomRequest { cwd })
            .await
            .map(tonic::Response::into_inner)
            .unwrap_or_default()
    }

    /// Refreshes the `/<command>` names Tab offers.
    pub(super) async fn refresh_custom_commands(&mut self, skills: &[SkillInfo]) {
        let list = self.list_custom().await;
        self.input
            .set_slash_group("commands", entries(&list, skills));
    }

    /// The custom part of `/help`.
    pub(super) async fn custom_help(&mut self) -> String {
        let skills = self.list_skills().await.unwrap_or_default();
        let list = self.list_custom().await;
        let offered = entries(&list, &skills);
        self.input.set_slash_group("commands", offered.clone());
        help_section(&list, &offered)
    }

    /// `/<name> args` for a custom command (or a held one, which the daemon explains): sends
    /// the line for the daemon to expand. False when no custom command has the name.
    pub(super) async fn invoke_custom(&mut self, slash: &str, args: &str) -> anyhow::Result<bool> {
        let typed = slash.trim_start_matches('/');
        let list = self.list_custom().await;
        let name = list
            .commands
            .iter()
            .map(|c| &c.name)
            .chain(&list.held_commands)
            .find(|n| n.eq_ignore_ascii_case(typed))
            .cloned();
        let Some(name) = name else {
            return Ok(false);
        };
        let line = if args.is_empty() {
            format!("/{name}")
        } else {
            format!("/{name} {args}")
        };
        self.turn(line).await?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use synapse_shared::proto::CustomCommandInfo;

    fn command(name: &str, hint: &str) -> CustomCommandInfo {
        CustomCommandInfo {
            name: name.into(),
            description: "Says hello\nmore".into(),
            argument_hint: hint.into(),
            ..Default::default()
        }
    }

    #[test]
    fn builtins_and_skills_win_and_help_lists_the_rest() {
        let list = ListCustomResponse {
            commands: vec![
                command("hello-cmd", "[name]"),
                command("help", ""),
                command("fix-issue", ""),
                command("frontend:component", ""),
            ],
            held: vec!["/p/.claude/commands/x.md: not trusted".into()],
            ..Default::default()
        };
        let skills = vec![SkillInfo {
            name: "fix-issue".into(),
            ..Default::default()
        }];
        let offered = entries(&list, &skills);
        let names: Vec<&str> = offered.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["/hello-cmd", "/frontend:component"]);
        assert_eq!(offered[0].1, "[name]  Says hello");
        let help = help_section(&list, &offered);
        assert!(
            help.contains("  /hello-cmd           [name]  Says hello\n"),
            "{help}"
        );
        assert!(
            help.contains("not in use yet:\n  /p/.claude/commands/x.md"),
            "{help}"
        );
    }
}
