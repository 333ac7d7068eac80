//! What one simple command does, as the native decision sees it: its risk, and where it writes
//! relative to the writable folders.
//!
//! A `cd` earlier in the same command line moves where later relative paths land
//! ([`ShellDir`]). Subshells are flattened by the parser, so `(cd x); rm y` looks the same as
//! `cd x; rm y`: a command after a `cd` into the working folders is therefore judged from both
//! the folder the line started in and the one `cd` named, and the worse result counts. After a
//! `cd` out of the working folders (or to a folder only known at run time), a relative write
//! cannot be checked and the command asks.

use std::path::PathBuf;

use super::super::argv::{ArgOpts, operands};
use super::super::context::{Context, normalize, resolve_known};
use super::super::parse::{Pipeline, SimpleCommand};
use super::super::risky::risky;
use super::super::writes::write_targets;

/// Where the shell is, as far as the `cd`s read so far tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ShellDir {
    Start,
    /// Inside the working, temp or extra folders.
    Inside(PathBuf),
    /// Outside them, or unknown; the text of the `cd` for messages.
    Away(Option<PathBuf>, String),
}

impl ShellDir {
    /// Follows `cmd` if it changes the directory (call after judging it).
    pub(super) fn follow(&mut self, cmd: &SimpleCommand, ctx: &Context) {
        let Some(program @ ("cd" | "pushd" | "popd")) = cmd.program() else {
            return;
        };
        let away = |path| ShellDir::Away(path, cmd.text.clone());
        let target = operands(&cmd.words, ArgOpts::NONE).first().copied();
        let target = match (program, target) {
            ("cd", None) => Some("~"),
            ("popd", _) | (_, None | Some("-")) => None,
            (_, Some(t)) => Some(t),
        };
        let base = match self {
            ShellDir::Start => Some(ctx.cwd.to_path_buf()),
            ShellDir::Inside(dir) => Some(dir.clone()),
            ShellDir::Away(dir, _) => dir.clone(),
        };
        let path = target.zip(base).and_then(|(t, base)| {
            let at = Context { cwd: &base, ..*ctx };
            resolve_known(&at, t)
        });
        *self = match path {
            Some(p) if p == normalize(ctx.cwd) => ShellDir::Start,
            Some(p) if ctx.is_within_work_dirs(&p) => ShellDir::Inside(p),
            other => away(other),
        };
    }
}

pub(super) struct Facts {
    pub risk: Option<String>,
    /// Write targets outside the writable folders, for messages.
    pub outside: Vec<String>,
    /// Redirect targets among `outside`.
    pub redirect_outside: Vec<String>,
    /// Write targets only known at run time.
    pub unknown: Vec<String>,
    /// The `cd` that left the working folders before this command wrote to a relative path.
    pub moved_away: Option<String>,
}

impl Facts {
    pub(super) fn of(
        pipeline: &Pipeline,
        cmd: &SimpleCommand,
        ctx: &Context,
        dir: &ShellDir,
    ) -> Self {
        let mut facts = Self::judged_from(pipeline, cmd, ctx, ctx);
        match dir {
            ShellDir::Start => {}
            ShellDir::Inside(path) => {
                let extra: Vec<PathBuf> = std::iter::once(ctx.cwd.to_path_buf())
                    .chain(ctx.extra_writable.iter().cloned())
                    .collect();
                let moved = Context {
                    cwd: path,
                    extra_writable: &extra,
                    ..*ctx
                };
                facts.add(Self::judged_from(pipeline, cmd, &moved, ctx));
            }
            ShellDir::Away(path, cd) => {
                if let Some(path) = path {
                    // Resolving from there names the real targets. Its risk check takes that
                    // folder for the work and may miss things, but whatever it finds is real.
                    let there = Context { cwd: path, ..*ctx };
                    facts.add(Self::judged_from(pipeline, cmd, &there, ctx));
                }
                let relative = |t: &String| {
                    !(t.starts_with('/')
                        || t.starts_with('~')
                        || t.starts_with("$HOME")
                        || t.starts_with("${HOME}"))
                };
                if write_targets(cmd).iter().any(relative) {
                    facts.moved_away = Some(cd.clone());
                }
            }
        }
        facts
    }

    /// Risk and targets seen from `judged`, writability checked against `roots`.
    fn judged_from(
        pipeline: &Pipeline,
        cmd: &SimpleCommand,
        judged: &Context,
        roots: &Context,
    ) -> Self {
        let mut facts = Facts {
            risk: risky(pipeline, cmd, judged),
            outside: Vec::new(),
            redirect_outside: Vec::new(),
            unknown: Vec::new(),
            moved_away: None,
        };
        let redirects = cmd.writes();
        for target in write_targets(cmd) {
            match resolve_known(judged, &target) {
                None => facts.unknown.push(target),
                Some(path) if !roots.is_writable(&path) => {
                    if redirects.contains(&target.as_str()) {
                        facts.redirect_outside.push(roots.show(&path));
                    }
                    facts.outside.push(roots.show(&path));
                }
                Some(_) => {}
            }
        }
        facts
    }

    fn add(&mut self, other: Facts) {
        self.risk = self.risk.take().or(other.risk);
        for (mine, theirs) in [
            (&mut self.outside, other.outside),
            (&mut self.redirect_outside, other.redirect_outside),
            (&mut self.unknown, other.unknown),
        ] {
            for item in theirs {
                if !mine.contains(&item) {
                    mine.push(item);
                }
            }
        }
    }

    /// Approving it means leaving the sandbox.
    pub(super) fn needs_escalation(&self) -> bool {
        self.risk.is_some() || !self.outside.is_empty()
    }

    /// "Always" should save the exact command, not a prefix: what it touches is the concern.
    pub(super) fn needs_exact_rule(&self) -> bool {
        self.needs_escalation() || self.moved_away.is_some() || !self.unknown.is_empty()
    }
}
