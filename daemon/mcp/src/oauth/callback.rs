//! The loopback redirect listener of one login: bound on `127.0.0.1` (a fixed port when the
//! server's entry registers one, else any free port) for as long as the login waits. Each
//! connection is read concurrently (browsers open idle speculative connections); requests for
//! other paths get a 404. The first request to `/callback` decides: its `state` must match this
//! login's, and then its `code` (or the server's `error`) ends the wait. The browser gets a short
//! page saying what happened; no code, state or token is logged.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use url::Url;

use super::OAuthError;
use super::pkce::same_secret;
use super::urls::{CALLBACK_PATH, redirect_uri};

/// How long one connection may take to send its request head.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request head read.
const REQUEST_HEAD_MAX_BYTES: usize = 16 * 1024;

/// A bound redirect listener.
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    /// Binds `127.0.0.1:<port>` (0: any free port).
    pub async fn bind(port: Option<u16>) -> Result<CallbackListener, OAuthError> {
        let wanted = port.unwrap_or(0);
        let fail = |e: std::io::Error| OAuthError::Listen {
            port: wanted,
            reason: e.to_string(),
        };
        let listener = TcpListener::bind(("127.0.0.1", wanted))
            .await
            .map_err(fail)?;
        let port = listener.local_addr().map_err(fail)?.port();
        Ok(CallbackListener { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        redirect_uri(self.port)
    }

    /// Waits for the redirect of `server`'s login and returns its code when `state` matches.
    pub async fn wait(&self, server: &str, state: &str) -> Result<String, OAuthError> {
        let mut reading = FuturesUnordered::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    if let Ok((stream, _)) = accepted {
                        reading.push(read_target(stream));
                    }
                }
                Some(read) = reading.next(), if !reading.is_empty() => {
                    let Some((mut stream, target)) = read else { continue };
                    match judge(&target, server, state) {
                        Verdict::NotHere => {
                            respond(&mut stream, "404 Not Found", "Not found", "").await;
                        }
                        Verdict::Code(code) => {
                            let body = format!(
                                "Synapse received the authorization for the MCP server {}. \
                                 You can close this tab and go back to the terminal.",
                                html(server)
                            );
                            respond(&mut stream, "200 OK", "Authorized", &body).await;
                            return Ok(code);
                        }
                        Verdict::Refused(e) => {
                            let body = format!("Synapse did not log in: {}", html(&e.to_string()));
                            respond(&mut stream, "400 Bad Request", "Not authorized", &body).await;
                            return Err(e);
                        }
                    }
                }
            }
        }
    }
}

/// What one request to the listener means.
#[derive(Debug)]
pub enum Verdict {
    /// Not the redirect (another path): answered 404, the wait goes on.
    NotHere,
    Code(String),
    Refused(OAuthError),
}

/// Judges a request target (`/callback?code=…&state=…`) against this login's `state`.
pub fn judge(target: &str, server: &str, state: &str) -> Verdict {
    let Ok(url) = Url::parse(&format!("http://127.0.0.1{target}")) else {
        return Verdict::NotHere;
    };
    if url.path() != CALLBACK_PATH {
        return Verdict::NotHere;
    }
    let get = |key: &str| {
        url.query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    // The state first: an answer to some other login, or a forged one, decides nothing else.
    if !get("state").is_some_and(|s| same_secret(&s, state)) {
        return Verdict::Refused(OAuthError::StateMismatch {
            server: server.to_string(),
        });
    }
    if let Some(error) = get("error") {
        let description = get("error_description")
            .map(|d| format!(" ({})", d.chars().take(300).collect::<String>()))
            .unwrap_or_default();
        return Verdict::Refused(OAuthError::Denied {
            error: error.chars().take(80).collect(),
            description,
        });
    }
    match get("code").filter(|c| !c.is_empty()) {
        Some(code) => Verdict::Code(code),
        None => Verdict::Refused(OAuthError::Denied {
            error: "the redirect carried no code".into(),
            description: String::new(),
        }),
    }
}

/// Reads one request head and returns the stream with the request target; `None` for anything
/// that is not a readable GET in time.
async fn read_target(mut stream: TcpStream) -> Option<(TcpStream, String)> {
    let mut head = Vec::new();
    let read = async {
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 || head.len() + n > REQUEST_HEAD_MAX_BYTES {
                return None;
            }
            head.extend_from_slice(&buf[..n]);
        }
        Some(())
    };
    tokio::time::timeout(REQUEST_READ_TIMEOUT, read)
        .await
        .ok()??;
    let line = String::from_utf8_lossy(&head);
    let mut words = line.lines().next()?.split(' ');
    let (method, target) = (words.next()?, words.next()?);
    (method == "GET").then(|| (stream, target.to_string()))
}

async fn respond(stream: &mut TcpStream, status: &str, title: &str, body: &str) {
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><h1>{title}</h1><p>{body}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// `text` safe inside HTML.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_matching_state_yields_the_code() {
        match judge("/callback?code=abc&state=S1", "srv", "S1") {
            Verdict::Code(c) => assert_eq!(c, "abc"),
            other => panic!("{other:?}"),
        }
        for target in [
            "/callback?code=abc&state=S2",
            "/callback?code=abc",
            "/callback?state=&code=x",
        ] {
            match judge(target, "srv", "S1") {
                Verdict::Refused(OAuthError::StateMismatch { server }) => assert_eq!(server, "srv"),
                other => panic!("{target}: {other:?}"),
            }
        }
    }

    #[test]
    fn other_paths_are_not_the_redirect() {
        assert!(matches!(judge("/favicon.ico", "s", "S"), Verdict::NotHere));
        assert!(matches!(
            judge("/callback/x?state=S", "s", "S"),
            Verdict::NotHere
        ));
    }

    #[test]
    fn a_refusal_by_the_server_is_reported() {
        match judge(
            "/callback?error=access_denied&error_description=the+user+said+no&state=S",
            "s",
            "S",
        ) {
            Verdict::Refused(e) => {
                let text = e.to_string();
                assert!(text.contains("access_denied (the user said no)"), "{text}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn the_listener_answers_a_browser_and_returns_the_code() {
        let listener = CallbackListener::bind(None).await.unwrap();
        let uri = listener.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let port: u16 = uri["http://127.0.0.1:".len()..uri.len() - "/callback".len()]
            .parse()
            .unwrap();
        let browser = tokio::spawn(async move {
            // An idle speculative connection first: it must not hold up the real request.
            let _idle = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            s.write_all(b"GET /callback?code=C0DE&state=ST HTTP/1.1\r\nHost: x\r\n\r\n")
                .await
                .unwrap();
            let mut page = String::new();
            s.read_to_string(&mut page).await.unwrap();
            page
        });
        let code = listener.wait("srv", "ST").await.unwrap();
        assert_eq!(code, "C0DE");
        let page = browser.await.unwrap();
        assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
        assert!(page.contains("You can close this tab"), "{page}");
    }
}
