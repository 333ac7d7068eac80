//! MCP failures in words a user can act on. rmcp's errors print Rust type paths
//! (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: Client error: …`); this walks
//! the error's source chain, drops the type names, and names the common causes plainly
//! ("connection refused: is the server running at …?").

use std::error::Error;

/// Why the `"type": "sse"` entry `server` (at `url`) is refused, and the two ways out: its
/// Streamable HTTP URL (often the same origin's `/mcp`), or a stdio bridge.
pub fn legacy_sse(server: &str, url: Option<&str>) -> String {
    let url = url.unwrap_or("<its /sse URL>");
    let guess = streamable_guess(url);
    format!(
        "{server}: unsupported transport \"sse\" (the legacy HTTP+SSE transport): rmcp, the MCP \
         library Synapse uses, has no client for it. Use the server's Streamable HTTP URL \
         instead, often at /mcp: set \"type\": \"http\", \"url\": \"{guess}\" (or `synapse mcp \
         add --transport http {server} {guess}`); a server without one can be bridged over \
         stdio: \"command\": \"npx\", \"args\": [\"-y\", \"mcp-remote\", \"{url}\", \
         \"--transport\", \"sse-only\"]"
    )
}

/// `https://h/x/sse` → `https://h/x/mcp`; any other URL → its origin's `/mcp`.
fn streamable_guess(url: &str) -> String {
    if let Some(base) = url.strip_suffix("/sse") {
        return format!("{base}/mcp");
    }
    match url::Url::parse(url) {
        Ok(u) => format!("{}/mcp", u.origin().ascii_serialization()),
        Err(_) => "<its /mcp URL>".to_string(),
    }
}

/// `e` and its sources as one line without Rust type names, with a hint for common causes.
pub fn in_words(e: &(dyn Error + 'static), url: Option<&str>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut io_kind = None;
    let mut cur: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        let text = scrub(&err.to_string());
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = err.source();
    }
    let target = url.map(|u| format!(" at {u}")).unwrap_or_default();
    let cause = match io_kind {
        Some(std::io::ErrorKind::ConnectionRefused) => Some(format!(
            "connection refused: is the server running{target}?"
        )),
        Some(std::io::ErrorKind::TimedOut) => Some(format!("no answer{target} (timed out)")),
        Some(std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe) => {
            Some("the server closed the connection".to_string())
        }
        _ => None,
    };
    let detail = parts.last().cloned().unwrap_or_default();
    let any = |needle: &str| parts.iter().any(|p| p.contains(needle));
    match cause {
        Some(c) => c,
        None if any("dns error") || any("lookup address") => {
            format!("cannot resolve the server's host{target}")
        }
        None if any("timed out") => format!("no answer{target} (timed out)"),
        // reqwest hides the reason behind rmcp's error: no HTTP answer came back at all.
        None if any("error sending request") => {
            format!("cannot reach the server{target}: is it running, and is the URL right?")
        }
        None => detail,
    }
}

/// `text` without Rust type paths: `[a::b<c::d>]` groups and words holding `::` go.
pub fn scrub(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut group = String::new();
    for c in text.chars() {
        match c {
            '[' => {
                depth += 1;
                group.push(c);
            }
            ']' if depth > 0 => {
                depth -= 1;
                group.push(c);
                if depth == 0 {
                    if !group.contains("::") {
                        out.push_str(&group);
                    }
                    group.clear();
                }
            }
            _ if depth > 0 => group.push(c),
            _ => out.push(c),
        }
    }
    out.push_str(&group);
    let words: Vec<&str> = out
        .split_whitespace()
        .filter(|w| !w.contains("::"))
        .collect();
    words
        .join(" ")
        .replace("Send message error Transport error: ", "")
        .replace("Client error: ", "")
        .replace(", when send initialize request", "")
        .trim_end_matches(',')
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legacy_sse_refusal_names_the_server_and_its_streamable_url() {
        let said = legacy_sse("old", Some("https://h.test/v1/sse"));
        assert!(
            said.starts_with("old: unsupported transport \"sse\""),
            "{said}"
        );
        assert!(
            said.contains("\"url\": \"https://h.test/v1/mcp\""),
            "{said}"
        );
        assert!(
            said.contains("mcp-remote\", \"https://h.test/v1/sse\""),
            "{said}"
        );
        assert!(legacy_sse("x", Some("https://h.test/events")).contains("https://h.test/mcp"));
    }

    #[test]
    fn type_paths_are_dropped() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>] error: Client error: error sending request for url (http://127.0.0.1:9/mcp), when send initialize request";
        let got = scrub(raw);
        assert!(!got.contains("::"), "{got}");
        assert!(
            got.contains("error sending request for url (http://127.0.0.1:9/mcp)"),
            "{got}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_server_says_so_and_where() {
        use rmcp::ServiceExt;
        use rmcp::transport::StreamableHttpClientTransport;
        // A port nothing listens on: bind one, then free it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let transport = StreamableHttpClientTransport::from_uri(url.as_str());
        let err = ().serve(transport).await.expect_err("nothing listens there");
        let words = in_words(&err, Some(&url));
        assert_eq!(
            words,
            format!("cannot reach the server at {url}: is it running, and is the URL right?")
        );
    }
}
