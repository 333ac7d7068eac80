//! Asking the model server how large its context window is, for servers that say:
//! llama.cpp's `GET /props` (`n_ctx` of the running server), an OpenAI-compatible
//! `GET /v1/models` entry (`max_model_len` from vLLM, `context_length` from OpenRouter and
//! LM Studio, `meta.n_ctx_train` from llama.cpp), and Ollama's `POST /api/show`
//! (`model_info.<arch>.context_length`, or `num_ctx` in its parameters). Each probe is short
//! and optional: a server that answers none of them leaves the decision to
//! [`crate::limits::ModelLimits::resolve`]. The official APIs are never probed. A server
//! configured as Anthropic is first asked the one route the Anthropic API has too
//! (`GET /v1/models`); only when that answer shows llama.cpp or Ollama behind the URL are their
//! own routes asked, so an Anthropic proxy or gateway never sees `/props` or `/api/show`.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::config::{
    DEFAULT_ANTHROPIC_BASE_URL, DEFAULT_OPENAI_BASE_URL, ProviderConfig, ProviderKind,
    secret_header,
};

/// Time allowed for each probe.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long an answer (or the lack of one) is reused for the same server and model: a new
/// session then starts its first request at once instead of probing again (a server restarted
/// with another window is picked up after this).
pub const CACHE_TTL: Duration = Duration::from_secs(600);

/// (base URL, model, OpenAI API?) → (when asked, the window or none).
type Cache = Mutex<HashMap<(String, String, bool), (Instant, Option<u64>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The context window the server reports for `config.model`, if it reports one; answers of the
/// last [`CACHE_TTL`] are reused.
pub async fn discover_context_window(config: &ProviderConfig) -> Option<u64> {
    if config.base_url == DEFAULT_ANTHROPIC_BASE_URL || config.base_url == DEFAULT_OPENAI_BASE_URL {
        return None;
    }
    let key = (
        config.base_url.clone(),
        config.model.clone(),
        config.kind == ProviderKind::OpenAi,
    );
    if let Some((at, window)) = cache().lock().get(&key)
        && at.elapsed() < CACHE_TTL
    {
        return *window;
    }
    let window = probe(config).await;
    {
        let mut c = cache().lock();
        c.insert(key, (Instant::now(), window));
    }
    window
}

async fn probe(config: &ProviderConfig) -> Option<u64> {
    let client = reqwest::Client::builder()
        .timeout(PROBE_TIMEOUT)
        .build()
        .ok()?;
    let root = server_root(&config.base_url);
    let auth = |request: reqwest::RequestBuilder| match &config.api_key {
        Some(key) => match secret_header(key, ProviderKind::OpenAi) {
            Ok(value) => request.header(reqwest::header::AUTHORIZATION, value),
            Err(_) => request,
        },
        None => request,
    };
    let props = || async {
        get_json(auth(client.get(format!("{root}/props"))))
            .await
            .and_then(|p| window_from_props(&p))
    };
    let show = || async {
        let show = client
            .post(format!("{root}/api/show"))
            .json(&serde_json::json!({ "model": config.model }));
        get_json(auth(show))
            .await
            .and_then(|v| window_from_ollama_show(&v))
    };
    let models = || async { get_json(auth(client.get(format!("{root}/v1/models")))).await };
    match config.kind {
        ProviderKind::OpenAi => {
            if let Some(n) = props().await {
                return Some(n);
            }
            let listed = get_json(auth(client.get(format!("{}/models", config.base_url)))).await;
            if let Some(n) = listed.and_then(|m| window_from_models(&m, &config.model)) {
                return Some(n);
            }
            show().await
        }
        // Only a server that says what it is gets its own routes asked.
        ProviderKind::Anthropic => {
            let listed = models().await?;
            match local_server(&listed) {
                Some(LocalServer::LlamaCpp) => match props().await {
                    Some(n) => Some(n),
                    None => window_from_models(&listed, &config.model),
                },
                Some(LocalServer::Ollama) => show().await,
                None => None,
            }
        }
    }
}

/// Local servers whose own routes report the running context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LocalServer {
    LlamaCpp,
    Ollama,
}

