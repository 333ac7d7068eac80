//! The HTTP side of the fake model: a hyper HTTP/1.1 server on 127.0.0.1 whose handler records
//! each request, asks the [`Source`] for the next step, and streams that step's events through a
//! body that can wait between events, stop at a hold until released, hang, or break the
//! connection mid-body. It notes when each answer's first text chunk went out.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{Stream, StreamExt, stream};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::request::{Api, RecordedRequest};
use super::script::{Ending, ErrorReply, Reply, Step};
use super::wire::{self, RenderContext};

type Body = UnsyncBoxBody<Bytes, io::Error>;
/// How long a cut stream waits, with everything before the cut written, before breaking.
const FLUSH_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);
type FrameStream = Pin<Box<dyn Stream<Item = Result<Frame<Bytes>, io::Error>> + Send>>;
/// Decides the answer from the request (callback mode).
pub(crate) type Responder = dyn Fn(&RecordedRequest) -> Step + Send + Sync;

/// Where the steps come from.
pub(crate) enum Source {
    Script(Mutex<std::collections::VecDeque<Step>>),
    Callback(Box<Responder>),
}

/// State shared by the handle and every connection.
pub(crate) struct Shared {
    pub source: Source,
    pub requests: Mutex<Vec<RecordedRequest>>,
    /// Requests that are not model calls, as "METHOD /path" (not counted in `requests`).
    pub side_requests: Mutex<Vec<String>>,
    /// How many requests have arrived; watched by `wait_for_requests`.
    pub received: watch::Sender<usize>,
    pub scripted: usize,
    /// Connections open right now: a client that goes away shows as this dropping.
    pub open_connections: std::sync::atomic::AtomicUsize,
    /// (request index, when its answer's first text chunk was handed to the connection).
    pub first_text: Mutex<Vec<(usize, std::time::Instant)>>,
}

/// Counts a connection as open for as long as it lives.
struct OpenConnection(Arc<Shared>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0
            .open_connections
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Accepts connections until the task is aborted; aborting drops the `JoinSet`, which ends every
/// connection, hung ones included.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((tcp, _)) = accepted else { continue };
                let shared = shared.clone();
                shared.open_connections.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let open = OpenConnection(shared.clone());
                connections.spawn(async move {
                    let _open = open;
                    let service = hyper::service::service_fn(move |req| {
                        let shared = shared.clone();
                        async move { Ok::<_, Infallible>(handle(shared, req).await) }
                    });
                    let io = hyper_util::rt::TokioIo::new(tcp);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let api = Api::from_path(&path);
    if api == Api::Unknown
        && let Ok(mut side) = shared.side_requests.lock()
    {
        side.push(format!("{method} {path}"));
    }
    if method == "GET" && path.ends_with("/models") {
        return models_response();
    }
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let bytes = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("fake LLM could not read the body: {e}"),
            );
        }
    };
    if api == Api::Unknown {
        // Not a model call (the daemon's context-window probes: /props, /v1/models,
        // /api/show): answered 404 and not recorded, so tests count model calls only.
        let message =
            format!("fake LLM serves POST /v1/messages and POST /v1/chat/completions, not {path}");
        return error_response(
            Api::Anthropic,
            &ErrorReply::new(404, "not_found_error", message),
            0,
        );
    }
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let recorded = {
        let Ok(mut requests) = shared.requests.lock() else {
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "fake LLM state poisoned".into(),
            );
        };
        let recorded = RecordedRequest {
            index: requests.len(),
            method,
            path,
            api,
            headers,
            body,
            body_len: bytes.len(),
        };
        requests.push(recorded.clone());
        recorded
    };
    shared.received.send_modify(|n| *n += 1);

    if recorded.body["stream"] != Value::Bool(true) {
        let e = ErrorReply::new(
            400,
            "invalid_request_error",
            "fake LLM only answers streaming requests (stream: true)",
        );
        return error_response(api, &e, recorded.index);
    }

    let step = match &shared.source {
        Source::Callback(respond) => respond(&recorded),
        Source::Script(steps) => match steps.lock().ok().and_then(|mut s| s.pop_front()) {
            Some(step) => step,
            None => {
                let message = format!(
                    "fake LLM script exhausted: request #{} arrived but the script had only {} step(s)",
                    recorded.index + 1,
                    shared.scripted
                );
                return error_response(
                    api,
                    &ErrorReply::new(400, "invalid_request_error", message),
                    recorded.index,
                );
            }
        },
    };
    match step {
        Step::Error(e) => error_response(api, &e, recorded.index),
        Step::Hang => {
            // Never answer; the connection task is aborted when the server is dropped.
            std::future::pending::<()>().await;
            plain(StatusCode::INTERNAL_SERVER_ERROR, String::new())
        }
        Step::Reply(reply) => stream_response(api, &reply, &recorded, shared.clone()),
    }
}

