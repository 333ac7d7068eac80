//! The fixture's pages and fake search APIs: one function that records the request and answers
//! it by path.

use std::io;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{StreamExt, stream};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::json;

use super::Hit;

type Body = UnsyncBoxBody<Bytes, io::Error>;

/// Chunk and count of `/huge`: 64 MiB in all.
const HUGE_CHUNK: usize = 64 * 1024;
const HUGE_CHUNKS: usize = 1024;

pub const PAGE_HTML: &str = r#"<!doctype html>
<html><head><title>Fixture Page</title>
<style>body { color: red }</style>
<script>document.write("tracking")</script></head>
<body>
<nav><a href="/">Home</a> <a href="/menu">Menu entry</a></nav>
<h1>Welcome</h1>
<p>This page has <strong>bold</strong> words and a <a href="https://example.com/doc">link</a>.</p>
<ul><li>first</li><li>second</li></ul>
<script>var hidden = "script text";</script>
</body></html>"#;

pub async fn handle(req: Request<Incoming>, hits: &Arc<Mutex<Vec<Hit>>>) -> Response<Body> {
    let method = req.method().to_string();
    let target = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match req.into_body().collect().await {
        Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    let hit = Hit {
        method,
        target,
        headers,
        body,
    };
    if let Ok(mut h) = hits.lock() {
        h.push(hit.clone());
    }
    route(&hit)
}

fn route(hit: &Hit) -> Response<Body> {
    let path = hit.path();
    if let Some(n) = path.strip_prefix("/redirect/") {
        let n: u32 = n.parse().unwrap_or(0);
        let (status, next) = match n {
            0 | 1 => (StatusCode::TEMPORARY_REDIRECT, "/page.html".to_string()),
            2 => (StatusCode::MOVED_PERMANENTLY, "/redirect/1".to_string()),
            _ => (StatusCode::FOUND, format!("/redirect/{}", n - 1)),
        };
        return redirect(status, &next);
    }
    match path {
        "/page.html" => full(StatusCode::OK, "text/html; charset=utf-8", PAGE_HTML),
        "/data.json" => full(
            StatusCode::OK,
            "application/json",
            r#"{"name":"synapse","tags":["agent","rust"],"nested":{"ok":true}}"#,
        ),
        "/notes.txt" => full(
            StatusCode::OK,
            "text/plain",
            "line one\n  indented <b>not html</b>\n",
        ),
        "/missing" => full(StatusCode::NOT_FOUND, "text/plain", "no such page here\n"),
        "/loop" => redirect(StatusCode::FOUND, "/loop"),
        "/to-file" => redirect(StatusCode::FOUND, "file:///etc/passwd"),
        "/image.png" => {
            let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
            png.resize(2048, 0);
            let mut r = full(StatusCode::OK, "image/png", png);
            set(&mut r, "content-length", "2048");
            r
        }
        "/slow" => {
            let first = stream::once(async { Ok(Frame::data(Bytes::from_static(b"<html><p>"))) });
            let body = first.chain(stream::pending());
            with_type(streamed(body), "text/html")
        }
        "/huge" => {
            let chunk = Bytes::from(vec![b'a'; HUGE_CHUNK]);
            let body = stream::iter((0..HUGE_CHUNKS).map(move |_| Ok(Frame::data(chunk.clone()))));
            with_type(streamed(body), "text/plain")
        }
        "/searxng/search" => searxng(hit),
        "/brave/search" => brave(hit),
        "/tavily/search" => tavily(hit),
        _ => full(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

fn query_param(hit: &Hit, name: &str) -> String {
    let query = hit.target.split_once('?').map(|(_, q)| q).unwrap_or("");
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| decode_query(v))
        .unwrap_or_default()
}

fn decode_query(v: &str) -> String {
    let bytes = v.replace('+', " ").into_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&String::from_utf8_lossy(&bytes[i + 1..i + 3]), 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn searxng(hit: &Hit) -> Response<Body> {
    if query_param(hit, "format") != "json" {
        return full(
            StatusCode::FORBIDDEN,
            "text/html",
            "<p>format not allowed</p>",
        );
    }
    let q = query_param(hit, "q");
    let body = json!({
        "query": q,
        "results": [
            {"title": format!("SearXNG result for {q}"), "url": "https://docs.example/one",
             "content": "The <b>first</b> snippet &amp; more", "engine": "fake"},
            {"title": "Second", "url": "https://docs.example/two", "content": ""},
            {"title": "Third", "url": "https://docs.example/three", "content": "third snippet"}
        ]
    });
    full(StatusCode::OK, "application/json", body.to_string())
}

fn brave(hit: &Hit) -> Response<Body> {
    if hit.header("x-subscription-token") != Some("brave-key") {
        return full(
            StatusCode::UNAUTHORIZED,
            "application/json",
            r#"{"error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}"#,
        );
    }
    let q = query_param(hit, "q");
    let count: usize = query_param(hit, "count").parse().unwrap_or(20);
    let results: Vec<serde_json::Value> = (1..=count.min(5))
        .map(|i| {
            json!({"title": format!("Brave {i}: {q}"), "url": format!("https://brave.example/{i}"),
                   "description": format!("About <strong>{q}</strong>, part {i}")})
        })
        .collect();
    let body = json!({"type": "search", "web": {"results": results}});
    full(StatusCode::OK, "application/json", body.to_string())
}

fn tavily(hit: &Hit) -> Response<Body> {
    let auth = hit.header("authorization").unwrap_or("");
    if hit.method != "POST" || auth != "Bearer tvly-key" {
        // Careless APIs echo what they got; the client must not pass it on.
        let body = json!({"detail": {"error": format!("Unauthorized: invalid key in {auth:?}")}});
        return full(
            StatusCode::UNAUTHORIZED,
            "application/json",
            body.to_string(),
        );
    }
    let request: serde_json::Value = serde_json::from_str(&hit.body).unwrap_or_default();
    let q = request["query"].as_str().unwrap_or("").to_string();
    let max = request["max_results"].as_u64().unwrap_or(5) as usize;
    let results: Vec<serde_json::Value> = (1..=max.min(4))
        .map(|i| {
            json!({"title": format!("Tavily {i}"), "url": format!("https://tavily.example/{i}"),
                   "content": format!("{q} explained, {i}"), "score": 0.9})
        })
        .collect();
    full(
        StatusCode::OK,
        "application/json",
        json!({"query": q, "results": results}).to_string(),
    )
}

fn full(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let body = Full::new(body.into())
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut r = Response::new(body);
    *r.status_mut() = status;
    set(&mut r, "content-type", content_type);
    r
}

fn redirect(status: StatusCode, location: &str) -> Response<Body> {
    let mut r = full(status, "text/plain", "moved\n");
    set(&mut r, "location", location);
    r
}

fn streamed<S>(body: S) -> Response<Body>
where
    S: futures::Stream<Item = Result<Frame<Bytes>, io::Error>> + Send + 'static,
{
    Response::new(StreamBody::new(body).boxed_unsync())
}

fn with_type(mut r: Response<Body>, content_type: &str) -> Response<Body> {
    set(&mut r, "content-type", content_type);
    r
}

fn set(r: &mut Response<Body>, name: &'static str, value: &str) {
    if let Ok(v) = hyper::header::HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
}
