//! What the fake server saw: every request is recorded as a [`RecordedRequest`] (headers and JSON
//! body) with helpers that read the conversation in either API's format, for assertions and for
//! callback scripts that answer based on the conversation.

use serde_json::Value;

/// Which wire format a request used, from its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// `POST /v1/messages`
    Anthropic,
    /// `POST …/chat/completions`
    OpenAi,
    Unknown,
}

impl Api {
    pub(crate) fn from_path(path: &str) -> Self {
        if path.ends_with("/v1/messages") {
            Api::Anthropic
        } else if path.ends_with("/chat/completions") {
            Api::OpenAi
        } else {
            Api::Unknown
        }
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// 0 for the first request the server received.
    pub index: usize,
    pub method: String,
    pub path: String,
    pub api: Api,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Value::Null` when it was not JSON).
    pub body: Value,
    /// The body's size in bytes.
    pub body_len: usize,
}

impl RecordedRequest {
    /// The first value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `messages` array.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The `tools` array.
    pub fn tools(&self) -> &[Value] {
        self.body["tools"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The tool names offered, in either format.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools()
            .iter()
            .filter_map(|t| {
                t["name"]
                    .as_str()
                    .or_else(|| t["function"]["name"].as_str())
            })
            .map(str::to_string)
            .collect()
    }

    /// The system prompt text (Anthropic `system`, or OpenAI's leading system message).
    pub fn system_text(&self) -> Option<String> {
        match self.api {
            Api::OpenAi => self
                .messages()
                .iter()
                .find(|m| m["role"] == "system")
                .map(|m| content_text(&m["content"])),
            _ => match &self.body["system"] {
                Value::Null => None,
                v => Some(content_text(v)),
            },
        }
    }

    /// The text of the last user message that carries text (not only tool results).
    pub fn last_user_text(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .filter(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"]))
            .find(|t| !t.is_empty())
    }

    /// The tool results sent with this request for the previous turn's calls, in order, as
    /// `(tool call id, content)`.
    pub fn tool_results(&self) -> Vec<(String, String)> {
        let messages = self.messages();
        match self.api {
            // Images of tool results follow the tool messages in one user message.
            Api::OpenAi => messages
                .iter()
                .rev()
                .skip_while(|m| m["role"] == "user" && !self.images_in(m).is_empty())
                .take_while(|m| m["role"] == "tool")
                .map(|m| (str_of(&m["tool_call_id"]), content_text(&m["content"])))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect(),
            _ => messages
                .last()
                .filter(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_array())
                .map(|blocks| {
                    blocks
                        .iter()
                        .filter(|b| b["type"] == "tool_result")
                        .map(|b| (str_of(&b["tool_use_id"]), content_text(&b["content"])))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// The images sent with the last message (tool results' images): `(media type, base64)`.
    /// Anthropic: image blocks inside the tool_result blocks; OpenAI: `image_url` data URLs in
    /// the user message after the tool messages.
    pub fn last_images(&self) -> Vec<(String, String)> {
        self.messages()
            .last()
            .map(|m| self.images_in(m))
            .unwrap_or_default()
    }

    fn images_in(&self, message: &Value) -> Vec<(String, String)> {
        let Some(blocks) = message["content"].as_array() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for b in blocks {
            if b["type"] == "image_url" {
                let url = str_of(&b["image_url"]["url"]);
                if let Some((head, data)) = url
                    .strip_prefix("data:")
                    .and_then(|u| u.split_once(";base64,"))
                {
                    out.push((head.to_string(), data.to_string()));
                }
            }
            if b["type"] == "tool_result"
                && let Some(parts) = b["content"].as_array()
            {
                for p in parts.iter().filter(|p| p["type"] == "image") {
                    out.push((
                        str_of(&p["source"]["media_type"]),
                        str_of(&p["source"]["data"]),
                    ));
                }
            }
        }
        out
    }

    /// The content of the last tool result in this request, if any.
    pub fn last_tool_result(&self) -> Option<String> {
        self.tool_results().pop().map(|(_, content)| content)
    }

    /// The commands of every `Bash` call in the conversation so far, oldest first.
    pub fn commands_so_far(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in self.messages().iter().filter(|m| m["role"] == "assistant") {
            if let Some(blocks) = m["content"].as_array() {
                for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                    out.push(str_of(&b["input"]["command"]));
                }
            }
            if let Some(calls) = m["tool_calls"].as_array() {
                for c in calls {
                    let args = c["function"]["arguments"].as_str().unwrap_or_default();
                    let input: Value = serde_json::from_str(args).unwrap_or(Value::Null);
                    out.push(str_of(&input["command"]));
                }
            }
        }
        out
    }
}

/// Text of a content value: a string, or an array of blocks whose `text` fields are joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}
