//! The editor a session's `read`, `write` and `edit` go through ([`EditorLink`]): a front end
//! that opened with `editor_files` (an ACP editor that offered `fs`) gets the session's file
//! requests on its own stream — never the other front ends — and answers each with a reply.
//! [`EditorSlot`] is where the session keeps the editor attached now; the link leaves it when
//! its front end does ([`EditorAttachment`]'s drop), and every request still waiting is then
//! told the editor is gone, as is one the editor does not answer in time: the command uses the
//! disk instead. What the editor answers is content only; the gate decided before it was asked.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use synapse_command::editor_files::{EditorError, EditorFiles, EditorFilesHandle};
use synapse_session::{FileOp, FileReply, FileRequest};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// File requests queued for the editor's stream.
const REQUEST_QUEUE: usize = 16;

/// One editor front end of a session, as the session's file commands reach it.
pub struct EditorLink {
    requests: mpsc::Sender<FileRequest>,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<String, String>>>>,
    next_id: AtomicU64,
    answer_timeout: Duration,
    /// Cancelled when the front end left.
    gone: CancellationToken,
}

impl EditorLink {
    /// A link whose requests come out of the receiver (for the front end's stream); each
    /// waits at most `answer_timeout` for its reply.
    pub fn new(answer_timeout: Duration) -> (Arc<Self>, mpsc::Receiver<FileRequest>) {
        let (requests, rx) = mpsc::channel(REQUEST_QUEUE);
        let link = Arc::new(Self {
            requests,
            pending: Mutex::default(),
            next_id: AtomicU64::new(1),
            answer_timeout,
            gone: CancellationToken::new(),
        });
        (link, rx)
    }

    /// The editor's reply; false when no request of that id is waiting (answered, timed out).
    pub fn reply(&self, reply: FileReply) -> bool {
        match self.pending.lock().remove(&reply.id) {
            Some(waiting) => waiting.send(reply.result).is_ok(),
            None => false,
        }
    }

    /// The front end left: every waiting request, and every later one, is told so.
    pub fn close(&self) {
        self.gone.cancel();
        self.pending.lock().clear();
    }

    /// Cancelled when the front end left.
    pub fn gone(&self) -> &CancellationToken {
        &self.gone
    }

    async fn ask(&self, op: FileOp, path: &Path, content: &str) -> Result<String, EditorError> {
        let left = || EditorError::Gone("the editor left the session".into());
        if self.gone.is_cancelled() {
            return Err(left());
        }
        let id = format!("file-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id.clone(), tx);
        let request = FileRequest {
            id: id.clone(),
            op,
            path: path.display().to_string(),
            content: content.to_string(),
        };
        let timed_out = || {
            EditorError::Gone(format!(
                "no answer in {} s",
                self.answer_timeout.as_secs_f64().round()
            ))
        };
        let asked = async {
            self.requests.send(request).await.map_err(|_| left())?;
            match rx.await {
                Ok(Ok(text)) => Ok(text),
                Ok(Err(message)) => Err(EditorError::Refused(message)),
                Err(_) => Err(left()),
            }
        };
        let answer = tokio::select! {
            answer = tokio::time::timeout(self.answer_timeout, asked) => {
                answer.unwrap_or_else(|_| Err(timed_out()))
            }
            _ = self.gone.cancelled() => Err(left()),
        };
        self.pending.lock().remove(&id);
        answer
    }
}

impl EditorFiles for EditorLink {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, EditorError>> {
        Box::pin(self.ask(FileOp::Read, path, ""))
    }

    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), EditorError>> {
        Box::pin(async move { self.ask(FileOp::Write, path, content).await.map(|_| ()) })
    }
}

/// Where a session keeps the editor attached now (the one that attached last). Cheap to clone.
#[derive(Clone, Default)]
pub struct EditorSlot(Arc<Mutex<Option<(u64, EditorFilesHandle)>>>);

/// Numbers the attachments, so a leaving editor clears only its own.
static ATTACHMENTS: AtomicU64 = AtomicU64::new(1);

impl EditorSlot {
    /// The editor of the session's calls from now on, serving files inside `root` (the
    /// session's folder), until the attachment is dropped.
    pub fn attach(&self, link: Arc<EditorLink>, root: &Path) -> EditorAttachment {
        let n = ATTACHMENTS.fetch_add(1, Ordering::Relaxed);
        *self.0.lock() = Some((n, EditorFilesHandle::new(link.clone(), root)));
        EditorAttachment {
            slot: self.clone(),
            n,
            link,
        }
    }

    /// The editor attached now.
    pub fn current(&self) -> Option<EditorFilesHandle> {
        self.0.lock().as_ref().map(|(_, handle)| handle.clone())
    }
}

/// An editor's place in its session's [`EditorSlot`]; dropped when its front end leaves.
pub struct EditorAttachment {
    slot: EditorSlot,
    n: u64,
    link: Arc<EditorLink>,
}

impl Drop for EditorAttachment {
    fn drop(&mut self) {
        self.link.close();
        let mut slot = self.slot.0.lock();
        if slot.as_ref().is_some_and(|(n, _)| *n == self.n) {
            *slot = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_goes_out_and_its_reply_comes_back() {
        let (link, mut requests) = EditorLink::new(Duration::from_secs(5));
        let answering = link.clone();
        let editor = tokio::spawn(async move {
            let asked = requests.recv().await.unwrap();
            assert_eq!((asked.op, asked.path.as_str()), (FileOp::Read, "/p/a.txt"));
            answering.reply(FileReply {
                id: asked.id,
                result: Ok("buffer".into()),
            })
        });
        assert_eq!(link.read(Path::new("/p/a.txt")).await, Ok("buffer".into()));
        assert!(editor.await.unwrap());
    }

    #[tokio::test]
    async fn the_editors_error_is_the_answer_and_silence_or_leaving_is_gone() {
        let (link, mut requests) = EditorLink::new(Duration::from_millis(50));
        let answering = link.clone();
        tokio::spawn(async move {
            let asked = requests.recv().await.unwrap();
            answering.reply(FileReply {
                id: asked.id,
                result: Err("read-only buffer".into()),
            });
            // The second request is never answered.
            let _second = requests.recv().await;
            std::future::pending::<()>().await;
        });
        assert_eq!(
            link.write(Path::new("/p/a"), "x").await,
            Err(EditorError::Refused("read-only buffer".into()))
        );
        assert!(matches!(
            link.read(Path::new("/p/a")).await,
            Err(EditorError::Gone(why)) if why.contains("no answer")
        ));
        let slot = EditorSlot::default();
        let attached = slot.attach(link.clone(), Path::new("/p"));
        assert!(slot.current().is_some());
        drop(attached);
        assert!(slot.current().is_none(), "a leaving editor leaves the slot");
        assert!(matches!(
            link.read(Path::new("/p/a")).await,
            Err(EditorError::Gone(why)) if why.contains("left")
        ));
    }
}
