//! The trusted folders (`$SYNAPSE_HOME/trusted_folders.json`), changed only through the daemon
//! (`Daemon.Trust`, used by `synapse trust`): the service refuses a change from a sandboxed
//! client before calling [`change`], so an agent cannot trust the repository it works in.
//!
//! Trusting is a review: [`TrustChange::Review`] computes what trusting a folder would accept
//! ([`trust_review`]: its settings files, custom commands and agents, MCP configs and every
//! project file a hook runs, each new or changed one with a diff) and changes nothing;
//! [`TrustChange::Add`] with that review's digest pins exactly what was shown and adds the
//! folder — refused when the content moved in between. An `Add` without a digest (a client of
//! before reviews) pins what reads now.

use std::path::{Path, PathBuf};

use super::trust_review::{self, Review, ReviewPlaces};
use crate::hooks::HookEntry;
use crate::workspace::trust_pins;
use synapse_shared::trust::{self, TrustError};

#[derive(Debug, thiserror::Error)]
pub enum TrustListError {
    #[error("{0} is not a folder; trust the project's folder")]
    NotAFolder(PathBuf),
    #[error(
        "{} changed while you reviewed it; run `synapse trust {}` again to see what it holds now",
        .0.display(), .0.display()
    )]
    Moved(PathBuf),
    #[error(transparent)]
    List(#[from] TrustError),
    #[error(transparent)]
    Pin(#[from] crate::workspace::trust_pins::PinError),
}

/// What `synapse trust` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustChange {
    /// What trusting the folder would accept; nothing changes.
    Review(PathBuf),
    /// Trust the folder, pinning what the review with `digest` showed (`None`: what reads now).
    Add {
        folder: PathBuf,
        digest: Option<String>,
    },
    Remove(PathBuf),
    List,
}

/// What a change did.
#[derive(Debug, Clone)]
pub struct TrustOutcome {
    /// The list changed (false: already trusted / was not trusted / only reviewed).
    pub changed: bool,
    /// The folders afterwards.
    pub folders: Vec<PathBuf>,
    /// The review (of `Review`, and of what `Add` accepted).
    pub review: Option<Review>,
}

/// The daemon's side of a review: the hooks that could run in a folder, and the user's home.
pub struct TrustContext<'a> {
    /// `$SYNAPSE_HOME/trusted_folders.json`.
    pub file: &'a Path,
    pub home: Option<&'a Path>,
    /// Every hook that could run in the folder, as its files read now.
    pub hooks: &'a dyn Fn(&Path) -> Vec<HookEntry>,
}

impl TrustContext<'_> {
    fn pins(&self) -> PathBuf {
        trust_pins::pin_file(self.file.parent().unwrap_or(Path::new("/")))
    }

    fn review(&self, folder: &Path) -> Result<Review, TrustListError> {
        if !folder.is_dir() {
            return Err(TrustListError::NotAFolder(folder.to_path_buf()));
        }
        let hooks = (self.hooks)(folder);
        let pins = self.pins();
        Ok(trust_review::review(
            folder,
            &ReviewPlaces {
                pins: &pins,
                home: self.home,
                hooks: &hooks,
            },
        ))
    }
}

/// Applies `change` to the list in `ctx.file`.
pub fn change(ctx: &TrustContext<'_>, change: TrustChange) -> Result<TrustOutcome, TrustListError> {
    let file = ctx.file;
    let (changed, review) = match change {
        TrustChange::List => (false, None),
        TrustChange::Review(folder) => (false, Some(ctx.review(&folder)?)),
        TrustChange::Add { folder, digest } => {
            let review = ctx.review(&folder)?;
            if digest.is_some_and(|d| d != review.digest) {
                return Err(TrustListError::Moved(folder));
            }
            // Pinned first: a folder in the list with nothing pinned would hold everything.
            trust_review::accept(&review, &ctx.pins())?;
            (trust::add(file, &folder)?, Some(review))
        }
        TrustChange::Remove(folder) => (trust::remove(file, &folder)?, None),
    };
    Ok(TrustOutcome {
        changed,
        folders: trust::load(file)?,
        review,
    })
}

/// Whether `folder` (or a folder above it) is in the list in `file` (false when unreadable).
pub fn is_trusted(file: &Path, folder: &Path) -> bool {
    trust::load(file).is_ok_and(|list| trust::is_trusted(&list, folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_list_remove_and_an_accept_of_a_stale_review_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("trusted_folders.json");
        let project = tempfile::tempdir().unwrap();
        let dir = project.path().to_path_buf();
        let no_hooks = |_: &Path| Vec::new();
        let ctx = TrustContext {
            file: &file,
            home: None,
            hooks: &no_hooks,
        };
        let add = |digest: Option<String>| TrustChange::Add {
            folder: dir.clone(),
            digest,
        };
        std::fs::create_dir_all(dir.join(".synapse")).unwrap();
        let settings = dir.join(".synapse/settings.json");
        std::fs::write(&settings, "{}").unwrap();
        let shown = change(&ctx, TrustChange::Review(dir.clone())).unwrap();
        assert!(!shown.changed && shown.folders.is_empty());
        let digest = shown.review.unwrap().digest;
        std::fs::write(&settings, r#"{"permissions": {"defaultMode": "yolo"}}"#).unwrap();
        assert!(matches!(
            change(&ctx, add(Some(digest))),
            Err(TrustListError::Moved(_))
        ));
        assert!(!is_trusted(&file, &dir), "a refused accept trusts nothing");
        let fresh = change(&ctx, TrustChange::Review(dir.clone())).unwrap();
        let digest = fresh.review.unwrap().digest;
        assert!(change(&ctx, add(Some(digest))).unwrap().changed);
        assert!(!change(&ctx, add(None)).unwrap().changed);
        assert!(is_trusted(&file, &dir.join("sub")));
        assert_eq!(change(&ctx, TrustChange::List).unwrap().folders.len(), 1);
        assert!(matches!(
            change(
                &ctx,
                TrustChange::Add {
                    folder: dir.join("missing"),
                    digest: None
                }
            ),
            Err(TrustListError::NotAFolder(_))
        ));
        assert!(change(&ctx, TrustChange::Remove(dir)).unwrap().changed);
        assert!(change(&ctx, TrustChange::List).unwrap().folders.is_empty());
    }
}
