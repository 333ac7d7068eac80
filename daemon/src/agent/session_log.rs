//! Session files: `$SYNAPSE_HOME/sessions/<id>.jsonl`. The first line is a header (id, cwd, model,
//! created); every later line is one record (`{"type": kind, "ts": …, "data": …}`) appended as it
//! happens, written whole in one `write` so a crash leaves at most one torn last line. Replay skips
//! lines that do not parse, with a warning naming file and line, and never rewrites the file.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Format version written in every header.
pub const SESSION_FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub kind: String,
    pub version: u32,
    pub id: String,
    pub cwd: String,
    pub model: String,
    /// RFC 3339 UTC.
    pub created: String,
}

impl SessionHeader {
    pub fn new(id: String, cwd: String, model: String) -> Self {
        Self {
            kind: "header".to_string(),
            version: SESSION_FORMAT_VERSION,
            id,
            cwd,
            model,
            created: now_rfc3339(),
        }
    }
}

/// One appended line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    #[serde(rename = "type")]
    pub kind: String,
    pub ts: String,
    pub data: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionLogError {
    #[error("cannot write session file {path}: {source}", path = .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot read session file {path}: {source}", path = .path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{path}:1: not a Synapse session file (bad header: {reason})", path = .path.display())]
    BadHeader { path: PathBuf, reason: String },
    #[error("no session {id} in {dir}", dir = .dir.display())]
    NotFound { id: String, dir: PathBuf },
}

/// An open session file, appended to as the conversation happens.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    file: File,
}

impl SessionLog {
    /// Creates `<dir>/<id>.jsonl` with its header line. Fails if it exists.
    pub fn create(dir: &Path, header: &SessionHeader) -> Result<Self, SessionLogError> {
        let path = session_path(dir, &header.id);
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| SessionLogError::Write {
                path: path.clone(),
                source,
            })?;
        let mut log = Self { path, file };
        log.write_line(&serde_json::to_value(header).unwrap_or(Value::Null))?;
        Ok(log)
    }

    /// Opens an existing session file for appending.
    pub fn open(path: &Path) -> Result<Self, SessionLogError> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| SessionLogError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record (`kind` e.g. "message") and hands it to the OS at once.
    pub fn append<T: Serialize>(&mut self, kind: &str, data: &T) -> Result<(), SessionLogError> {
        let data = serde_json::to_value(data).map_err(|e| SessionLogError::Write {
            path: self.path.clone(),
            source: io::Error::new(io::ErrorKind::InvalidData, e),
        })?;
        let record = Record {
            kind: kind.to_string(),
            ts: now_rfc3339(),
            data,
        };
        self.write_line(&serde_json::to_value(&record).unwrap_or(Value::Null))
    }

    /// Appends one line, or nothing: a write that fails part-way (disk full) is cut back to the
    /// previous end, so the file never holds half a line.
    fn write_line(&mut self, value: &Value) -> Result<(), SessionLogError> {
        let mut line = serde_json::to_vec(value).unwrap_or_default();
        line.push(b'\n');
        let before = self.file.metadata().map(|m| m.len()).ok();
        let result = self.file.write_all(&line).and_then(|()| self.file.flush());
        if result.is_err()
            && let Some(len) = before
        {
            let _ = self.file.set_len(len);
        }
        result.map_err(|source| SessionLogError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

/// A session file read back.
#[derive(Debug)]
pub struct Replay {
    pub header: SessionHeader,
    pub records: Vec<Record>,
    /// One line per skipped corrupt line: "path:line: skipped …".
    pub warnings: Vec<String>,
}

/// Reads a whole session file; corrupt lines are skipped and reported in `warnings`.
pub fn replay(path: &Path) -> Result<Replay, SessionLogError> {
    let file = File::open(path).map_err(|source| SessionLogError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = BufReader::new(file).lines();
    let first = lines
        .next()
        .transpose()
        .map_err(|source| SessionLogError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .unwrap_or_default();
    let header: SessionHeader =
        serde_json::from_str(&first).map_err(|e| SessionLogError::BadHeader {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    for (i, line) in lines.enumerate() {
        let line_no = i + 2;
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                warnings.push(format!(
                    "{}:{line_no}: skipped unreadable line: {e}",
                    path.display()
                ));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(&line) {
            Ok(r) => records.push(r),
            Err(e) => warnings.push(format!(
                "{}:{line_no}: skipped corrupt line: {e}",
                path.display()
            )),
        }
    }
    Ok(Replay {
        header,
        records,
        warnings,
    })
}

/// `<dir>/<id>.jsonl`.
pub fn session_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.jsonl"))
}

/// A new session id: UTC time plus random hex, sortable by creation (`20261122-120102-3fa9c1`).
pub fn new_session_id() -> String {
    format!(
        "{}-{:06x}",
        chrono::Utc::now().format("%Y%m%d-%H%M%S"),
        fastrand::u32(..0x0100_0000)
    )
}

/// True for strings that can be session ids (no path tricks).
pub fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_records_replay_and_a_torn_line_is_skipped_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let header = SessionHeader::new(new_session_id(), "/w".into(), "m".into());
        let mut log = SessionLog::create(dir.path(), &header).unwrap();
        log.append(
            "message",
            &serde_json::json!({"role": "user", "content": "hi"}),
        )
        .unwrap();
        log.append(
            "message",
            &serde_json::json!({"role": "assistant", "content": "yo"}),
        )
        .unwrap();
        let path = log.path().to_path_buf();
        drop(log);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"type\":\"message\",\"ts\":\"x\",\"da")
            .unwrap();
        let r = replay(&path).unwrap();
        assert_eq!(r.header, header);
        assert_eq!(r.records.len(), 2);
        assert_eq!(r.records[1].data["content"], "yo");
        assert_eq!(r.warnings.len(), 1);
        assert!(
            r.warnings[0].contains(":4: skipped corrupt line"),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn ids_are_safe_file_names() {
        let id = new_session_id();
        assert!(is_valid_session_id(&id), "{id}");
        assert!(!is_valid_session_id("../x"));
        assert!(!is_valid_session_id(""));
    }
}
