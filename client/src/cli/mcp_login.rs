//! `synapse mcp login|logout <server>`: OAuth for remote MCP servers. The daemon does the
//! protocol and keeps every secret (the PKCE verifier, the state, the tokens) and listens on
//! 127.0.0.1 for the browser's redirect; this side prints the authorization URL, opens the
//! browser, and waits for the daemon's outcome. The daemon refuses both from a sandboxed shell.

use std::process::ExitCode;

use synapse_shared::paths::Paths;
use synapse_shared::proto::mcp_client::McpClient;
use synapse_shared::proto::mcp_login_event::Event;
use synapse_shared::proto::{McpLoginRequest, McpLogoutRequest, McpServerState};

use super::mcp::caller_cwd;
use crate::connect;

pub async fn login(
    paths: &Paths,
    server: String,
    timeout: Option<u32>,
    no_browser: bool,
) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(paths).await?;
    let request = McpLoginRequest {
        server: server.clone(),
        cwd: caller_cwd(),
        timeout_sec: timeout.unwrap_or(0),
    };
    let mut events = match McpClient::new(channel).login(request).await {
        Ok(r) => r.into_inner(),
        Err(status) => return Ok(failed(&server, &status)),
    };
    loop {
        let event = match events.message().await {
            Ok(Some(e)) => e.event,
            Ok(None) => {
                eprintln!("synapse: the login of {server} ended without an answer");
                return Ok(ExitCode::FAILURE);
            }
            Err(status) => return Ok(failed(&server, &status)),
        };
        match event {
            Some(Event::AuthorizationUrl(url)) => show_url(&server, &url, no_browser, timeout),
            Some(Event::Done(done)) => {
                println!("{}", done.note);
                let ready = done
                    .server
                    .is_some_and(|s| s.state == McpServerState::Ready as i32);
                return Ok(if ready {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                });
            }
            None => {}
        }
    }
}

fn show_url(server: &str, url: &str, no_browser: bool, timeout: Option<u32>) {
    let opened = if no_browser {
        Err("--no-browser".to_string())
    } else {
        super::browser::open(url)
    };
    match opened {
        Ok(with) => println!(
            "Opened your browser ({with}) to log in to {server}. If it did not open, visit:"
        ),
        Err(why) => println!("No browser was started ({why}). To log in to {server}, open:"),
    }
    println!("  {url}");
    let secs = timeout.filter(|t| *t > 0).unwrap_or(300);
    println!("Waiting up to {secs} s for the browser to come back to Synapse…");
}

fn failed(server: &str, status: &tonic::Status) -> ExitCode {
    eprintln!("synapse: login to {server} failed: {}", status.message());
    ExitCode::FAILURE
}

pub async fn logout(paths: &Paths, server: String) -> anyhow::Result<ExitCode> {
    let channel = connect::connect(paths).await?;
    let request = McpLogoutRequest {
        server: server.clone(),
        cwd: caller_cwd(),
    };
    match McpClient::new(channel).logout(request).await {
        Ok(r) => {
            println!("{}", r.into_inner().note);
            Ok(ExitCode::SUCCESS)
        }
        Err(status) => {
            eprintln!("synapse: logout of {server} failed: {}", status.message());
            Ok(ExitCode::FAILURE)
        }
    }
}
