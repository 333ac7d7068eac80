//! Tests of [`ProviderConfig::resolve`]: which provider, model, base URL and key come out of
//! settings.json and the environment, and the errors that name what to set.

use std::collections::HashMap;

use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

fn settings_with(env: &[(&str, &str)], model: Option<&str>, provider: Option<&str>) -> Settings {
    Settings {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        model: model.map(str::to_string),
        provider: provider.map(str::to_string),
        ..Settings::default()
    }
}

#[test]
fn defaults_to_anthropic_with_key_from_settings() {
    let s = settings_with(&[("ANTHROPIC_API_KEY", "sk-settings")], None, None);
    let c = ProviderConfig::resolve(&s, env_of(&[])).unwrap();
    assert_eq!(c.kind, ProviderKind::Anthropic);
    assert_eq!(c.model, DEFAULT_ANTHROPIC_MODEL);
    assert_eq!(c.base_url, DEFAULT_ANTHROPIC_BASE_URL);
    assert_eq!(c.api_key, Some(ApiKey::new("sk-settings")));
}

#[test]
fn process_environment_overrides_settings() {
    let s = settings_with(
        &[
            ("ANTHROPIC_API_KEY", "sk-settings"),
            ("ANTHROPIC_BASE_URL", "http://a.invalid"),
        ],
        Some("model-from-settings"),
        Some("anthropic"),
    );
    let env = env_of(&[
        ("ANTHROPIC_API_KEY", "sk-env"),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
        ("SYNAPSE_MODEL", "model-from-env"),
    ]);
    let c = ProviderConfig::resolve(&s, env).unwrap();
    assert_eq!(c.api_key, Some(ApiKey::new("sk-env")));
    assert_eq!(c.base_url, "http://127.0.0.1:9");
    assert_eq!(c.model, "model-from-env");
}

#[test]
fn missing_anthropic_key_explains_both_ways_out() {
    let err = ProviderConfig::resolve(&Settings::default(), env_of(&[]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(err.contains("settings.json"), "{err}");
    assert!(
        err.contains("SYNAPSE_PROVIDER=openai OPENAI_BASE_URL=http://localhost:11434/v1"),
        "{err}"
    );
}

#[test]
fn local_openai_server_needs_no_key_but_a_model() {
    let env = env_of(&[
        ("SYNAPSE_PROVIDER", "openai"),
        ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
    ]);
    let err = ProviderConfig::resolve(&Settings::default(), env)
        .unwrap_err()
        .to_string();
    assert!(err.contains("SYNAPSE_MODEL"), "{err}");

    let env = env_of(&[
        ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
        ("SYNAPSE_MODEL", "qwen3:8b"),
    ]);
    let c = ProviderConfig::resolve(&Settings::default(), env).unwrap();
    assert_eq!(
        c.kind,
        ProviderKind::OpenAi,
        "inferred from OPENAI_BASE_URL"
    );
    assert_eq!(c.api_key, None);
    assert_eq!(c.model, "qwen3:8b");
}

#[test]
fn official_openai_needs_a_key() {
    let env = env_of(&[("SYNAPSE_PROVIDER", "openai")]);
    let err = ProviderConfig::resolve(&Settings::default(), env)
        .unwrap_err()
        .to_string();
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
}

#[test]
fn bad_provider_and_url_are_named() {
    let s = settings_with(&[("ANTHROPIC_API_KEY", "k")], None, Some("gemini"));
    let err = ProviderConfig::resolve(&s, env_of(&[]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"gemini\"") && err.contains("settings.json"),
        "{err}"
    );
    let env = env_of(&[
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", "localhost:8080"),
    ]);
    let err = ProviderConfig::resolve(&Settings::default(), env)
        .unwrap_err()
        .to_string();
    assert!(err.contains("ANTHROPIC_BASE_URL"), "{err}");
}

#[test]
fn debug_output_never_shows_the_key() {
    let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant-very-secret")]);
    let c = ProviderConfig::resolve(&Settings::default(), env).unwrap();
    let shown = format!("{c:?}");
    assert!(!shown.contains("very-secret"), "{shown}");
    assert!(shown.contains("redacted"), "{shown}");
}

#[test]
fn every_providers_key_is_a_secret_the_shells_never_see() {
    let secrets: Vec<&str> = secret_variables().collect();
    for kind in ProviderKind::ALL {
        assert!(secrets.contains(&kind.key_variable()), "{kind:?}");
    }
    assert!(secrets.contains(&"ANTHROPIC_AUTH_TOKEN"));
    // The base URLs are not secrets: a command may need to know where the model is.
    assert!(!secrets.iter().any(|s| s.ends_with("_BASE_URL")));
}
