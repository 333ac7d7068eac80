//! [`EventStream`], the type every provider returns, and `produce`, which turns straight-line
//! async code that emits events into such a stream. The producing future is polled by the stream
//! itself (no spawned task), so dropping the stream cancels the HTTP request at once.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;

use super::error::LlmError;
use super::types::LlmEvent;

/// The events of one model call; an `Err` item is the last one.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<LlmEvent, LlmError>> + Send + 'static>>;

/// Events buffered between the producer and the consumer before the producer waits.
const EVENT_BUFFER: usize = 64;

/// Where a producer sends its events.
pub(crate) struct Emitter {
    tx: mpsc::Sender<Result<LlmEvent, LlmError>>,
}

impl Emitter {
    /// Sends one event. The receiver lives in the same stream that polls the producer, so it
    /// cannot be gone while the producer runs; the result is ignored for that reason.
    pub(crate) async fn emit(&self, event: LlmEvent) {
        let _ = self.tx.send(Ok(event)).await;
    }

    async fn fail(&self, error: LlmError) {
        let _ = self.tx.send(Err(error)).await;
    }
}

/// Runs `producer` as the body of a stream: its emitted events are the stream's items, and its
/// `Err` becomes the final item.
pub(crate) fn produce<F, Fut>(producer: F) -> EventStream
where
    F: FnOnce(Emitter) -> Fut,
    Fut: Future<Output = Result<(), LlmError>> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(EVENT_BUFFER);
    let emitter = Emitter { tx: tx.clone() };
    let body = producer(emitter);
    let driver = async move {
        if let Err(error) = body.await {
            Emitter { tx }.fail(error).await;
        }
    };
    Box::pin(Produced {
        driver: Some(Box::pin(driver)),
        rx,
    })
}

struct Produced {
    driver: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    rx: mpsc::Receiver<Result<LlmEvent, LlmError>>,
}

impl Stream for Produced {
    type Item = Result<LlmEvent, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(driver) = self.driver.as_mut()
            && driver.as_mut().poll(cx).is_ready()
        {
            // Dropping the finished driver drops its senders, so `rx` ends after the last item.
            self.driver = None;
        }
        self.rx.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[tokio::test]
    async fn items_then_error_then_end() {
        let stream = produce(|out| async move {
            for i in 0..100 {
                out.emit(LlmEvent::TextDelta(i.to_string())).await;
            }
            Err(LlmError::Protocol {
                provider: "test",
                message: "boom".into(),
            })
        });
        let items: Vec<_> = stream.collect().await;
        assert_eq!(items.len(), 101);
        assert!(matches!(items[99], Ok(LlmEvent::TextDelta(ref t)) if t == "99"));
        assert!(items[100].is_err());
    }
}
