//! `synapse trust [DIR]`, `synapse trust --list`, `synapse trust --remove DIR`: the folders
//! whose project files the daemon honours. A project's settings can allow commands and set a
//! default permission mode, and its hooks (with the scripts they run) run outside the sandbox,
//! so they count only once the user has seen them: trusting asks the daemon for a review (every
//! settings file, hook script, command, agent and MCP config new or changed since the last
//! trust, with a diff), prints it, asks `Accept these? [y/N]` on a terminal (`--yes` accepts
//! without asking), and sends the review's digest back with the accept, so the daemon pins
//! exactly what was shown. The change goes through the daemon (`Daemon.Trust`), which refuses
//! it from a sandboxed agent shell; the client never writes the list itself.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use synapse_shared::paths::Paths;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::{TrustRequest, TrustReview};
use synapse_shared::trust;
use tonic::transport::Channel;

use crate::connect;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The folder to trust (default: the current one); everything below it is trusted too.
    /// What is new or changed since you last trusted it is listed first, with a diff.
    pub dir: Option<PathBuf>,
    /// Accept what is listed without asking (for scripts); without it and without a terminal,
    /// nothing is trusted.
    #[arg(long, short = 'y', conflicts_with_all = ["list", "remove"])]
    pub yes: bool,
    /// List the trusted folders.
    #[arg(long, conflicts_with_all = ["dir", "remove"])]
    pub list: bool,
    /// Stop trusting this folder.
    #[arg(long, value_name = "DIR")]
    pub remove: Option<PathBuf>,
}

pub async fn run(paths: Paths, args: TrustArgs) -> anyhow::Result<ExitCode> {
    if args.list || args.remove.is_some() {
        return list_or_remove(&paths, args).await;
    }
    let dir = absolute(match args.dir {
        Some(d) => d,
        None => std::env::current_dir().context("cannot read the current directory")?,
    })?;
    if !dir.is_dir() {
        anyhow::bail!("{} is not a folder", dir.display());
    }
    let mut client = DaemonClient::new(connect::connect(&paths).await?);
    let folder = dir.display().to_string();
    let review = call(
        &mut client,
        TrustRequest {
            folder: folder.clone(),
            review: true,
            ..Default::default()
        },
    )
    .await?
    .review
    .unwrap_or_default();
    print!("{}", render(&dir, &review));
    if review.trusted && review.items.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    if !review.items.is_empty() && !args.yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "not trusted: run `synapse trust --yes {}` to accept what is listed above",
                dir.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        if !ask("Accept these? [y/N] ")? {
            println!("Nothing accepted: {} stays as it was.", dir.display());
            return Ok(ExitCode::FAILURE);
        }
    }
    let r = call(
        &mut client,
        TrustRequest {
            folder,
            accept_digest: review.digest.clone(),
            ..Default::default()
        },
    )
    .await?;
    if r.changed {
        println!("Trusted: {}", dir.display());
    } else {
        println!(
            "Trusted again: {} — what is listed above counts from now on.",
            dir.display()
        );
    }
    let project = dir.join(trust::PROJECT_SETTINGS);
    if project.is_file() {
        println!("Its rules in {} now apply.", project.display());
    }
    Ok(ExitCode::SUCCESS)
}

async fn call(
    client: &mut DaemonClient<Channel>,
    request: TrustRequest,
) -> anyhow::Result<synapse_shared::proto::TrustResponse> {
    Ok(client
        .trust(request)
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner())
}

async fn list_or_remove(paths: &Paths, args: TrustArgs) -> anyhow::Result<ExitCode> {
    let mut client = DaemonClient::new(connect::connect(paths).await?);
    if let Some(dir) = args.remove {
        let folder = absolute(dir)?;
        let r = call(
            &mut client,
            TrustRequest {
                folder: folder.display().to_string(),
                remove: true,
                ..Default::default()
            },
        )
        .await?;
        if r.changed {
            println!("No longer trusted: {}", folder.display());
        } else {
            println!("{} was not trusted.", folder.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let r = call(
        &mut client,
        TrustRequest {
            list: true,
            ..Default::default()
        },
    )
    .await?;
    if r.folders.is_empty() {
        println!("No trusted folders. `synapse trust` in a project trusts it.");
    }
    for f in &r.folders {
        println!("{f}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The review as the user reads it: each file new or changed, what it is, and its diff.
fn render(dir: &Path, review: &TrustReview) -> String {
    let mut out = String::new();
    let d = dir.display();
    let n = review.items.len();
    if review.trusted && n == 0 {
        out.push_str(&format!(
            "Already trusted: {d} — nothing new or changed since you last trusted it.\n"
        ));
    } else if review.trusted {
        out.push_str(&format!(
            "{d}: {n} new or changed since you last trusted it:\n"
        ));
    } else if n > 0 {
        out.push_str(&format!(
            "{d} is not trusted yet. Trusting it accepts these {n}:\n"
        ));
    }
    for item in &review.items {
        let state = if item.new { "new" } else { "changed" };
        out.push_str(&format!("\n• {} ({state}): {}\n", item.kind, item.path));
        if !item.about.is_empty() {
            out.push_str(&format!("  {}\n", item.about));
        }
        for line in item.detail.lines() {
            out.push_str(&format!("    {line}\n"));
        }
    }
    if !review.warnings.is_empty() {
        out.push('\n');
    }
    for w in &review.warnings {
        out.push_str(&format!("! {w}\n"));
    }
    if n > 0 {
        out.push('\n');
    }
    out
}

/// Asks `question` on the terminal; true for `y`/`yes`.
fn ask(question: &str) -> anyhow::Result<bool> {
    print!("{question}");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read the answer")?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

fn absolute(dir: PathBuf) -> anyhow::Result<PathBuf> {
    let dir = if dir.is_absolute() {
        dir
    } else {
        std::env::current_dir()
            .context("cannot read the current directory")?
            .join(dir)
    };
    Ok(dir
        .canonicalize()
        .unwrap_or_else(|_| trust::normalize(&dir)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use synapse_shared::proto::TrustReviewItem;

    #[test]
    fn a_review_names_each_file_its_state_and_indents_its_diff() {
        let review = TrustReview {
            digest: "d".into(),
            trusted: true,
            items: vec![TrustReviewItem {
                kind: "hook script".into(),
                path: "/p/.claude/hooks/fmt.sh".into(),
                new: false,
                about: "run by PreToolUse hook `sh .claude/hooks/fmt.sh`".into(),
                detail: "--- as trusted\n+++ now\n+echo pwned".into(),
            }],
            warnings: vec!["Stop hook `node .` names /p, which is a folder".into()],
        };
        let shown = render(Path::new("/p"), &review);
        assert!(shown.starts_with("/p: 1 new or changed since you last trusted it:"));
        assert!(shown.contains("• hook script (changed): /p/.claude/hooks/fmt.sh\n"));
        assert!(shown.contains("\n    +echo pwned\n"), "{shown}");
        assert!(shown.contains("! Stop hook"), "{shown}");
        let nothing = TrustReview {
            trusted: true,
            ..Default::default()
        };
        assert_eq!(
            render(Path::new("/p"), &nothing),
            "Already trusted: /p — nothing new or changed since you last trusted it.\n"
        );
    }
}
