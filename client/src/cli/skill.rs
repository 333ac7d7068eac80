//! `synapse skill list|show|load|create|delete|enable|disable` (and, in
//! [`super::skill_growth`], `search|enhance|versions|rollback|evaluate`): thin calls to the daemon's
//! `Skills` service. Each sends the current directory so the caller's project skills count.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use synapse_shared::paths::Paths;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::*;
use tonic::transport::Channel;

use crate::connect;

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// List skills: id, commands, description (denied skills are hidden).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one skill: where it lives, its state, commands, files and warnings.
    Show {
        /// Skill name or id (`user:pdf-editor`).
        name: String,
    },
    /// Print what the agent sees for `skill load <name>`.
    Load {
        name: String,
        /// Approve a skill whose permission is `ask` without asking.
        #[arg(short, long)]
        yes: bool,
    },
    /// Find skills for a need, matched by meaning by the skill sub-agent.
    ///
    /// With no model reachable (or an unusable answer) the local BM25 ranking answers, and the
    /// output says so: "(local ranking: …)".
    #[command(after_help = "\
Examples:
  synapse skill search \"sum the totals of my PDF invoices\"
  synapse skill search invoices --local     # keyword match, no model
  synapse skill search \"what broke in the logs\" --json")]
    Search {
        /// What you need, in your own words.
        #[arg(required = true, num_args = 1..)]
        query: Vec<String>,
        /// Keyword search over names and descriptions only (no model).
        #[arg(long)]
        local: bool,
        /// Print JSON: {"matched_skills":[{"name","description"}],"ranking","local_reason"}.
        #[arg(long)]
        json: bool,
    },
    /// Create a user skill in $SYNAPSE_HOME/skills/<name>/SKILL.md.
    Create {
        /// Lowercase letters, digits and single hyphens (max 64).
        name: String,
        /// What the skill does and when to use it.
        #[arg(short, long)]
        description: String,
        /// Markdown instructions (default: a title line).
        #[arg(long, conflicts_with = "body_file")]
        body: Option<String>,
        /// Read the instructions from a file.
        #[arg(long)]
        body_file: Option<PathBuf>,
    },
    /// Delete a user skill's folder.
    Delete { name: String },
    /// Let a skill's `allowed-tools` pre-approve commands, as its folder is now.
    ///
    /// A skill's `allowed-tools` count only after you approve them here (or answer "always"
    /// when the REPL asks at `skill load`). The approval is pinned by a SHA-256 of every file of
    /// the skill folder: when the agent or anyone else changes the skill, it counts for nothing
    /// until you approve it again. Even approved, the list only removes the question for
    /// commands that stay inside the sandbox; it never lifts one out of it.
    #[command(after_help = "\
Examples:
  synapse skill show release-notes        # what it lists, and whether it is approved
  synapse skill approve release-notes
  synapse skill approve release-notes --revoke")]
    Approve {
        name: String,
        /// Forget the approval instead.
        #[arg(long)]
        revoke: bool,
    },
    /// Enable a skill (its commands come back).
    Enable { name: String },
    /// Disable a skill (hidden from the agent, commands removed).
    Disable { name: String },
    /// List a user skill's saved versions (taken before each automatic change).
    Versions { name: String },
    /// Restore a saved version byte for byte (default: the newest).
    Rollback { name: String, version: Option<u32> },
    /// Create or improve a skill now through the skill sub-agent; prints its report.
    ///
    /// The sub-agent decides: create a skill, enhance one, or change nothing. With --on/--off
    /// (or nothing), switch (or show) automatic enhancement after every completed turn.
    #[command(alias = "reinforce")]
    #[command(after_help = "\
Examples:
  synapse skill enhance \"summing PDF invoice totals with pdftotext\"
  synapse skill enhance \"what worked for the log analysis\" --from-session 20261122-120102-3fa9c1
  synapse skill enhance --on      # after every completed turn (costs tokens per turn)

