//! Systems without Landlock: no sandbox yet. The macOS plan (a generated `sandbox-exec`
//! profile applied by the same launcher) is described in the module header.

use super::{SandboxError, SandboxSpec, Status, Support};

const REASON: &str =
    "Landlock is Linux-only and the macOS sandbox-exec profile is not implemented yet";

pub(super) const METADATA_FILTER: bool = false;

pub(super) fn probe() -> Support {
    Support::Unavailable {
        reason: REASON.into(),
    }
}

pub(super) fn apply(_spec: &SandboxSpec) -> Result<Status, SandboxError> {
    Err(SandboxError::Unavailable {
        reason: REASON.into(),
    })
}
