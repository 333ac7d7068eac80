//! `synapse trust [DIR]`, `synapse trust --list`, `synapse trust --remove DIR`: the folders
//! whose `.synapse/settings.json` the daemon honours. A project file can allow commands and set
//! a default permission mode, so it counts only once its user said so. Works without the
//! daemon: the daemon re-reads the list before it next loads a project's rules.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use synapse_shared::paths::Paths;
use synapse_shared::trust;

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

pub fn run(paths: Paths, args: TrustArgs) -> anyhow::Result<ExitCode> {
    let file = paths.trust_file();
    if args.list {
        let folders = trust::load(&file)?;
        if folders.is_empty() {
            println!("No trusted folders. `synapse trust` in a project trusts it.");
        }
        for f in folders {
            println!("{}", f.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = args.remove {
        let dir = absolute(dir)?;
        if trust::remove(&file, &dir)? {
            println!("No longer trusted: {}", dir.display());
        } else {
            println!("{} was not trusted.", dir.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dir = absolute(match args.dir {
        Some(d) => d,
        None => std::env::current_dir().context("cannot read the current directory")?,
    })?;
    if !dir.is_dir() {
        anyhow::bail!("{} is not a folder", dir.display());
    }
    if trust::add(&file, &dir)? {
        println!("Trusted: {}", dir.display());
    } else {
        println!("Already trusted: {}", dir.display());
    }
    let project = dir.join(trust::PROJECT_SETTINGS);
    if project.is_file() {
        println!("Its rules in {} now apply.", project.display());
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
