//! What `web_fetch` shows for a body: HTML as readable Markdown (scripts, styles, navigation
//! and forms dropped, the `<title>` kept apart), JSON pretty-printed, other text as it came.
//! The kind comes from `Content-Type`, and from the bytes when the header is missing or says
//! only `application/octet-stream`. Bytes are decoded in the declared charset (header, BOM, or
//! an HTML `<meta charset>`), UTF-8 otherwise.

use parking_lot::Mutex;
use std::sync::Arc;

use htmd::element_handler::Handlers;
use htmd::{Element, HtmlToMarkdown};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Html,
    Json,
    Text,
    Binary,
}

/// Elements whose content is never worth reading as text. (`<head>` then holds nothing but the
/// `<title>`, which is taken aside.)
const DROPPED_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "footer", "iframe", "svg", "canvas", "form",
    "button", "select", "input", "textarea", "object", "embed", "meta", "link", "base",
];

/// The kind a `Content-Type` header names; `None` when only the bytes can tell.
pub fn kind_from_header(content_type: Option<&str>) -> Option<Kind> {
    let mime = mime_of(content_type?);
    if mime.is_empty() || mime == "application/octet-stream" {
        return None;
    }
    Some(match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/json" => Kind::Json,
        m if m.ends_with("+json") => Kind::Json,
        m if m.starts_with("text/") || m.ends_with("+xml") => Kind::Text,
        "application/xml"
        | "application/javascript"
        | "application/x-javascript"
        | "application/ecmascript"
        | "application/x-ndjson"
        | "application/yaml"
        | "application/x-yaml"
        | "application/toml"
        | "application/x-sh"
        | "application/sql"
        | "application/graphql" => Kind::Text,
        _ => Kind::Binary,
    })
}

/// The kind of a body: the header's, else sniffed from its first bytes.
pub fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    if let Some(kind) = kind_from_header(content_type) {
        return kind;
    }
    let head = &body[..body.len().min(8192)];
    if head.contains(&0) {
        return Kind::Binary;
    }
    let text = String::from_utf8_lossy(head);
    let start = text.trim_start().to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Kind::Html
    } else if (start.starts_with('{') || start.starts_with('['))
        && serde_json::from_slice::<serde_json::Value>(body).is_ok()
    {
        Kind::Json
    } else if std::str::from_utf8(head).is_ok() || text.matches('\u{FFFD}').count() < 4 {
        Kind::Text
    } else {
        Kind::Binary
    }
}

/// `text/html; charset=utf-8` → `text/html`.
pub fn mime_of(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Decodes the body: BOM, then the header's charset, then (HTML) a `<meta charset>` near the
/// start, then UTF-8. Undecodable bytes become U+FFFD.
pub fn decode(content_type: Option<&str>, body: &[u8], kind: Kind) -> String {
    let label = content_type
        .and_then(charset_param)
        .or_else(|| (kind == Kind::Html).then(|| meta_charset(body)).flatten());
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(2048)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    (!value.is_empty()).then_some(value)
}

/// A page turned into Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub title: Option<String>,
    pub markdown: String,
}

/// HTML → Markdown. Runs the (synchronous, CPU-bound) converter on the calling thread: call it
/// from `spawn_blocking`.
pub fn html_to_markdown(html: &str) -> Page {
    let title: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let seen = title.clone();
    let converter = HtmlToMarkdown::builder()
        .skip_tags(DROPPED_TAGS.to_vec())
        .add_handler(vec!["title"], move |h: &dyn Handlers, el: Element| {
            let text = h.walk_children(el.node).content;
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let mut seen = seen.lock();
            if seen.is_none() && !text.is_empty() {
                *seen = Some(text);
            }
            None
        })
        .build();
    let markdown = match converter.convert(html) {
        Ok(md) => tidy(&md),
        Err(_) => String::new(),
    };
    let title = title.lock().clone();
    Page { title, markdown }
}

/// Trailing spaces off, runs of blank lines down to one.
fn tidy(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut blank = 0;
    for line in md.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

/// JSON pretty-printed; `None` when the text is not JSON.
pub fn pretty_json(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    serde_json::to_string_pretty(&value).ok()
}

/// `1234` → `1.2 KB`.
pub fn human_bytes(n: u64) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if f < KB {
        format!("{n} bytes")
    } else if f < KB * KB {
        format!("{:.1} KB", f / KB)
    } else {
        format!("{:.1} MB", f / (KB * KB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_scripts_styles_or_navigation() {
        let html = r#"<!doctype html><html><head><title>The  Page</title>
            <style>body{color:red}</style><script>alert(1)</script></head>
            <body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
            <h1>Heading</h1><p>Some <b>bold</b> text and a <a href="https://x.test/y">link</a>.</p>
            <script>var secret = 1;</script><ul><li>one</li><li>two</li></ul>
            <footer>© nobody</footer></body></html>"#;
        let page = html_to_markdown(html);
        assert_eq!(page.title.as_deref(), Some("The Page"));
        assert!(page.markdown.starts_with("# Heading"), "{}", page.markdown);
        assert!(
            page.markdown
                .contains("Some **bold** text and a [link](https://x.test/y).")
        );
        assert!(page.markdown.contains("*   one") || page.markdown.contains("- one"));
        for gone in [
            "alert",
            "secret",
            "color:red",
            "About",
            "nobody",
            "The  Page",
        ] {
            assert!(
                !page.markdown.contains(gone),
                "{gone} kept: {}",
                page.markdown
            );
        }
    }

    #[test]
    fn kinds_from_header_and_bytes() {
        assert_eq!(
            kind_from_header(Some("text/html; charset=utf-8")),
            Some(Kind::Html)
        );
        assert_eq!(
            kind_from_header(Some("application/vnd.api+json")),
            Some(Kind::Json)
        );
        assert_eq!(kind_from_header(Some("image/png")), Some(Kind::Binary));
        assert_eq!(kind_from_header(Some("application/octet-stream")), None);
        assert_eq!(kind_of(None, b"\x89PNG\r\n\x1a\n\0\0"), Kind::Binary);
        assert_eq!(kind_of(None, b"  <!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(kind_of(None, br#"{"a": 1}"#), Kind::Json);
        assert_eq!(
            kind_of(Some("application/octet-stream"), b"plain words"),
            Kind::Text
        );
    }

    #[test]
    fn charsets_are_honoured() {
        let latin1 = b"caf\xe9";
        assert_eq!(
            decode(Some("text/plain; charset=ISO-8859-1"), latin1, Kind::Text),
            "café"
        );
        let html = b"<html><head><meta charset=\"windows-1252\"></head><body>caf\xe9</body>";
        assert!(decode(Some("text/html"), html, Kind::Html).contains("café"));
        assert_eq!(decode(None, "naïve".as_bytes(), Kind::Text), "naïve");
    }

    #[test]
    fn json_is_pretty_printed() {
        assert_eq!(
            pretty_json(r#"{"a":[1,2]}"#).unwrap(),
            "{\n  \"a\": [\n    1,\n    2\n  ]\n}"
        );
        assert_eq!(pretty_json("not json"), None);
    }
}
