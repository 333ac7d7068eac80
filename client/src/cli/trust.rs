//! `synapse trust [DIR]`, `synapse trust --list`, `synapse trust --remove DIR`: the folders
//! whose `.synapse/settings.json` the daemon honours. A project file can allow commands and set
//! a default permission mode, so it counts only once its user said so. The change goes through
//! the daemon (`Daemon.Trust`), which refuses it from a sandboxed agent shell; the client never
//! writes the list itself.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use synapse_shared::paths::Paths;
use synapse_shared::proto::TrustRequest;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::trust;

use crate::connect;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The folder to trust (default: the current one); everything below it is trusted too.
    pub dir: Option<PathBuf>,
    /// List the trusted folders.
    #[arg(long, conflicts_with_all = ["dir", "remove"])]
    pub list: bool,
    /// Stop trusting this folder.
    #[arg(long, value_name = "DIR")]
    pub remove: Option<PathBuf>,
}

pub async fn run(paths: Paths, args: TrustArgs) -> anyhow::Result<ExitCode> {
    let request = if args.list {
        TrustRequest {
            list: true,
            ..Default::default()
        }
    } else if let Some(dir) = args.remove {
        TrustRequest {
            folder: absolute(dir)?.display().to_string(),
            remove: true,
            list: false,
        }
    } else {
        let dir = absolute(match args.dir {
            Some(d) => d,
            None => std::env::current_dir().context("cannot read the current directory")?,
        })?;
        if !dir.is_dir() {
            anyhow::bail!("{} is not a folder", dir.display());
        }
        TrustRequest {
            folder: dir.display().to_string(),
            ..Default::default()
        }
    };
    let channel = connect::connect(&paths).await?;
    let r = DaemonClient::new(channel)
        .trust(request.clone())
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner();
    let folder = PathBuf::from(&request.folder);
    if request.list {
        if r.folders.is_empty() {
            println!("No trusted folders. `synapse trust` in a project trusts it.");
        }
        for f in &r.folders {
            println!("{f}");
        }
    } else if request.remove {
        if r.changed {
            println!("No longer trusted: {}", folder.display());
        } else {
            println!("{} was not trusted.", folder.display());
        }
    } else {
        if r.changed {
            println!("Trusted: {}", folder.display());
        } else {
            println!("Already trusted: {}", folder.display());
        }
        let project = folder.join(trust::PROJECT_SETTINGS);
        if project.is_file() {
            println!("Its rules in {} now apply.", project.display());
        }
    }
    Ok(ExitCode::SUCCESS)
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
