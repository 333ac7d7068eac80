//! `synapse skill search|enhance|versions|rollback|evaluate`: the self-growth calls of the
//! `Skills` service. Calls that run the skill sub-agent send the client's environment so the
//! daemon's sub-agent reaches the same model.

use std::process::ExitCode;

use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::*;
use tonic::transport::Channel;

use super::skill::{cwd, render_list, rpc};

pub async fn versions(
    client: &mut SkillsClient<Channel>,
    name: String,
) -> anyhow::Result<ExitCode> {
    let list = client
        .versions(SkillVersionsRequest { name: name.clone() })
        .await
        .map_err(rpc)?
        .into_inner()
        .versions;
    if list.is_empty() {
        println!("{name} has no saved versions.");
    }
    for v in list {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let when = ago(now.saturating_sub(v.saved_at));
        println!("{:>3}  {when}  {}", v.number, v.reason);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn rollback(
    client: &mut SkillsClient<Channel>,
    name: String,
    version: Option<u32>,
) -> anyhow::Result<ExitCode> {
    let r = client
        .rollback(RollbackSkillRequest {
            name: name.clone(),
            version: version.unwrap_or(0),
        })
        .await
        .map_err(rpc)?
        .into_inner();
    println!("restored {name} to version {} in {}", r.restored, r.dir);
    Ok(ExitCode::SUCCESS)
}

pub async fn evaluate(
    client: &mut SkillsClient<Channel>,
    name: String,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let r = client
        .evaluate(EvaluateSkillRequest {
            name,
            cwd: cwd(),
            env: std::env::vars().collect(),
        })
        .await
        .map_err(rpc)?
        .into_inner();
    if json {
        println!("{}", r.json);
    } else {
        print!("{}", r.text);
    }
    Ok(ExitCode::SUCCESS)
}

/// "42s ago", "5m ago", "3h ago", "2d ago".
fn ago(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
}

pub async fn search(
    client: &mut SkillsClient<Channel>,
    query: String,
    local: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let r = client
        .search(SearchSkillsRequest {
            query,
            limit: 0,
            cwd: cwd(),
            local,
            env: std::env::vars().collect(),
        })
        .await
        .map_err(rpc)?
        .into_inner();
    if json {
        let matched: Vec<serde_json::Value> = r
            .skills
            .iter()
            .map(|s| serde_json::json!({"name": s.name, "description": s.description, "id": s.id}))
            .collect();
        let out = serde_json::json!({
            "matched_skills": matched,
            "ranking": r.ranking,
            "local_reason": (!r.local_reason.is_empty()).then_some(&r.local_reason),
        });
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    if r.skills.is_empty() {
        println!("No skill matches.");
    } else {
        print!("{}", render_list(&r.skills));
    }
    if r.ranking == "local" {
        println!("(local ranking: {})", r.local_reason);
    }
    Ok(ExitCode::SUCCESS)
}

/// `synapse skill enhance …` as parsed.
pub struct EnhanceArgs {
    pub what: String,
    pub from_session: Option<String>,
    pub json: bool,
    /// `--on` / `--off`.
    pub toggle: Option<bool>,
}

pub async fn enhance(
    channel: Channel,
    client: &mut SkillsClient<Channel>,
    args: EnhanceArgs,
) -> anyhow::Result<ExitCode> {
    if args.toggle.is_some() || (args.what.trim().is_empty() && args.from_session.is_none()) {
        return auto_enhance(channel, args.toggle).await;
    }
    let what = if args.what.trim().is_empty() {
        "Learn what is worth keeping from this session.".to_string()
    } else {
        args.what
    };
    let r = client
        .enhance(EnhanceSkillRequest {
            prompt: what,
            from_session: args.from_session.unwrap_or_default(),
            cwd: cwd(),
            env: std::env::vars().collect(),
        })
        .await
        .map_err(rpc)?
        .into_inner();
    if args.json {
        let out = serde_json::json!({
            "action": r.action,
            "name": r.name,
            "report": r.report,
            "versions_saved": r.versions_saved,
        });
        println!("{out}");
    } else {
        println!("{}", r.report.trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

/// Shows or switches `skillEnhance.autoEnhance`.
async fn auto_enhance(channel: Channel, toggle: Option<bool>) -> anyhow::Result<ExitCode> {
    let mut daemon = DaemonClient::new(channel);
    let s = match toggle {
        Some(enabled) => {
            daemon
                .set_auto_enhance(SetAutoEnhanceRequest { enabled })
                .await
        }
        None => daemon.get_settings(GetSettingsRequest {}).await,
    }
    .map_err(rpc)?
    .into_inner();
    if toggle == Some(true) {
        eprint!(
            "{}",
            enhance_on_warning(
                &crate::render::theme::Theme::detect(),
                "synapse skill enhance --off"
            )
        );
    }
    let state = if s.auto_enhance { "on" } else { "off" };
    println!(
        "Automatic skill enhancement after every turn is {state} ({}).",
        s.settings_path
    );
    if toggle.is_none() {
        println!(
            "Run `synapse skill enhance \"<what to learn>\"` to enhance now, or --on/--off to switch."
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What turning automatic enhancement on costs, said before it is turned on (seed 002 §4.5.2):
/// the same words in the REPL (`/skill enhance --on`) and here; `off` is how to turn it off there.
pub(crate) fn enhance_on_warning(t: &crate::render::theme::Theme, off: &str) -> String {
    format!(
        "{} {}\n  After every turn, a skill sub-agent reviews what was done and may create\n  a new skill or improve an existing one.\n  {}\n\n  Turn it off any time with {off}\n\n",
        t.yellow("⚠"),
        t.bold("Turning on automatic skill enhancement"),
        t.yellow("This costs extra tokens on every turn.")
    )
}
