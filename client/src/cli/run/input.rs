//! Where `synapse run` takes its user messages from: the prompt argument (or stdin with `-`), and
//! with `--input-format stream-json` Claude Code's JSON lines on stdin, each
//! `{"type":"user","message":{"role":"user","content":"…" | [{"type":"text","text":"…"}]}}` one
//! turn of the same session, read as the previous turn ends (messages that arrived while it ran
//! are [`Inputs::ready`]: they join its batch). Blank lines are skipped; a line that is not such a
//! message ends the run with an error naming its line number.

use std::io::BufRead;

use anyhow::bail;
use serde_json::Value;
use tokio::sync::mpsc;

/// A user message line, for error messages.
pub const EXAMPLE_LINE: &str = r#"{"type":"user","message":{"role":"user","content":"…"}}"#;

/// One line of stdin read as a user message: its text, or why it is not one.
type Line = Result<String, String>;

/// The messages still to send.
pub struct Inputs {
    first: Option<String>,
    stream: Option<mpsc::Receiver<Line>>,
    /// A bad line [`Inputs::ready`] took off the stream, for [`Inputs::next`] to report.
    held: Option<String>,
}

impl Inputs {
    /// Only `prompt` (text input).
    pub fn prompt(prompt: String) -> Self {
        Self {
            first: Some(prompt),
            stream: None,
            held: None,
        }
    }

    /// `prompt` if given, then every message on stdin (read on a thread of its own).
    pub fn stream_json(prompt: Option<String>) -> Self {
        let (tx, rx) = mpsc::channel(16);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            for (n, line) in stdin.lock().lines().enumerate() {
                let parsed = match line {
                    Ok(line) if line.trim().is_empty() => continue,
                    Ok(line) => user_text(&line).map_err(|e| format!("stdin line {}: {e}", n + 1)),
                    Err(e) => Err(format!("cannot read stdin: {e}")),
                };
                let stop = parsed.is_err();
                if tx.blocking_send(parsed).is_err() || stop {
                    return;
                }
            }
        });
        Self {
            first: prompt,
            stream: Some(rx),
            held: None,
        }
    }

    /// A message that is already waiting (it arrived while the last turn ran), without waiting
    /// for one; a bad line is kept for [`Inputs::next`].
    pub fn ready(&mut self) -> Option<String> {
        if self.held.is_some() {
            return None;
        }
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        match self.stream.as_mut()?.try_recv() {
            Ok(Ok(text)) => Some(text),
            Ok(Err(e)) => {
                self.held = Some(e);
                None
            }
            Err(_) => None,
        }
    }

    /// The next message, `None` when there are no more.
    pub async fn next(&mut self) -> anyhow::Result<Option<String>> {
        if let Some(e) = self.held.take() {
            bail!("{e}");
        }
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        let Some(stream) = self.stream.as_mut() else {
            return Ok(None);
        };
        match stream.recv().await {
            Some(Ok(text)) => Ok(Some(text)),
            Some(Err(e)) => bail!("{e}"),
            None => Ok(None),
        }
    }
}

/// The text of one stream-json user message.
pub fn user_text(line: &str) -> Result<String, String> {
    const EXPECTED: &str = r#"expected {"type":"user","message":{"role":"user","content":"…"}}"#;
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}); {EXPECTED}"))?;
    if v["type"] != "user" {
        return Err(format!("type {} is not \"user\"; {EXPECTED}", v["type"]));
    }
    let content = &v["message"]["content"];
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let mut parts = Vec::new();
            for block in blocks {
                match (block["type"].as_str(), block["text"].as_str()) {
                    (Some("text"), Some(text)) => parts.push(text),
                    (kind, _) => {
                        return Err(format!(
                            "content block of type {} is not supported (only text blocks)",
                            kind.unwrap_or("?")
                        ));
                    }
                }
            }
            parts.join("\n")
        }
        _ => return Err(format!("message.content is missing; {EXPECTED}")),
    };
    if text.trim().is_empty() {
        return Err("the message's text is empty".to_string());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn string_and_block_contents_are_read() {
        let line = r#"{"type":"user","message":{"role":"user","content":"hello"}}"#;
        assert_eq!(user_text(line).unwrap(), "hello");
        let line = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}"#;
        assert_eq!(user_text(line).unwrap(), "a\nb");
    }

    #[test]
    fn anything_else_is_an_error_that_says_what_is_expected() {
        for bad in [
            "hello",
            r#"{"type":"assistant","message":{"content":"x"}}"#,
            r#"{"type":"user","message":{"content":[{"type":"image","source":{}}]}}"#,
            r#"{"type":"user","message":{"content":"  "}}"#,
        ] {
            assert!(user_text(bad).is_err(), "{bad}");
        }
        assert!(user_text("[").unwrap_err().contains(r#""type":"user""#));
    }
}
