//! `/hooks`: the hooks in force for this folder (`Daemon.ListHooks`), grouped by event, each
//! with its matcher, command and the file it comes from; then what is wrong in those files or
//! waits for `synapse trust`.

use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_shared::proto::{HookInfo, ListHooksRequest};

use super::Repl;
use crate::render::theme::Theme;

impl Repl {
    pub(super) async fn hooks(&mut self) -> anyhow::Result<()> {
        self.ensure_link().await?;
        let listed = DaemonClient::new(self.link.channel().clone())
            .list_hooks(ListHooksRequest {
                cwd: crate::cli::mcp::caller_cwd(),
            })
            .await
            .map_err(|s| anyhow::anyhow!("{}", s.message()))?
            .into_inner();
        self.say(&render(&self.theme, &listed.hooks, &listed.problems));
        Ok(())
    }
}

/// The listing as printed.
fn render(t: &Theme, hooks: &[HookInfo], problems: &[String]) -> String {
    let mut out = String::new();
    if hooks.is_empty() {
        out.push_str(
            "No hooks configured. Add them under \"hooks\" in ~/.claude/settings.json or \
             $SYNAPSE_HOME/settings.json (Claude Code's format); a trusted project's \
             .claude/settings.json counts too.\n",
        );
    }
    let mut event = "";
    for h in hooks {
        if h.event != event {
            event = &h.event;
            out.push_str(&format!("{}\n", t.bold(event)));
        }
        let matcher = if h.matcher.is_empty() {
            "*"
        } else {
            &h.matcher
        };
        out.push_str(&format!(
            "  {matcher}  {}  {}\n",
            h.command,
            t.dim(&format!("({}, {} s)", h.source, h.timeout_sec))
        ));
    }
    for p in problems {
        out.push_str(&format!("{} {p}\n", t.yellow("!")));
    }
    out
}
