//! `web_search <query> [--max N]`: asks the configured provider ([`super::search`]) and lists
//! each result as title, URL and snippet. Without a provider it says how to configure one.

use std::path::PathBuf;

use futures::future::BoxFuture;
use reqwest::Client;

use super::SettingsFn;
use super::search::{ResolvedProvider, SEARCH_TIMEOUT, SearchError, SearchHit};
use super::settings::WebSettings;
use crate::shell::session::{EXIT_CANCELLED, EXIT_TIMED_OUT};
use synapse_command::args::{OptSpec, UnknownOpts};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

/// Results listed unless `--max` says otherwise.
pub const RESULTS_DEFAULT: usize = 8;
/// The most `--max` may ask for.
pub const RESULTS_LIMIT: usize = 20;

pub static SPEC: CommandSpec = CommandSpec {
    name: "web_search",
    usage: "web_search <query> [--max N]",
    summary: "Search the web (titles, URLs, snippets).",
    help: "\
Arguments:
  <query>   what to look for; several words are joined into one query
  --max N   results to list (default 8, at most 20)

Without a provider in the user's settings it says how to set one up. Read a result with
`web_fetch <url>`.

Examples:
  web_search rust tokio select cancellation
  web_search \"serde flatten unknown fields\" --max 3",
};

pub struct WebSearchCommand {
    settings: SettingsFn,
    settings_path: PathBuf,
    client: std::sync::OnceLock<Client>,
}

impl WebSearchCommand {
    /// `settings_path` is only named in messages that tell the user what to edit.
    pub fn new(settings: SettingsFn, settings_path: PathBuf) -> Self {
        Self {
            settings,
            settings_path,
            client: std::sync::OnceLock::new(),
        }
    }

    fn client(&self) -> Result<Client, String> {
        if let Some(c) = self.client.get() {
            return Ok(c.clone());
        }
        let client = Client::builder()
            .user_agent(concat!("synapse/", env!("CARGO_PKG_VERSION")))
            // A redirect would carry the key header to wherever it points.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        Ok(self.client.get_or_init(|| client).clone())
    }

    fn not_configured(&self) -> CommandOutput {
        CommandOutput::failure(
            format!(
                "web_search: no search provider is configured. Add one to {}, for example\n  \
                 \"web\": {{\"search\": {{\"provider\": \"searxng\", \"url\": \"http://localhost:8888\"}}}}\n  \
                 \"web\": {{\"search\": {{\"provider\": \"brave\", \"apiKey\": \"…\"}}}}   (or set BRAVE_API_KEY)\n  \
                 \"web\": {{\"search\": {{\"provider\": \"tavily\", \"apiKey\": \"…\"}}}}  (or set TAVILY_API_KEY)\n\
                 Until then, fetch a known page with `web_fetch <url>`.",
                self.settings_path.display()
            ),
            1,
        )
    }
}

impl AgentCommand for WebSearchCommand {
    fn kind(&self) -> synapse_session::ToolKind {
        synapse_session::ToolKind::Fetch
    }

    fn reads_only(&self) -> bool {
        true
    }

    fn spec(&self) -> &'static CommandSpec {
        &SPEC
    }

    fn run<'a>(
        &'a self,
        ctx: &'a mut CommandContext<'_>,
        args: Vec<String>,
    ) -> BoxFuture<'a, CommandOutput> {
        Box::pin(async move {
            let parsed = match SPEC.parse(args, &[OptSpec::value("--max")], UnknownOpts::Reject) {
                Ok(p) => p,
                Err(usage) => return usage,
            };
            let query = parsed.positionals.join(" ");
            if query.trim().is_empty() {
                return SPEC.usage_error("missing <query>");
            }
            let max = match parsed.number("--max", RESULTS_DEFAULT) {
                Ok(n) if (1..=RESULTS_LIMIT).contains(&n) => n,
                Ok(_) => {
                    return SPEC
                        .usage_error(format!("--max must be between 1 and {RESULTS_LIMIT}"));
                }
                Err(e) => return SPEC.usage_error(e),
            };
            let settings = (self.settings)();
            let web = match WebSettings::from_settings(&settings) {
                Ok(w) => w,
                Err(e) => return CommandOutput::failure(format!("web_search: {e}"), 1),
            };
            let lookup = |var: &str| {
                ctx.env_var(var)
                    .map(|v| v.to_string_lossy().into_owned())
                    .or_else(|| settings.env.get(var).cloned())
                    .or_else(|| std::env::var(var).ok())
            };
            let provider = match ResolvedProvider::resolve(web.search.as_ref(), &lookup) {
                Ok(p) => p,
                Err(SearchError::NotConfigured) => return self.not_configured(),
                Err(e) => return CommandOutput::failure(format!("web_search: {e}"), 1),
            };
            let client = match self.client() {
                Ok(c) => c,
                Err(e) => return CommandOutput::failure(format!("web_search: {e}"), 1),
            };
            let budget = ctx.timeout().min(SEARCH_TIMEOUT);
            let cancel = ctx.cancel().clone();
            let result = tokio::select! {
                r = tokio::time::timeout(budget, provider.search(&client, &query, max)) => r,
                _ = cancel.cancelled() => {
                    return CommandOutput::failure("web_search: cancelled", EXIT_CANCELLED);
                }
            };
            match result {
                Err(_) => CommandOutput {
                    text: format!(
                        "web_search: {} did not answer within {} s",
                        provider.kind.name(),
                        budget.as_secs_f64()
                    ),
                    exit_code: EXIT_TIMED_OUT,
                    restarted: false,
                    timed_out: true,
                    changes: Vec::new(),
                },
                Ok(Err(e)) => CommandOutput::failure(format!("web_search: {e}"), 1),
                Ok(Ok(hits)) => CommandOutput::success(render(&query, provider.kind.name(), &hits)),
            }
        })
    }
}

fn render(query: &str, provider: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("No results for {query:?} ({provider}).\n");
    }
    let mut out = format!("Results for {query:?} ({provider}):\n");
    for (i, hit) in hits.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out
}
