//! `web_fetch <url> [--raw] [--max-chars N]`: a page as the model should read it. Parses the
//! arguments, reads the `web` settings, answers from the session's cache when it can, else
//! fetches ([`super::fetch`]) within the command's time budget, renders ([`super::render`])
//! and cuts the content to `--max-chars`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::SettingsFn;
use super::cache::{CacheKey, FetchCache};
use super::fetch::{self, FetchError, Fetched, WebClients};
use super::render::{self, Kind};
use super::settings::WebSettings;
use crate::shell::session::{EXIT_CANCELLED, EXIT_TIMED_OUT};
use synapse_command::args::{OptSpec, UnknownOpts};
use synapse_command::{AgentCommand, CommandContext, CommandOutput, CommandSpec};

/// Characters of content shown unless `--max-chars` says otherwise.
pub const MAX_CHARS_DEFAULT: usize = 30_000;
/// The most `--max-chars` may ask for.
pub const MAX_CHARS_LIMIT: usize = 200_000;

pub static SPEC: CommandSpec = CommandSpec {
    name: "web_fetch",
    usage: "web_fetch <url> [--raw] [--max-chars N]",
    summary: "Fetch a URL; HTML comes back as Markdown.",
    help: "\
Arguments:
  <url>          an http:// or https:// address (https:// when no scheme is given)
  --raw          show the body as received (HTML source) instead of converting it
  --max-chars N  show at most N characters of the content (default 30000, at most 200000)

HTML becomes Markdown (no scripts, styles, navigation or forms), JSON is pretty-printed, other
text is shown as is; binary content is refused with its type and size. Redirects (at most 10)
are followed and listed. Loopback and private addresses are refused unless settings.json has
\"web\": {\"allowPrivateNetworks\": true}. A URL fetched again within minutes is cached.

Examples:
  web_fetch https://docs.rs/serde/latest/serde/
  web_fetch https://api.github.com/repos/rust-lang/rust --max-chars 5000",
};

/// A rendered page, as cached: everything but the `--max-chars` cut.
#[derive(Debug, Clone)]
struct Rendered {
    /// `URL:`, `Redirects:`, `Status:` and `Title:` lines.
    header: String,
    content: String,
    /// A note after the content (the body was cut at the byte cap).
    note: Option<String>,
    exit_code: i32,
}

pub struct WebFetchCommand {
    settings: SettingsFn,
    clients: WebClients,
    cache: FetchCache<Arc<Rendered>>,
}

impl WebFetchCommand {
    pub fn new(settings: SettingsFn) -> Self {
        Self {
            settings,
            clients: WebClients::default(),
            cache: FetchCache::default(),
        }
    }

    async fn fetch_and_render(
        &self,
        url: reqwest::Url,
        raw: bool,
        web: &WebSettings,
    ) -> Result<Rendered, FetchError> {
        let fetched = fetch::fetch(
            &self.clients,
            url,
            web.allow_private_networks,
            web.fetch_max_bytes,
        )
        .await?;
        let rendered = tokio::task::spawn_blocking(move || render_fetched(fetched, raw))
            .await
            .unwrap_or_else(|e| Rendered {
                header: String::new(),
                content: format!("web_fetch: the page could not be converted: {e}"),
                note: None,
                exit_code: 1,
            });
        Ok(rendered)
    }
}

impl AgentCommand for WebFetchCommand {
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
            let opts = [OptSpec::flag("--raw"), OptSpec::value("--max-chars")];
            let parsed = match SPEC.parse(args, &opts, UnknownOpts::Reject) {
                Ok(p) => p,
                Err(usage) => return usage,
            };
            let [url] = parsed.positionals.as_slice() else {
                return SPEC.usage_error(if parsed.positionals.is_empty() {
                    "missing <url>"
                } else {
                    "expected one <url>; quote it if it contains spaces or shell characters"
                });
            };
            let max_chars = match parsed.number("--max-chars", MAX_CHARS_DEFAULT) {
                Ok(0) => return SPEC.usage_error("--max-chars must be at least 1"),
                Ok(n) if n > MAX_CHARS_LIMIT => {
                    return SPEC
                        .usage_error(format!("--max-chars may be at most {MAX_CHARS_LIMIT}"));
                }
                Ok(n) => n,
                Err(e) => return SPEC.usage_error(e),
            };
            let raw = parsed.flag("--raw");
            let web = match WebSettings::from_settings(&(self.settings)()) {
                Ok(w) => w,
                Err(e) => return CommandOutput::failure(format!("web_fetch: {e}"), 1),
            };
            let url = match fetch::parse_url(url) {
                Ok(u) => u,
                Err(e) => return CommandOutput::failure(format!("web_fetch: {e}"), 1),
            };
            let key = CacheKey {
                session: ctx.session_name().to_string(),
                url: url.to_string(),
                raw,
            };
            if let Some(hit) = self.cache.get(&key, web.cache_ttl) {
                return output(&hit.value, max_chars, Some(hit.age));
            }
            let budget = ctx.timeout().min(web.fetch_timeout);
            let cancel = ctx.cancel().clone();
            let result = tokio::select! {
                r = tokio::time::timeout(budget, self.fetch_and_render(url.clone(), raw, &web)) => r,
                _ = cancel.cancelled() => {
                    return CommandOutput::failure(format!("web_fetch: {url}: cancelled"), EXIT_CANCELLED);
                }
            };
            match result {
                Err(_) => CommandOutput {
                    text: format!(
                        "web_fetch: {url} did not finish within {}; try again later or another source",
                        human_duration(budget)
                    ),
                    exit_code: EXIT_TIMED_OUT,
                    restarted: false,
                    timed_out: true,
                    changes: Vec::new(),
                },
                Ok(Err(e)) => CommandOutput::failure(format!("web_fetch: {e}"), 1),
                Ok(Ok(rendered)) => {
                    let rendered = Arc::new(rendered);
                    if rendered.exit_code == 0 {
                        let size = rendered.header.len() + rendered.content.len();
                        self.cache.put(key, rendered.clone(), size, web.cache_ttl);
                    }
                    output(&rendered, max_chars, None)
                }
            }
        })
    }
}

