//! The one place a subsystem error becomes a gRPC status, by its kind: handlers return the
//! subsystem's typed error with `?` (or `map_err(Status::from)`) and the code follows from what
//! went wrong — a bad argument, something missing, a refusal, a server fault.

use tonic::Status;

use crate::agent::AgentError;
use crate::agent::sessions::ChatError;
use crate::growth::GrowthError;
use crate::growth::versions::VersionError;
use crate::skills::SkillError;
use synapse_mcp::edit::EditError;
use synapse_mcp::oauth::OAuthError;

impl From<ChatError> for Status {
    fn from(e: ChatError) -> Status {
        let msg = e.to_string();
        match e {
            ChatError::BadId(_) | ChatError::BadCwd(_) | ChatError::NotUuid(_) => {
                Status::invalid_argument(msg)
            }
            ChatError::IdInUse(_) => Status::already_exists(msg),
            ChatError::NotFound(_) | ChatError::NoSessions => Status::not_found(msg),
            ChatError::Log(_) => Status::internal(msg),
        }
    }
}

impl From<crate::agent::attach::AttachError> for Status {
    fn from(e: crate::agent::attach::AttachError) -> Status {
        match e {
            crate::agent::attach::AttachError::Chat(e) => Status::from(e),
            crate::agent::attach::AttachError::Agent(e) => Status::from(e),
            crate::agent::attach::AttachError::ToolRules(e)
            | crate::agent::attach::AttachError::Settings(e) => Status::invalid_argument(e),
            e @ crate::agent::attach::AttachError::AddDir(_) => {
                Status::invalid_argument(e.to_string())
            }
        }
    }
}

impl From<AgentError> for Status {
    fn from(e: AgentError) -> Status {
        let msg = e.to_string();
        match e {
            AgentError::UnknownMode(_) | AgentError::AddDir(_) => Status::invalid_argument(msg),
            AgentError::NoGate => Status::failed_precondition(msg),
            AgentError::Config(_) | AgentError::Llm(_) | AgentError::EmptySummary => {
                Status::unavailable(msg)
            }
            AgentError::Stopping => Status::unavailable(msg),
        }
    }
}

/// An MCP config edit's error as a status (a function: both types are other crates').
pub fn edit_status(e: EditError) -> Status {
    {
        let msg = e.to_string();
        match e {
            EditError::BadName(_) => Status::invalid_argument(msg),
            EditError::Corrupt { .. } => Status::failed_precondition(msg),
            EditError::Exists { .. } => Status::already_exists(msg),
            EditError::Missing { .. } => Status::not_found(msg),
            EditError::Io { .. } => Status::internal(msg),
        }
    }
}

/// An OAuth error as a status (a function: both types are other crates').
pub fn oauth_status(e: OAuthError) -> Status {
    {
        let msg = e.to_string();
        match e {
            OAuthError::UnknownServer(_) => Status::not_found(msg),
            OAuthError::NotRemote { .. }
            | OAuthError::StaticAuthorization { .. }
            | OAuthError::Unavailable { .. }
            | OAuthError::NotOffered { .. }
            | OAuthError::NoPkce { .. }
            | OAuthError::NoClient { .. } => Status::failed_precondition(msg),
            OAuthError::Insecure { .. }
            | OAuthError::StateMismatch { .. }
            | OAuthError::Denied { .. }
            | OAuthError::TokenRefused { .. }
            | OAuthError::Registration { .. } => Status::permission_denied(msg),
            OAuthError::TimedOut { .. } => Status::deadline_exceeded(msg),
            OAuthError::Cancelled => Status::cancelled(msg),
            OAuthError::Http { .. }
            | OAuthError::Status { .. }
            | OAuthError::Document { .. }
            | OAuthError::BadToken { .. }
            | OAuthError::Listen { .. } => Status::unavailable(msg),
            OAuthError::NoRefreshToken | OAuthError::LoggedOut => Status::unauthenticated(msg),
            OAuthError::Store { .. } | OAuthError::Corrupt { .. } | OAuthError::Random(_) => {
                Status::internal(msg)
            }
        }
    }
}