fn stream_response(
    api: Api,
    reply: &Reply,
    request: &RecordedRequest,
    shared: Arc<Shared>,
) -> Response<Body> {
    let ctx = RenderContext {
        request_index: request.index,
        model: request.body["model"]
            .as_str()
            .unwrap_or("fake-model")
            .to_string(),
        body_len: request.body_len,
        include_usage: request.body["stream_options"]["include_usage"] == Value::Bool(true),
    };
    let mut events = wire::reply_events(api, reply, &ctx);
    let tail: FrameStream = match &reply.ending {
        Ending::Complete => Box::pin(stream::empty()),
        Ending::CutAfter(n) => {
            events.truncate(*n);
            Box::pin(stream::once(async {
                // hyper writes buffered frames out when the body is pending; without this pause
                // the error would abort the connection before the events reached the client.
                tokio::time::sleep(FLUSH_PAUSE).await;
                Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "fake LLM cut the stream",
                ))
            }))
        }
        Ending::HangAfter(n) => {
            events.truncate(*n);
            Box::pin(stream::pending())
        }
        Ending::ErrorAfter {
            events: n,
            error_type,
            message,
        } => {
            events.truncate(*n);
            events.push(wire::error_event(api, error_type, message));
            Box::pin(stream::empty())
        }
    };
    let delay = reply.delay;
    let hold = reply.hold.clone();
    let first_text = events.iter().position(|e| wire::is_text_delta(api, e));
    let index = request.index;
    let head: FrameStream = Box::pin(stream::iter(events.into_iter().enumerate()).then(
        move |(n, event)| {
            let hold = hold.clone();
            let shared = shared.clone();
            async move {
                if let Some((at, hold)) = &hold
                    && *at == n
                {
                    hold.wait().await;
                }
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                if first_text == Some(n)
                    && let Ok(mut sent) = shared.first_text.lock()
                {
                    sent.push((index, std::time::Instant::now()));
                }
                Ok(Frame::data(Bytes::from(event)))
            }
        },
    ));
    let body = StreamBody::new(head.chain(tail)).boxed_unsync();
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(
        "cache-control",
        hyper::header::HeaderValue::from_static("no-cache"),
    );
    if let Ok(id) = hyper::header::HeaderValue::from_str(&format!("req_fake_{}", request.index)) {
        h.insert("request-id", id);
    }
    response
}

fn error_response(api: Api, error: &ErrorReply, request_index: usize) -> Response<Body> {
    let body = error
        .raw_body
        .clone()
        .unwrap_or_else(|| wire::error_body(api, &error.error_type, &error.message, request_index));
    let status = StatusCode::from_u16(error.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = plain(status, body);
    let content_type = if error.raw_body.is_some() {
        "text/plain"
    } else {
        "application/json"
    };
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static(content_type),
    );
    for (name, value) in &error.headers {
        if let (Ok(n), Ok(v)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            hyper::header::HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(n, v);
        }
    }
    response
}

/// `GET …/v1/models` as an OpenAI-compatible server answers it (for first-run setup).
fn models_response() -> Response<Body> {
    let data: Vec<Value> = super::FAKE_MODELS
        .iter()
        .map(|id| serde_json::json!({"id": id, "object": "model", "owned_by": "fake"}))
        .collect();
    let mut response = plain(
        StatusCode::OK,
        serde_json::json!({"object": "list", "data": data}).to_string(),
    );
    if let Ok(v) = "application/json".parse() {
        response.headers_mut().insert("content-type", v);
    }
    response
}

fn plain(status: StatusCode, body: String) -> Response<Body> {
    let body = Full::new(Bytes::from(body))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
}
