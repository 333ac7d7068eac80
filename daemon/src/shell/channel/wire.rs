//! The byte format between `synapsed __agent` (run by an agent function in a session shell) and
//! the daemon's agent channel. One request per connection:
//! request  = field(token) field(cwd) field(name) u32(argc) field(arg)* u8(has_stdin) [field(stdin)]
//! response = i32(exit code) u8(stream: 1 stdout, 2 stderr) bytes… until the daemon closes.
//! A field is a big-endian u32 length and that many bytes; everything is raw bytes, so file
//! names that are not UTF-8 pass unchanged.

use std::io::{self, Read, Write};

/// Longest token, cwd, name or argument accepted.
pub const MAX_FIELD_BYTES: usize = 1 << 20;
/// Longest heredoc / piped input accepted for a command.
pub const MAX_STDIN_BYTES: usize = 64 << 20;
/// Most arguments accepted.
pub const MAX_ARGS: usize = 4096;

/// One agent command call from a session shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub token: Vec<u8>,
    pub cwd: Vec<u8>,
    pub name: Vec<u8>,
    pub args: Vec<Vec<u8>>,
    pub stdin: Option<Vec<u8>>,
}

fn put(out: &mut Vec<u8>, field: &[u8]) {
    out.extend_from_slice(&(field.len() as u32).to_be_bytes());
    out.extend_from_slice(field);
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, &self.token);
        put(&mut out, &self.cwd);
        put(&mut out, &self.name);
        out.extend_from_slice(&(self.args.len() as u32).to_be_bytes());
        for a in &self.args {
            put(&mut out, a);
        }
        match &self.stdin {
            Some(s) => {
                out.push(1);
                put(&mut out, s);
            }
            None => out.push(0),
        }
        out
    }
}

/// Reads a request from an async stream, refusing anything over the limits.
pub async fn read_request<R: tokio::io::AsyncRead + Unpin>(r: &mut R) -> io::Result<Request> {
    use tokio::io::AsyncReadExt;
    async fn field<R: tokio::io::AsyncRead + Unpin>(r: &mut R, max: usize) -> io::Result<Vec<u8>> {
        let len = r.read_u32().await? as usize;
        if len > max {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("field of {len} bytes is over the limit of {max}"),
            ));
        }
        let mut buf = vec![0u8; len];
        r.read_exact(&mut buf).await?;
        Ok(buf)
    }
    let token = field(r, MAX_FIELD_BYTES).await?;
    let cwd = field(r, MAX_FIELD_BYTES).await?;
    let name = field(r, MAX_FIELD_BYTES).await?;
    let argc = r.read_u32().await? as usize;
    if argc > MAX_ARGS {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{argc} arguments is over the limit of {MAX_ARGS}"),
        ));
    }
    let mut args = Vec::with_capacity(argc);
    for _ in 0..argc {
        args.push(field(r, MAX_FIELD_BYTES).await?);
    }
    let stdin = match r.read_u8().await? {
        0 => None,
        _ => Some(field(r, MAX_STDIN_BYTES).await?),
    };
    Ok(Request {
        token,
        cwd,
        name,
        args,
        stdin,
    })
}

/// Reads the response on the helper's side: the exit code, the stream, and copies the body to
/// `stdout` or `stderr`.
pub fn copy_response(
    r: &mut impl Read,
    stdout: &mut impl Write,
    stderr: &mut impl Write,
) -> io::Result<i32> {
    let mut head = [0u8; 5];
    r.read_exact(&mut head)?;
    let code = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    if head[4] == 2 {
        io::copy(r, stderr)?;
        stderr.flush()?;
    } else {
        io::copy(r, stdout)?;
        stdout.flush()?;
    }
    Ok(code)
}

/// The response header for `exit_code` (the body follows it).
pub fn response_head(exit_code: i32) -> [u8; 5] {
    let c = exit_code.to_be_bytes();
    [c[0], c[1], c[2], c[3], if exit_code == 0 { 1 } else { 2 }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_round_trip_with_any_bytes() {
        let req = Request {
            token: b"t0k".to_vec(),
            cwd: b"/tmp/\xff".to_vec(),
            name: b"read".to_vec(),
            args: vec![b"a\xfe.txt".to_vec(), Vec::new()],
            stdin: Some(b"line\n\0".to_vec()),
        };
        let bytes = req.encode();
        let back = read_request(&mut bytes.as_slice()).await.unwrap();
        assert_eq!(back, req);
    }

    #[test]
    fn failures_go_to_stderr_with_their_code() {
        let mut resp = response_head(3).to_vec();
        resp.extend_from_slice(b"no such file");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = copy_response(&mut resp.as_slice(), &mut out, &mut err).unwrap();
        assert_eq!(
            (code, out.as_slice(), err.as_slice()),
            (3, &b""[..], &b"no such file"[..])
        );
    }
}