impl From<SkillError> for Status {
    fn from(e: SkillError) -> Status {
        let msg = e.to_string();
        match e {
            SkillError::NotFound { .. } => Status::not_found(msg),
            SkillError::Denied { .. }
            | SkillError::PathEscape { .. }
            | SkillError::NotDeletable { .. } => Status::permission_denied(msg),
            SkillError::ApprovalRequired { .. }
            | SkillError::Disabled { .. }
            | SkillError::UserOnly { .. }
            | SkillError::Approval { .. } => Status::failed_precondition(msg),
            SkillError::InvalidName { .. }
            | SkillError::InvalidDescription { .. }
            | SkillError::Format(_) => Status::invalid_argument(msg),
            SkillError::AlreadyExists { .. } => Status::already_exists(msg),
            SkillError::Settings(_) | SkillError::Io { .. } | SkillError::Watch(_) => {
                Status::internal(msg)
            }
        }
    }
}

impl From<GrowthError> for Status {
    fn from(e: GrowthError) -> Status {
        let msg = e.to_string();
        match e {
            GrowthError::Skill(e) => Status::from(e),
            GrowthError::Version(VersionError::Io { .. }) | GrowthError::Io { .. } => {
                Status::internal(msg)
            }
            GrowthError::Version(_) | GrowthError::NoSession { .. } => Status::not_found(msg),
            GrowthError::InvalidName { .. } | GrowthError::BadSessionId(_) => {
                Status::invalid_argument(msg)
            }
            GrowthError::Model(_) => Status::unavailable(msg),
            GrowthError::Run(_) => Status::aborted(msg),
            GrowthError::Internal(_) => Status::internal(msg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::Code;

    #[test]
    fn each_kind_of_error_gets_the_code_a_client_can_act_on() {
        let code = |s: Status| s.code();
        assert_eq!(
            code(ChatError::BadId("x".into()).into()),
            Code::InvalidArgument
        );
        assert_eq!(code(ChatError::NoSessions.into()), Code::NotFound);
        assert_eq!(
            code(AgentError::UnknownMode("z".into()).into()),
            Code::InvalidArgument
        );
        assert_eq!(code(AgentError::Stopping.into()), Code::Unavailable);
        assert_eq!(
            code(GrowthError::Model(AgentError::Stopping).into()),
            Code::Unavailable
        );
        assert_eq!(
            code(edit_status(EditError::BadName("n".into()))),
            Code::InvalidArgument
        );
        assert_eq!(
            code(oauth_status(OAuthError::UnknownServer("x".into()))),
            Code::NotFound
        );
        assert_eq!(
            code(oauth_status(OAuthError::StateMismatch {
                server: "x".into()
            })),
            Code::PermissionDenied
        );
        assert_eq!(
            code(oauth_status(OAuthError::TimedOut {
                server: "x".into(),
                secs: 1
            })),
            Code::DeadlineExceeded
        );
    }

    #[test]
    fn each_kind_of_growth_error_keeps_its_status() {
        let code = |e: GrowthError| Status::from(e).code();
        assert_eq!(
            code(GrowthError::Skill(SkillError::NotFound {
                name: "x".into(),
                suggestions: vec![]
            })),
            Code::NotFound
        );
        assert_eq!(
            code(GrowthError::NoSession {
                id: "1".into(),
                path: "/s".into()
            }),
            Code::NotFound
        );
        assert_eq!(
            code(GrowthError::InvalidName {
                name: "A B".into(),
                reason: "spaces".into()
            }),
            Code::InvalidArgument
        );
        assert_eq!(
            code(GrowthError::Version(VersionError::NoVersions("x".into()))),
            Code::NotFound
        );
        assert_eq!(
            code(GrowthError::Model(crate::agent::AgentError::Stopping)),
            Code::Unavailable
        );
        assert_eq!(code(GrowthError::Run("cancelled".into())), Code::Aborted);
    }
}