/// Turns the response into the header lines and the content the model reads.
fn render_fetched(fetched: Fetched, raw: bool) -> Rendered {
    let mut header = format!("URL: {}\n", fetched.url);
    if !fetched.redirects.is_empty() {
        let hops: Vec<String> = fetched
            .redirects
            .iter()
            .map(|h| format!("{} {}", h.status, h.to))
            .collect();
        header.push_str(&format!("Redirects: {}\n", hops.join(" → ")));
    }
    let content_type = fetched.content_type.as_deref();
    let kind = if fetched.binary {
        Kind::Binary
    } else {
        render::kind_of(content_type, &fetched.body)
    };
    let type_name = content_type
        .map(render::mime_of)
        .unwrap_or_else(|| "no Content-Type".into());
    let size = match (fetched.binary, fetched.declared_len) {
        (false, _) if !fetched.cut => render::human_bytes(fetched.body.len() as u64),
        (_, Some(n)) => render::human_bytes(n),
        (true, None) => "size not given".into(),
        (false, None) => format!(
            "more than {}",
            render::human_bytes(fetched.body.len() as u64)
        ),
    };
    let status = fetched.status;
    let reason = status.canonical_reason().unwrap_or("");
    header.push_str(&format!(
        "Status: {} {reason} · {type_name} · {size}",
        status.as_u16()
    ));
    let exit_code = if status.is_success() { 0 } else { 1 };
    if kind == Kind::Binary {
        header.push('\n');
        return Rendered {
            header,
            content: format!(
                "web_fetch: refusing binary content ({type_name}, {size}); only HTML, JSON and \
                 text are shown. Download it with `curl -o FILE URL` if you need the file."
            ),
            note: None,
            exit_code: 1,
        };
    }
    let text = render::decode(content_type, &fetched.body, kind);
    let content = match (kind, raw) {
        (_, true) => text,
        (Kind::Html, false) => {
            let page = render::html_to_markdown(&text);
            if let Some(title) = page.title {
                header.push_str(&format!("\nTitle: {title}"));
            }
            page.markdown
        }
        (Kind::Json, false) => render::pretty_json(&text).unwrap_or(text),
        _ => text,
    };
    header.push('\n');
    let note = fetched.cut.then(|| {
        format!(
            "[the body was cut after {} (the limit, web.fetch.maxBytes); the rest was not read]",
            render::human_bytes(fetched.body.len() as u64)
        )
    });
    Rendered {
        header,
        content,
        note,
        exit_code,
    }
}

fn output(page: &Rendered, max_chars: usize, cached: Option<Duration>) -> CommandOutput {
    let mut text = page.header.clone();
    if let Some(age) = cached {
        text.push_str(&format!(
            "(from this session's cache, fetched {} ago)\n",
            human_duration(age)
        ));
    }
    text.push('\n');
    let total = page.content.chars().count();
    if total > max_chars {
        let cut: String = page.content.chars().take(max_chars).collect();
        text.push_str(cut.trim_end());
        text.push_str(&format!(
            "\n\n[showing {max_chars} of {total} characters; pass --max-chars {} to see more]\n",
            total.min(MAX_CHARS_LIMIT)
        ));
    } else {
        text.push_str(page.content.trim_end());
        text.push('\n');
    }
    if let Some(note) = &page.note {
        text.push_str(note);
        text.push('\n');
    }
    CommandOutput {
        text,
        exit_code: page.exit_code,
        restarted: false,
        timed_out: false,
        changes: Vec::new(),
    }
}

fn human_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
