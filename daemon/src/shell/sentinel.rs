//! The sentinel protocol between the daemon and a persistent bash.
//!
//! After each command the shell prints `<marker><exit code>;<cwd><marker>\n` on its output pipe,
//! where the marker is random per shell. [`SentinelParser`] splits the byte stream into the
//! command's output and these completion records, across arbitrary chunk boundaries. The marker
//! never appears in the script text in one piece, so a command cannot print it by accident.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// Longest `<exit code>;<cwd>` body accepted; anything longer is not a sentinel.
const MAX_SENTINEL_BODY_BYTES: usize = 64 * 1024;

/// A fresh random marker (not secret, only unlikely to be printed by a command).
pub fn random_marker() -> String {
    format!(
        "__SYNAPSE_DONE_{:016x}{:016x}__",
        random_u64(),
        random_u64()
    )
}

/// A random 64-bit value from the standard library's randomly seeded hasher.
pub fn random_u64() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// The shell code that prints the sentinel for the status in `$?` (to fd 9, the daemon's pipe).
pub fn sentinel_command(marker: &str) -> String {
    // Split the marker so the script text never contains it in one piece.
    let (a, b) = marker.split_at(marker.len() / 2);
    format!("printf '%s%d;%s%s\\n' '{a}''{b}' \"$?\" \"$PWD\" '{a}''{b}' >&9\n")
}

/// One command finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub exit_code: i32,
    pub cwd: PathBuf,
}

/// What the parser found in a chunk, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    Output(&'a [u8]),
    Done(Completion),
}

pub struct SentinelParser {
    marker: Vec<u8>,
    pending: Vec<u8>,
    in_sentinel: bool,
    skip_newline: bool,
}

impl SentinelParser {
    pub fn new(marker: &str) -> Self {
        Self {
            marker: marker.as_bytes().to_vec(),
            pending: Vec::new(),
            in_sentinel: false,
            skip_newline: false,
        }
    }

    /// Feeds one chunk; calls `emit` for each output run and each completion.
    pub fn feed(&mut self, chunk: &[u8], mut emit: impl FnMut(StreamEvent<'_>)) {
        self.pending.extend_from_slice(chunk);
        loop {
            if self.skip_newline {
                match self.pending.first() {
                    None => return,
                    Some(b'\n') => {
                        self.pending.remove(0);
                        self.skip_newline = false;
                    }
                    Some(_) => self.skip_newline = false,
                }
            }
            if self.in_sentinel {
                match find(&self.pending, &self.marker) {
                    Some(end) => {
                        let completion = parse_body(&self.pending[..end]);
                        self.pending.drain(..end + self.marker.len());
                        self.in_sentinel = false;
                        self.skip_newline = true;
                        match completion {
                            Some(c) => emit(StreamEvent::Done(c)),
                            None => continue,
                        }
                    }
                    None if self.pending.len() > MAX_SENTINEL_BODY_BYTES => {
                        // Not ours after all: give the bytes back as output.
                        self.in_sentinel = false;
                        emit(StreamEvent::Output(&self.marker));
                    }
                    None => return,
                }
            } else {
                match find(&self.pending, &self.marker) {
                    Some(start) => {
                        if start > 0 {
                            emit(StreamEvent::Output(&self.pending[..start]));
                        }
                        self.pending.drain(..start + self.marker.len());
                        self.in_sentinel = true;
                    }
                    None => {
                        // Keep back only an end that may be the start of a marker, so output
                        // reaches the capture (and the live tail) as soon as it is printed.
                        let keep = marker_prefix_at_end(&self.pending, &self.marker);
                        let flush = self.pending.len() - keep;
                        if flush > 0 {
                            emit(StreamEvent::Output(&self.pending[..flush]));
                            self.pending.drain(..flush);
                        }
                        return;
                    }
                }
            }
        }
    }

    /// Bytes held back at the end of the stream (a partial marker that never completed).
    pub fn finish(&mut self) -> Vec<u8> {
        let mut rest = Vec::new();
        if self.in_sentinel {
            rest.extend_from_slice(&self.marker);
        }
        rest.append(&mut self.pending);
        rest
    }
}

/// The length of the longest end of `bytes` that is a proper prefix of `marker`.
fn marker_prefix_at_end(bytes: &[u8], marker: &[u8]) -> usize {
    (1..marker.len().min(bytes.len() + 1))
        .rev()
        .find(|&k| bytes.ends_with(&marker[..k]))
        .unwrap_or(0)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse_body(body: &[u8]) -> Option<Completion> {
    let semi = body.iter().position(|&b| b == b';')?;
    let exit_code = std::str::from_utf8(&body[..semi]).ok()?.parse().ok()?;
    let cwd = PathBuf::from(OsString::from_vec(body[semi + 1..].to_vec()));
    Some(Completion { exit_code, cwd })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(marker: &str, stream: &[u8], chunk: usize) -> (Vec<Vec<u8>>, Vec<Completion>) {
        let mut p = SentinelParser::new(marker);
        let mut outputs = vec![Vec::new()];
        let mut done = Vec::new();
        for piece in stream.chunks(chunk) {
            p.feed(piece, |ev| match ev {
                StreamEvent::Output(b) => outputs.last_mut().unwrap().extend_from_slice(b),
                StreamEvent::Done(c) => {
                    done.push(c);
                    outputs.push(Vec::new());
                }
            });
        }
        outputs.last_mut().unwrap().extend(p.finish());
        (outputs, done)
    }

    #[test]
    fn splits_output_and_completions_at_any_chunk_size() {
        let m = "__M_abc__";
        let stream =
            b"hello\n__M_abc__0;/tmp__M_abc__\nno newline__M_abc__127;/a b;c__M_abc__\nrest";
        for chunk in 1..stream.len() {
            let (outputs, done) = run(m, stream, chunk);
            assert_eq!(
                outputs,
                vec![
                    b"hello\n".to_vec(),
                    b"no newline".to_vec(),
                    b"rest".to_vec()
                ]
            );
            assert_eq!(
                done[0],
                Completion {
                    exit_code: 0,
                    cwd: "/tmp".into()
                }
            );
            assert_eq!(
                done[1],
                Completion {
                    exit_code: 127,
                    cwd: "/a b;c".into()
                }
            );
        }
    }

    #[test]
    fn marker_is_not_in_the_script_text() {
        let m = random_marker();
        assert!(!sentinel_command(&m).contains(&m));
        assert_ne!(m, random_marker());
    }
}
