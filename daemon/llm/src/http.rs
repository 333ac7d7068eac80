//! The HTTP client the providers share, and how long its idle connections live.
//!
//! A daemon that served 200 concurrent runs must not keep 200 sockets to the model server
//! afterwards: a connection idle for [`POOL_IDLE_TIMEOUT`] is closed, and at most
//! [`POOL_IDLE_PER_HOST_MAX`] idle connections are kept per host (enough for the next burst of
//! sessions to start warm). [`PoolLimits`] carries both, so a test injects short ones.

use std::time::Duration;

/// An idle connection to the model server is closed after this long.
pub const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Idle connections kept per host; more than this are closed as they go idle.
pub const POOL_IDLE_PER_HOST_MAX: usize = 16;

/// How the client's pool treats idle connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLimits {
    /// How long a connection may stay idle before it is closed.
    pub idle_timeout: Duration,
    /// How many idle connections are kept per host.
    pub idle_per_host_max: usize,
}

impl Default for PoolLimits {
    fn default() -> Self {
        Self {
            idle_timeout: POOL_IDLE_TIMEOUT,
            idle_per_host_max: POOL_IDLE_PER_HOST_MAX,
        }
    }
}

/// A client for model calls with `limits` on its idle connections.
pub fn model_client(limits: PoolLimits) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .connect_timeout(super::config::CONNECT_TIMEOUT)
        .pool_idle_timeout(limits.idle_timeout)
        .pool_max_idle_per_host(limits.idle_per_host_max)
        .user_agent(concat!("synapse/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Instant;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A keep-alive HTTP/1.1 server answering every request with "ok" once `hold` connections
    /// are open (so a burst really opens that many); `open` counts the connections the client
    /// still holds (one ends when the client closes it).
    async fn counting_server(hold: usize) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let open = Arc::new(AtomicUsize::new(0));
        let counter = open.clone();
        // Set once `hold` connections were open at the same time.
        let released = Arc::new(AtomicBool::new(false));
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                if counter.fetch_add(1, Ordering::SeqCst) + 1 >= hold {
                    released.store(true, Ordering::SeqCst);
                }
                let (counter, released) = (counter.clone(), released.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let mut seen = Vec::new();
                    let mut held = false;
                    loop {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => seen.extend_from_slice(&buf[..n]),
                        }
                        while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                            seen.drain(..end + 4);
                            if !held {
                                wait_until("the burst's connections", LONG, || {
                                    released.load(Ordering::SeqCst)
                                })
                                .await;
                                held = true;
                            }
                            let reply = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            if socket.write_all(reply.as_bytes()).await.is_err() {
                                break;
                            }
                        }
                    }
                    counter.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        (url, open)
    }

    const LONG: Duration = Duration::from_secs(10);

    async fn wait_until(what: &str, deadline: Duration, ok: impl Fn() -> bool) {
        let start = Instant::now();
        while !ok() {
            assert!(start.elapsed() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Runs `n` requests at once.
    async fn burst(client: &reqwest::Client, url: &str, n: usize) {
        let calls = (0..n).map(|_| async {
            let reply = client.get(url).send().await.unwrap();
            reply.text().await.unwrap()
        });
        let replies = futures::future::join_all(calls).await;
        assert!(replies.iter().all(|r| r == "ok"), "{replies:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn beyond_the_cap_idle_connections_close_at_once() {
        let (url, open) = counting_server(8).await;
        let client = model_client(PoolLimits {
            idle_timeout: POOL_IDLE_TIMEOUT,
            idle_per_host_max: 2,
        })
        .unwrap();
        burst(&client, &url, 8).await;
        wait_until("the idle pool to shrink to its cap", LONG, || {
            open.load(Ordering::SeqCst) <= 2
        })
        .await;
        // The kept ones serve the next calls warm: no new connection.
        burst(&client, &url, 2).await;
        assert!(open.load(Ordering::SeqCst) <= 2);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idle_connections_close_after_the_timeout() {
        let (url, open) = counting_server(4).await;
        let client = model_client(PoolLimits {
            idle_timeout: Duration::from_millis(300),
            idle_per_host_max: POOL_IDLE_PER_HOST_MAX,
        })
        .unwrap();
        burst(&client, &url, 4).await;
        assert!(open.load(Ordering::SeqCst) >= 1);
        wait_until("idle connections to close", LONG, || {
            open.load(Ordering::SeqCst) == 0
        })
        .await;
    }

    #[test]
    fn the_defaults_are_a_minute_and_a_small_pool() {
        let limits = PoolLimits::default();
        assert_eq!(limits.idle_timeout, Duration::from_secs(60));
        assert_eq!(limits.idle_per_host_max, POOL_IDLE_PER_HOST_MAX);
        assert!(model_client(limits).is_ok());
    }
}
