//! A local web for the `web_fetch` / `web_search` tests: a hyper HTTP/1.1 server on 127.0.0.1,
//! on its own thread and runtime so plain `#[test]`s can use it, serving fixed pages and fake
//! search APIs. Every request is recorded (method, path and query, headers) for assertions; the
//! server stops when the [`WebFixture`] is dropped.
//!
//! Routes ([`routes`] has the bodies):
//! - `/page.html` (HTML with a script, a style, navigation), `/data.json`, `/notes.txt`
//! - `/redirect/N` → `/redirect/N-1` … → `/page.html` (302, 301, 307, …); `/loop` → itself;
//!   `/to-file` → `file:///etc/passwd`
//! - `/slow` (headers and a first chunk, then nothing), `/huge` (64 MiB of text, streamed),
//!   `/image.png` (binary, with its length)
//! - `/searxng/search`, `/brave/search` (needs `X-Subscription-Token: brave-key`),
//!   `/tavily/search` (POST, needs `Authorization: Bearer tvly-key`; a wrong key is echoed
//!   back in the error, as careless APIs do)

mod routes;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use hyper::Request;
use hyper::body::Incoming;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// One request the fixture received.
#[derive(Debug, Clone)]
pub struct Hit {
    pub method: String,
    /// Path and query, as requested.
    pub target: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Hit {
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct WebFixture {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WebFixture {
    /// Starts the server on a free port of 127.0.0.1.
    pub fn start() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = runtime.block_on(TcpListener::bind(("127.0.0.1", 0)))?;
        let addr = listener.local_addr()?;
        let hits = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = oneshot::channel();
        let shared = hits.clone();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                tokio::select! {
                    _ = serve(listener, shared) => {}
                    _ = stopped => {}
                }
            });
        });
        Ok(Self {
            addr,
            hits,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far, oldest first.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().map(|h| h.clone()).unwrap_or_default()
    }

    /// How many requests asked for `path` (query ignored).
    pub fn hits_for(&self, path: &str) -> usize {
        self.hits().iter().filter(|h| h.path() == path).count()
    }
}

impl Drop for WebFixture {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, hits: Arc<Mutex<Vec<Hit>>>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((tcp, _)) = accepted else { continue };
                let hits = hits.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let hits = hits.clone();
                        async move { Ok::<_, Infallible>(routes::handle(req, &hits).await) }
                    });
                    let io = hyper_util::rt::TokioIo::new(tcp);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