Writes happen only under $SYNAPSE_HOME/skills; an existing skill is saved as a version
before it changes (synapse skill versions / rollback).")]
    Enhance {
        /// What to learn (with --from-session: what to look for in that session).
        #[arg(num_args = 0.., conflicts_with_all = ["on", "off"])]
        what: Vec<String>,
        /// Learn from the end of this session's conversation (`synapse sessions list`).
        #[arg(long, value_name = "ID", conflicts_with_all = ["on", "off"])]
        from_session: Option<String>,
        /// Print JSON: {"action","name","report","versions_saved"}.
        #[arg(long)]
        json: bool,
        /// Turn automatic enhancement after every turn on (saved in settings.json).
        #[arg(long, conflicts_with = "off")]
        on: bool,
        /// Turn automatic enhancement off.
        #[arg(long)]
        off: bool,
    },
    /// Score a skill (structural checks and the skill sub-agent's review).
    Evaluate {
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(paths: Paths, cmd: SkillCommand) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(&paths).await?;
    let mut client = SkillsClient::new(channel.clone());
    let cwd = cwd();
    match cmd {
        SkillCommand::List { json } => {
            let r = client
                .list(ListSkillsRequest { cwd })
                .await
                .map_err(rpc)?
                .into_inner();
            if let Some(line) = super::skills_env::skills_dir_line_here(&r.skills_env_dir) {
                eprintln!("{line}");
            }
            let skills = r.skills;
            if json {
                let v: Vec<serde_json::Value> = skills.iter().map(skill_json).collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if skills.is_empty() {
                println!(
                    "No skills yet. Create one with `synapse skill create <name> -d <description>`."
                );
            } else {
                print!("{}", render_list_with_warnings(&skills));
            }
        }
        SkillCommand::Show { name } => {
            let r = client
                .show(ShowSkillRequest { name, cwd })
                .await
                .map_err(rpc)?
                .into_inner();
            if let Some(s) = r.skill {
                print!("{}", render_show(&s, &r.files));
            }
        }
        SkillCommand::Load { name, yes } => return load(&mut client, name, cwd, yes).await,
        SkillCommand::Search { query, local, json } => {
            return super::skill_growth::search(&mut client, query.join(" "), local, json).await;
        }
        SkillCommand::Create {
            name,
            description,
            body,
            body_file,
        } => {
            let body = match body_file {
                Some(f) => std::fs::read_to_string(&f)
                    .with_context(|| format!("cannot read {}", f.display()))?,
                None => body.unwrap_or_default(),
            };
            let r = client
                .create(CreateSkillRequest {
                    name,
                    description,
                    body,
                })
                .await
                .map_err(rpc)?;
            if let Some(s) = r.into_inner().skill {
                println!("created {} at {}", s.id, s.skill_md);
            }
        }
        SkillCommand::Delete { name } => {
            let r = client
                .delete(DeleteSkillRequest {
                    name,
                    cwd: cwd.clone(),
                })
                .await
                .map_err(rpc)?
                .into_inner();
            println!("deleted {}", r.dir);
        }
        SkillCommand::Approve { name, revoke } => {
            let r = client
                .approve(ApproveSkillRequest { name, cwd, revoke })
                .await
                .map_err(rpc)?
                .into_inner();
            print!("{}", render_approval(&r));
        }
        SkillCommand::Enable { name } => set_enabled(&mut client, name, true, cwd).await?,
        SkillCommand::Disable { name } => set_enabled(&mut client, name, false, cwd).await?,
        SkillCommand::Versions { name } => {
            return super::skill_growth::versions(&mut client, name).await;
        }
        SkillCommand::Rollback { name, version } => {
            return super::skill_growth::rollback(&mut client, name, version).await;
        }
        SkillCommand::Enhance {
            what,
            from_session,
            json,
            on,
            off,
        } => {
            let request = super::skill_growth::EnhanceArgs {
                what: what.join(" "),
                from_session,
                json,
                toggle: (on || off).then_some(on),
            };
            return super::skill_growth::enhance(channel, &mut client, request).await;
        }
        SkillCommand::Evaluate { name, json } => {
            return super::skill_growth::evaluate(&mut client, name, json).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn set_enabled(
    client: &mut SkillsClient<Channel>,
    name: String,
    enabled: bool,
    cwd: String,
) -> anyhow::Result<()> {
    let r = client
        .set_enabled(SetSkillEnabledRequest { name, enabled, cwd })
        .await
        .map_err(rpc)?
        .into_inner();
    if let Some(s) = r.skill {
        println!(
            "{} {}",
            s.id,
            if s.enabled { "enabled" } else { "disabled" }
        );
    }
    Ok(())
}

async fn load(
    client: &mut SkillsClient<Channel>,
    name: String,
    cwd: String,
    yes: bool,
) -> anyhow::Result<ExitCode> {
    let req = LoadSkillRequest {
        name: name.clone(),
        cwd: cwd.clone(),
        approve: yes,
    };
    let r = client.load(req).await.map_err(rpc)?.into_inner();
    if !r.needs_approval {
        print!("{}", r.text);
        return Ok(ExitCode::SUCCESS);
    }
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "synapse: skill {} needs approval (permissions.skill says \"ask\"); rerun with --yes to load it",
            r.id
        );
        return Ok(ExitCode::FAILURE);
    }
    eprint!("Load skill {}? [y/N] ", r.id);
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        eprintln!("not loaded");
        return Ok(ExitCode::FAILURE);
    }
    let r = client
        .load(LoadSkillRequest {
            name,
            cwd,
            approve: true,
        })
        .await
        .map_err(rpc)?
        .into_inner();
    print!("{}", r.text);
    Ok(ExitCode::SUCCESS)
}

/// The daemon's message, without tonic's framing.
pub fn rpc(s: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{}", s.message())
}

pub fn cwd() -> String {
    std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default()
}

pub fn render_list(skills: &[SkillInfo]) -> String {
    render_rows(skills, false)
}

/// `skill list`: each skill's row, and under it each of its warnings (a description over the
/// spec's limit, a skipped script, a user skill a project one hides).
fn render_list_with_warnings(skills: &[SkillInfo]) -> String {
    render_rows(skills, true)
}

fn render_rows(skills: &[SkillInfo], warnings: bool) -> String {
    let width = skills
        .iter()
        .map(|s| s.id.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let mut out = String::new();
    for s in skills {
        if !s.error.is_empty() {
            out.push_str(&format!("{:<width$}  BROKEN: {}\n", s.id, s.error));
            continue;
        }
        let mut flags = Vec::new();
        if !s.enabled {
            flags.push("disabled".to_string());
        }
        if s.permission == "ask" {
            flags.push("ask".to_string());
        }
        if s.meta {
            flags.push("meta".to_string());
        }
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join(", "))
        };
        let desc = s.description.lines().next().unwrap_or("");
        out.push_str(&format!("{:<width$}  {desc}{flags}\n", s.id));
        for w in s.warnings.iter().filter(|_| warnings) {
            out.push_str(&format!("{:<width$}  warning: {w}\n", ""));
        }
    }
    out
}

