//! Asking the model server how large its context window is, for servers that say:
//! llama.cpp's `GET /props` (`n_ctx` of the running server), an OpenAI-compatible
//! `GET /v1/models` entry (`max_model_len` from vLLM, `context_length` from OpenRouter and
//! LM Studio, `meta.n_ctx_train` from llama.cpp), and Ollama's `POST /api/show`
//! (`model_info.<arch>.context_length`, or `num_ctx` in its parameters). Each probe is short
//! and optional: a server that answers none of them leaves the decision to
//! [`crate::limits::ModelLimits::resolve`]. The official APIs are never probed.

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
    let api = match config.kind {
        ProviderKind::OpenAi => config.base_url.clone(),
        ProviderKind::Anthropic => format!("{}/v1", config.base_url),
    };
    let auth = |request: reqwest::RequestBuilder| match &config.api_key {
        Some(key) => match secret_header(key, ProviderKind::OpenAi) {
            Ok(value) => request.header(reqwest::header::AUTHORIZATION, value),
            Err(_) => request,
        },
        None => request,
    };
    if let Some(props) = get_json(auth(client.get(format!("{root}/props")))).await
        && let Some(n) = window_from_props(&props)
    {
        return Some(n);
    }
    if let Some(models) = get_json(auth(client.get(format!("{api}/models")))).await
        && let Some(n) = window_from_models(&models, &config.model)
    {
        return Some(n);
    }
    let show = client
        .post(format!("{root}/api/show"))
        .json(&serde_json::json!({ "model": config.model }));
    get_json(auth(show))
        .await
        .and_then(|v| window_from_ollama_show(&v))
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
}