/// Which local server a `/v1/models` answer came from, by what each writes in it: llama.cpp's
/// entries are `owned_by: "llamacpp"` with a `meta` object, Ollama's `owned_by: "library"` (or
/// the model's namespace) and `"ollama"`.
fn local_server(models: &Value) -> Option<LocalServer> {
    let data = models["data"].as_array()?;
    let owners = || data.iter().filter_map(|m| m["owned_by"].as_str());
    if owners().any(|o| o == "llamacpp") || data.iter().any(|m| m["meta"].is_object()) {
        return Some(LocalServer::LlamaCpp);
    }
    owners()
        .any(|o| o == "library" || o == "ollama")
        .then_some(LocalServer::Ollama)
}

/// The base URL without a trailing `/v1`: where llama.cpp and Ollama serve their own routes.
fn server_root(base_url: &str) -> String {
    base_url
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string()
}

async fn get_json(request: reqwest::RequestBuilder) -> Option<Value> {
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    response.json::<Value>().await.ok()
}

/// llama.cpp `/props`: `default_generation_settings.n_ctx` (current) or a top-level `n_ctx`.
pub fn window_from_props(props: &Value) -> Option<u64> {
    props["default_generation_settings"]["n_ctx"]
        .as_u64()
        .or_else(|| props["n_ctx"].as_u64())
        .filter(|n| *n > 0)
}

/// `/v1/models`: the entry for `model` (or the only entry), in any of the known spellings.
pub fn window_from_models(models: &Value, model: &str) -> Option<u64> {
    let data = models["data"].as_array()?;
    let entry = data
        .iter()
        .find(|m| m["id"].as_str() == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    [
        &entry["max_model_len"],
        &entry["context_length"],
        &entry["context_window"],
        &entry["meta"]["n_ctx"],
        &entry["meta"]["n_ctx_train"],
    ]
    .into_iter()
    .find_map(Value::as_u64)
    .filter(|n| *n > 0)
}

/// Ollama `/api/show`: `num_ctx` in `parameters` (what the server runs with) wins over the
/// model's trained `*.context_length`.
pub fn window_from_ollama_show(show: &Value) -> Option<u64> {
    let from_parameters = show["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|line| {
            let mut words = line.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    from_parameters
        .or_else(|| {
            show["model_info"]
                .as_object()?
                .iter()
                .find_map(|(k, v)| k.ends_with(".context_length").then(|| v.as_u64()).flatten())
        })
        .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_servers_report_is_read() {
        let llama = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1});
        assert_eq!(window_from_props(&llama), Some(4096));
        let vllm = json!({"data": [{"id": "m", "max_model_len": 32768}]});
        assert_eq!(window_from_models(&vllm, "m"), Some(32768));
        let llama_models = json!({"data": [{"id": "x.gguf", "meta": {"n_ctx_train": 8192}}]});
        assert_eq!(window_from_models(&llama_models, "other"), Some(8192));
        let two = json!({"data": [{"id": "a", "context_length": 1}, {"id": "b"}]});
        assert_eq!(window_from_models(&two, "b"), None);
        let ollama = json!({"model_info": {"llama.context_length": 131072}, "parameters": "stop x\nnum_ctx 8192"});
        assert_eq!(window_from_ollama_show(&ollama), Some(8192));
        let ollama = json!({"model_info": {"qwen2.context_length": 32768}});
        assert_eq!(window_from_ollama_show(&ollama), Some(32768));
        assert_eq!(server_root("http://h:8080/v1"), "http://h:8080");
    }

    #[test]
    fn only_a_local_server_that_says_so_is_asked_its_own_routes() {
        let llama = json!({"data": [{"id": "m", "owned_by": "llamacpp", "meta": {}}]});
        assert_eq!(local_server(&llama), Some(LocalServer::LlamaCpp));
        let ollama = json!({"data": [{"id": "qwen3:8b", "owned_by": "library"}]});
        assert_eq!(local_server(&ollama), Some(LocalServer::Ollama));
        let anthropic = json!({"data": [{"id": "claude-x", "type": "model"}]});
        assert_eq!(local_server(&anthropic), None);
        assert_eq!(local_server(&json!({"error": "no"})), None);
    }
}
