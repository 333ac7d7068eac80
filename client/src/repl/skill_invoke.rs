//! `/<skill> args`: a skill whose SKILL.md lets the user invoke it (`user-invocable`, the default)
//! runs as a slash command, as in Claude Code: the daemon loads it (typing it is the approval an
//! `ask` skill needs), and one turn runs with its instructions and the arguments — `$ARGUMENTS`
//! in the body is replaced, else the arguments follow the instructions. Tab offers these names
//! with their `argument-hint`.

use synapse_shared::proto::LoadSkillRequest;
use synapse_shared::proto::SkillInfo;
use synapse_shared::proto::skills_client::SkillsClient;

use super::Repl;

/// Built from the skills list: `/<name>` and what Tab shows beside it.
pub fn slash_entries(skills: &[SkillInfo]) -> Vec<(String, String)> {
    skills
        .iter()
        .filter(|s| invocable(s))
        .map(|s| {
            let hint = if s.argument_hint.is_empty() {
                String::new()
            } else {
                format!("{}  ", s.argument_hint)
            };
            let what = s.description.lines().next().unwrap_or_default();
            (format!("/{}", s.name), format!("{hint}{what}"))
        })
        .collect()
}

fn invocable(s: &SkillInfo) -> bool {
    s.error.is_empty() && s.enabled && s.user_invocable && s.permission != "deny"
}

/// The message a `/<skill> args` turn sends: the loaded skill with the arguments in place.
pub fn invocation_message(name: &str, args: &str, loaded: &str) -> String {
    let head = if args.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {args}")
    };
    if loaded.contains("$ARGUMENTS") {
        return format!("{head}\n\n{}", loaded.replace("$ARGUMENTS", args));
    }
    let mut out = format!("{head}\n\n{loaded}");
    if !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

impl Repl {
    /// Refreshes the `/<skill>` names Tab offers (quietly keeps the old ones on error).
    pub(super) async fn refresh_skill_commands(&mut self) {
        if let Ok(skills) = self.list_skills().await {
            self.input.set_slash_extras(slash_entries(&skills));
            // Custom commands a skill does not shadow (custom_commands.rs).
            self.refresh_custom_commands(&skills).await;
        }
    }

    /// `/<name> args`: runs the user-invocable skill `name`, or says the command is unknown.
    pub(super) async fn invoke_skill(&mut self, slash: String, args: String) -> anyhow::Result<()> {
        if slash.starts_with("/mcp:") {
            return self.invoke_prompt(&slash, &args).await;
        }
        // Skill names are lower-case (the spec): `/Fix-Issue` finds `fix-issue`.
        let name = slash.trim_start_matches('/').to_lowercase();
        let skills = self.list_skills().await.unwrap_or_default();
        self.input.set_slash_extras(slash_entries(&skills));
        let Some(skill) = skills.iter().find(|s| s.name == name && s.error.is_empty()) else {
            if self.invoke_custom(&slash, &args).await? {
                return Ok(());
            }
            self.say(&format!(
                "Unknown command: {slash}. Type /help to see the commands.\n"
            ));
            return Ok(());
        };
        if !skill.user_invocable {
            self.say(&format!(
                "The skill {name} is not user-invocable (its SKILL.md says `user-invocable: false`); \
                 the agent loads it when it needs it.\n"
            ));
            return Ok(());
        }
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let loaded = SkillsClient::new(self.link.channel().clone())
            .load(LoadSkillRequest {
                name: skill.id.clone(),
                cwd,
                approve: true,
            })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner();
        let text = invocation_message(&name, &args, &loaded.text);
        self.turn(text).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str) -> SkillInfo {
        SkillInfo {
            id: format!("user:{name}"),
            name: name.into(),
            description: "Fix a GitHub issue\nmore".into(),
            enabled: true,
            permission: "allow".into(),
            user_invocable: true,
            ..Default::default()
        }
    }

    #[test]
    fn only_loadable_user_invocable_skills_become_commands() {
        let mut hidden = skill("hidden");
        hidden.user_invocable = false;
        let mut broken = skill("broken");
        broken.error = "SKILL.md:2: bad".into();
        let mut off = skill("off");
        off.enabled = false;
        let mut hinted = skill("fix-issue");
        hinted.argument_hint = "[issue-number]".into();
        let got = slash_entries(&[hinted, hidden, broken, off]);
        assert_eq!(
            got,
            vec![(
                "/fix-issue".to_string(),
                "[issue-number]  Fix a GitHub issue".to_string()
            )]
        );
    }

    #[test]
    fn arguments_replace_the_placeholder_or_follow_the_instructions() {
        let with = invocation_message("fix", "123", "# Skill: fix\n\nFix issue $ARGUMENTS now.");
        assert_eq!(with, "/fix 123\n\n# Skill: fix\n\nFix issue 123 now.");
        let without = invocation_message("fix", "123", "# Skill: fix\n\nFix it.");
        assert!(without.ends_with("Fix it.\n\nARGUMENTS: 123"), "{without}");
        let none = invocation_message("fix", "", "# Skill: fix\n\nFix it.");
        assert_eq!(none, "/fix\n\n# Skill: fix\n\nFix it.");
    }
}