/// What `synapse skill approve` prints.
fn render_approval(r: &ApproveSkillResponse) -> String {
    let name = r.skill.as_ref().map_or("", |s| s.name.as_str());
    let mut out = String::new();
    if r.sha256.is_empty() {
        out.push_str(&if r.revoked {
            format!("Approval of {name}'s allowed-tools revoked.\n")
        } else {
            format!("{name}'s allowed-tools were not approved; nothing to revoke.\n")
        });
        return out;
    }
    if r.patterns.is_empty() {
        out.push_str(&format!(
            "Approved {name} (sha256 {}), but none of its allowed-tools can pre-approve anything.\n",
            short(&r.sha256)
        ));
    } else {
        out.push_str(&format!(
            "Approved {name} (sha256 {}): these run without a question, inside the sandbox only:\n",
            short(&r.sha256)
        ));
        for p in &r.patterns {
            out.push_str(&format!("  {p}\n"));
        }
    }
    for s in &r.skipped {
        out.push_str(&format!("  not pre-approved: {s}\n"));
    }
    out.push_str("Any change to the skill's files voids this approval.\n");
    out
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

fn render_show(s: &SkillInfo, files: &[String]) -> String {
    if !s.error.is_empty() {
        return format!(
            "{} ({}) does not load: nothing of it reaches the agent until SKILL.md is fixed\n  \
             error:  {}\n  folder: {}\n",
            s.name, s.id, s.error, s.dir
        );
    }
    let mut out = format!("{} ({})\n  {}\n", s.name, s.id, s.description);
    out.push_str(&format!("  folder:     {}\n", s.dir));
    out.push_str(&format!(
        "  enabled:    {}\n  permission: {}\n",
        s.enabled, s.permission
    ));
    if !s.argument_hint.is_empty() {
        out.push_str(&format!("  arguments:  {}\n", s.argument_hint));
    }
    if !s.user_invocable {
        out.push_str("  /command:   no (user-invocable: false)\n");
    }
    if s.disable_model_invocation {
        out.push_str("  model:      never loaded by the agent (disable-model-invocation)\n");
    }
    if !s.allowed_tools.is_empty() {
        out.push_str(&format!(
            "  allowed-tools: {} ({})\n",
            s.allowed_tools.join(", "),
            if s.allowed_tools_approval.is_empty() {
                "not approved"
            } else {
                &s.allowed_tools_approval
            }
        ));
    }
    let section = |out: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            out.push_str(&format!("{title}:\n"));
            for i in items {
                out.push_str(&format!("  {i}\n"));
            }
        }
    };
    section(&mut out, "commands", &s.commands);
    section(&mut out, "files", files);
    let shadows: Vec<String> = s
        .shadows
        .iter()
        .enumerate()
        .map(|(i, id)| match s.shadowed_dirs.get(i) {
            Some(dir) => format!("{id}  {dir}"),
            None => id.clone(),
        })
        .collect();
    section(&mut out, "shadows", &shadows);
    section(&mut out, "warnings", &s.warnings);
    out
}

fn skill_json(s: &SkillInfo) -> serde_json::Value {
    serde_json::json!({
        "id": s.id, "name": s.name, "description": s.description, "source": s.source,
        "dir": s.dir, "enabled": s.enabled, "permission": s.permission, "commands": s.commands,
        "shadows": s.shadows, "shadowed_dirs": s.shadowed_dirs, "warnings": s.warnings,
        "meta": s.meta, "error": (!s.error.is_empty()).then_some(&s.error),
        "user_invocable": s.user_invocable, "argument_hint": s.argument_hint,
        "disable_model_invocation": s.disable_model_invocation,
    })
}
