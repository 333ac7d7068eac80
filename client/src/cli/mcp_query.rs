//! `synapse mcp resources|read|prompts|prompt`: an MCP server's resources and prompts through the
//! daemon's warm connection (`Mcp.Query`); output and exit codes as `synapse mcp call`.

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;

use synapse_shared::paths::Paths;
use synapse_shared::proto::McpQueryRequest;
use synapse_shared::proto::mcp_client::McpClient;

use crate::connect;

/// Largest answer taken from the daemon: a tool's whole output, however long (a stdio server's
/// message is at most 512 MiB). Only what the model receives is capped, and not here.
const MCP_OUTPUT_MAX_BYTES: usize = 1 << 30;

/// The `Mcp` service client, taking answers of any size a server can send.
pub fn mcp_client(channel: tonic::transport::Channel) -> McpClient<tonic::transport::Channel> {
    McpClient::new(channel).max_decoding_message_size(MCP_OUTPUT_MAX_BYTES)
}

/// What to ask.
#[derive(Debug, Clone)]
pub enum Ask {
    Resources,
    Read(String),
    Prompts,
    Prompt { name: String, args: Vec<String> },
}

/// `name=value` words as a map; the word without `=` is named.
pub fn arguments(words: &[String]) -> Result<HashMap<String, String>, String> {
    words
        .iter()
        .map(|w| {
            w.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("prompt argument {w:?} is not name=value"))
        })
        .collect()
}

/// The request for `ask` of `server`, answered for the caller's folder.
pub fn request(server: String, ask: Ask) -> Result<McpQueryRequest, String> {
    request_in((None, None), server, ask)
}

/// [`request`] answered as in project root `workspace` when given (a project server's resource
/// wrapper names its project, so it reaches that server wherever the shell has `cd`-ed to), and
/// for chat session `session` (a session server's wrapper names it; else `$SYNAPSE_SESSION`).
pub fn request_in(
    (workspace, session): (Option<String>, Option<String>),
    server: String,
    ask: Ask,
) -> Result<McpQueryRequest, String> {
    let (kind, target, arguments) = match ask {
        Ask::Resources => ("resources", String::new(), HashMap::new()),
        Ask::Read(uri) => ("read", uri, HashMap::new()),
        Ask::Prompts => ("prompts", String::new(), HashMap::new()),
        Ask::Prompt { name, args } => ("prompt", name, self::arguments(&args)?),
    };
    Ok(McpQueryRequest {
        server,
        kind: kind.into(),
        target,
        arguments,
        cwd: workspace.unwrap_or_else(super::mcp::caller_cwd),
        session: super::mcp::caller_session(session),
    })
}

pub async fn run(paths: &Paths, server: String, ask: Ask) -> anyhow::Result<ExitCode> {
    run_in(paths, (None, None), server, ask).await
}

/// [`run`] for [`request_in`]'s `workspace` and `session`.
pub async fn run_in(
    paths: &Paths,
    caller: (Option<String>, Option<String>),
    server: String,
    ask: Ask,
) -> anyhow::Result<ExitCode> {
    let request = match request_in(caller, server, ask) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("synapse: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let channel = connect::connect(paths).await?;
    match mcp_client(channel).query(request).await {
        Ok(r) => {
            let r = r.into_inner();
            let _ = std::io::stdout().write_all(&r.stdout);
            let _ = std::io::stderr().write_all(&r.stderr);
            Ok(ExitCode::from(u8::try_from(r.exit_code).unwrap_or(1)))
        }
        Err(status) => {
            eprintln!("synapse: {}", status.message());
            Ok(ExitCode::from(3))
        }
    }
}
