//! `synapse skill versions|rollback|evaluate`: the self-growth calls of the `Skills` service.
//! Evaluate sends the client's environment so the daemon's sub-agent reaches the same model.

use std::process::ExitCode;

use synapse_shared::proto::skills_client::SkillsClient;
use synapse_shared::proto::*;
use tonic::transport::Channel;

use super::skill::{cwd, rpc};

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
