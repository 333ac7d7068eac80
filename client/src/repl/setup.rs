//! First start without a usable model: a short guided setup — provider, API key or a local
//! server's base URL, model (a local server's models are listed from its `/v1/models`) — saved
//! to settings.json by the daemon (`Daemon.SetModelSettings`; the client never writes the
//! daemon's files). An empty answer to the first question skips it.

use std::time::Duration;

use synapse_shared::proto::SetModelSettingsRequest;
use synapse_shared::proto::daemon_client::DaemonClient;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Repl;
use super::input::Reply;

const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
const DEFAULT_LOCAL_URL: &str = "http://127.0.0.1:8080/v1";
/// How long listing a local server's models may take.
const MODELS_TIMEOUT: Duration = Duration::from_secs(5);

impl Repl {
    /// Runs the setup; on success the session's model is the one chosen.
    pub(super) async fn first_run_setup(&mut self) -> anyhow::Result<()> {
        let settings = self.paths.settings_file().display().to_string();
        let t = self.theme;
        self.say(&format!(
            "{}\n  1. Anthropic (API key)\n  2. OpenAI (API key)\n  3. A local server with an OpenAI-compatible API (llama.cpp, Ollama, vLLM, LM Studio…)\n",
            t.bold("No model is configured yet. A short setup (Enter skips it):")
        ));
        let choice = loop {
            match self.ask("Provider [1-3]: ").await {
                None => {
                    self.say(&t.dim(&format!(
                        "Skipped. Set \"provider\", \"model\" and the key in {settings}, or run synapse again.\n"
                    )));
                    return Ok(());
                }
                Some(c) if matches!(c.as_str(), "1" | "2" | "3") => break c,
                Some(_) => self.say("Please answer 1, 2 or 3.\n"),
            }
        };
        let request = match choice.as_str() {
            "1" => {
                self.keyed("anthropic", "Anthropic", DEFAULT_ANTHROPIC_MODEL)
                    .await
            }
            "2" => self.keyed("openai", "OpenAI", DEFAULT_OPENAI_MODEL).await,
            _ => self.local().await,
        };
        let Some(request) = request else {
            self.say(&t.dim("Setup cancelled; nothing was saved.\n"));
            return Ok(());
        };
        let model = request.model.clone();
        let saved = DaemonClient::new(self.link.channel().clone())
            .set_model_settings(request)
            .await
            .map_err(|s| {
                anyhow::anyhow!("the daemon could not save the settings: {}", s.message())
            })?
            .into_inner();
        self.model = model.clone();
        self.say(&format!(
            "{} Saved to {}: model {model}.\n\n",
            t.green("✓"),
            saved.settings_path
        ));
        Ok(())
    }

    async fn keyed(
        &mut self,
        provider: &str,
        name: &str,
        default_model: &str,
    ) -> Option<SetModelSettingsRequest> {
        // Shown as `*` while typed: a key must not sit on the screen (or in a screen recording).
        self.input.set_masked(true);
        let api_key = self.ask(&format!("{name} API key: ")).await;
        self.input.set_masked(false);
        let api_key = api_key?;
        let model = self
            .ask(&format!("Model [{default_model}]: "))
            .await
            .unwrap_or_else(|| default_model.to_string());
        Some(SetModelSettingsRequest {
            provider: provider.to_string(),
            model,
            api_key,
            base_url: String::new(),
        })
    }

    async fn local(&mut self) -> Option<SetModelSettingsRequest> {
        let url = self
            .ask(&format!("Base URL [{DEFAULT_LOCAL_URL}]: "))
            .await
            .unwrap_or_else(|| DEFAULT_LOCAL_URL.to_string());
        let base_url = with_v1(&url);
        let models = match list_models(&base_url).await {
            Ok(models) if !models.is_empty() => models,
            Ok(_) => {
                self.say(&format!("{base_url}/models lists no models.\n"));
                Vec::new()
            }
            Err(e) => {
                self.say(&self.theme.yellow(&format!(
                    "Could not list the models at {base_url}/models: {e}. Is the server running?\n"
                )));
                Vec::new()
            }
        };
        let model = if models.is_empty() {
            self.ask("Model name: ").await?
        } else {
            let mut list = format!("Models at {base_url}:\n");
            for (i, m) in models.iter().enumerate() {
                list.push_str(&format!("  {}. {m}\n", i + 1));
            }
            self.say(&list);
            let answer = self.ask("Model [1]: ").await.unwrap_or_else(|| "1".into());
            match answer.parse::<usize>() {
                Ok(n) if (1..=models.len()).contains(&n) => models[n - 1].clone(),
                _ => answer,
            }
        };
        Some(SetModelSettingsRequest {
            provider: "openai".to_string(),
            model,
            api_key: String::new(),
            base_url,
        })
    }

    /// One answer, trimmed; `None` when empty or cancelled.
    async fn ask(&mut self, question: &str) -> Option<String> {
        match self.read_line(question, false, String::new()).await {
            Reply::Line(line) if !line.trim().is_empty() => Some(line.trim().to_string()),
            _ => None,
        }
    }
}

/// `http://host:8080` → `http://host:8080/v1` (OpenAI-compatible servers serve under `/v1`).
fn with_v1(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    if url.ends_with("/v1") {
        url.to_string()
    } else {
        format!("{url}/v1")
    }
}

/// Why the models could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListModelsError {
    #[error("only http:// URLs can be listed here (got {0})")]
    NotHttp(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no answer within {} seconds", MODELS_TIMEOUT.as_secs())]
    Timeout,
    #[error("the server answered {0}")]
    Status(String),
    #[error("the answer is not the expected JSON ({0})")]
    Json(String),
}

/// The model ids a local OpenAI-compatible server lists at `<base_url>/models`.
async fn list_models(base_url: &str) -> Result<Vec<String>, ListModelsError> {
    let rest = base_url
        .strip_prefix("http://")
        .ok_or_else(|| ListModelsError::NotHttp(base_url.to_string()))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = format!("/{}/models", path.trim_matches('/')).replace("//", "/");
    let fetch = async {
        let mut stream = tokio::net::TcpStream::connect(host).await?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(answer)
    };
    let answer = tokio::time::timeout(MODELS_TIMEOUT, fetch)
        .await
        .map_err(|_| ListModelsError::Timeout)??;
    parse_models_response(&String::from_utf8_lossy(&answer))
}

fn parse_models_response(answer: &str) -> Result<Vec<String>, ListModelsError> {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    let status = head.lines().next().unwrap_or_default();
    if !status
        .split_whitespace()
        .nth(1)
        .is_some_and(|c| c.starts_with('2'))
    {
        return Err(ListModelsError::Status(status.to_string()));
    }
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    let json: serde_json::Value =
        serde_json::from_str(body.trim()).map_err(|e| ListModelsError::Json(e.to_string()))?;
    let data = json["data"]
        .as_array()
        .ok_or_else(|| ListModelsError::Json("no \"data\" list".into()))?;
    Ok(data
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect())
}

/// The body of a chunked HTTP/1.1 answer.
fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_v1_and_answers_are_read() {
        assert_eq!(with_v1("http://h:8080/"), "http://h:8080/v1");
        assert_eq!(with_v1("http://h:8080/v1"), "http://h:8080/v1");
        let plain = "HTTP/1.1 200 OK\r\ncontent-length: 40\r\n\r\n{\"data\":[{\"id\":\"a\"},{\"id\":\"b\"}]}";
        assert_eq!(parse_models_response(plain).unwrap(), ["a", "b"]);
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"dat\r\n12\r\na\":[{\"id\":\"x\"}]}\r\n0\r\n\r\n";
        assert_eq!(parse_models_response(chunked).unwrap(), ["x"]);
        assert!(matches!(
            parse_models_response("HTTP/1.1 404 Not Found\r\n\r\n"),
            Err(ListModelsError::Status(_))
        ));
    }
}
