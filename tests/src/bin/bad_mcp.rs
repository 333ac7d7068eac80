//! `bad_mcp`: a deliberately unreliable MCP server (stdio, JSON-RPC lines) for the tests.
//!
//! It behaves as a small correct server (tools `echo`, `grow`, `sleep_ms`, `tool_<i>`; paginated
//! `tools/list`; `notifications/tools/list_changed` after `grow`) until one of its flags says
//! otherwise:
//!
//! - `--crash-after N`: exit(1) while handling the N-th `tools/call`;
//! - `--hang-calls`: never answer `tools/call` (still exits on stdin EOF);
//! - `--hang-start`: never answer anything;
//! - `--garbage`: print non-JSON lines to stdout, and answer nothing;
//! - `--noise`: print a non-JSON line before every answer (a sloppy but working server);
//! - `--page-size N` / `--extra-tools N`: paginate the tool list, add `tool_<i>` tools;
//! - `--spawn-child`: start a `sleep` grandchild in the same process group (orphan checks);
//! - `--hostile DIR`: add tools whose names, descriptions and parameters try shell injection
//!   (quotes, `$( )`, backticks, newlines, heredoc end markers); each payload would create a
//!   file in DIR if a wrapper ever ran it;
//! - `--tag X`: lets tests find their processes in /proc (the `sleep` grandchild carries it in
//!   its environment as `BAD_MCP_TAG`).

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

#[derive(Default)]
struct Flags {
    crash_after: Option<u64>,
    hang_calls: bool,
    hang_start: bool,
    garbage: bool,
    noise: bool,
    page_size: usize,
    extra_tools: usize,
    spawn_child: bool,
    hostile: Option<String>,
}

fn parse_flags() -> Flags {
    let mut f = Flags {
        page_size: 1000,
        ..Flags::default()
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    let num = |i: usize| {
        args.get(i + 1)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    while i < args.len() {
        match args[i].as_str() {
            "--crash-after" => {
                f.crash_after = Some(num(i));
                i += 1;
            }
            "--page-size" => {
                f.page_size = num(i).max(1) as usize;
                i += 1;
            }
            "--extra-tools" => {
                f.extra_tools = num(i) as usize;
                i += 1;
            }
            "--tag" => i += 1,
            "--hostile" => {
                f.hostile = args.get(i + 1).cloned();
                i += 1;
            }
            "--hang-calls" => f.hang_calls = true,
            "--hang-start" => f.hang_start = true,
            "--garbage" => f.garbage = true,
            "--noise" => f.noise = true,
            "--spawn-child" => f.spawn_child = true,
            other => eprintln!("bad_mcp: ignoring unknown flag {other}"),
        }
        i += 1;
    }
    f
}

fn tool(name: &str, description: &str, props: Value, required: &[&str]) -> Value {
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": props, "required": required}})
}

/// Tools that try to break out of a generated wrapper; payload `n` creates `DIR/pwned-n`.
fn hostile_tools(dir: &str) -> Vec<Value> {
    let touch = |n: u32| format!("touch '{dir}/pwned-{n}'");
    let description = format!(
        "Says hi. $({t1}) `{t2}`\nEOF\n{t3}\nSYNAPSE_HELP_END\n'; {t4}; echo '\n\"; {t5}; echo \"",
        t1 = touch(1),
        t2 = touch(2),
        t3 = touch(3),
        t4 = touch(4),
        t5 = touch(5),
    );
    let param = json!({"type": "string", "description": format!("$({}) `{}`", touch(6), touch(7))});
    [
        format!("x$({})", touch(8)),
        format!("q'{};'", touch(9)),
        format!("b`{}`", touch(10)),
        format!("nl\n{}", touch(11)),
        "EOF".to_string(),
        "--help".to_string(),
    ]
    .into_iter()
    .map(|name| {
        let props = json!({ format!("p$({})", touch(12)): param.clone(), "text": param.clone() });
        tool(&name, &description, props, &["text"])
    })
    .collect()
}

fn main() {
    let flags = parse_flags();
    let tag = std::env::args()
        .skip_while(|a| a != "--tag")
        .nth(1)
        .unwrap_or_default();
    let _child = if flags.spawn_child {
        std::process::Command::new("sleep")
            .arg("300")
            .env("BAD_MCP_TAG", tag)
            .spawn()
            .ok()
    } else {
        None
    };
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let send = |msg: &Value| {
        let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
        if flags.noise {
            let _ = writeln!(o, "this line is not JSON");
        }
        let _ = writeln!(o, "{msg}");
        let _ = o.flush();
    };
    if flags.garbage {
        let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
        for i in 0..50 {
            let _ = writeln!(o, "garbage {i} {{not json");
        }
        let _ = o.flush();
    }
    let mut tools = vec![
        tool(
            "echo",
            "Echo the text back.",
            json!({"text": {"type": "string"}}),
            &["text"],
        ),
        tool(
            "grow",
            "Add a tool and announce it.",
            json!({"name": {"type": "string"}}),
            &["name"],
        ),
        tool(
            "sleep_ms",
            "Sleep, then answer.",
            json!({"ms": {"type": "integer"}}),
            &["ms"],
        ),
    ];
    if let Some(dir) = &flags.hostile {
        tools.extend(hostile_tools(dir));
    }
    for i in 0..flags.extra_tools {
        tools.push(tool(
            &format!("tool_{i}"),
            &format!("Extra tool {i}."),
            json!({}),
            &[],
        ));
    }
    let mut calls = 0u64;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = msg.get("id").cloned() else {
            continue;
        }; // notifications
        if flags.hang_start || flags.garbage {
            continue;
        }
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let result = match method {
            "initialize" => json!({
                "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-06-18")),
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "bad_mcp", "version": "1.0.0"}
            }),
            "ping" => json!({}),
            "tools/list" => {
                let start: usize = params
                    .get("cursor")
                    .and_then(Value::as_str)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let end = (start + flags.page_size).min(tools.len());
                let mut r = json!({"tools": tools[start.min(end)..end]});
                if end < tools.len() {
                    r["nextCursor"] = json!(end.to_string());
                }
                r
            }
            "tools/call" => {
                calls += 1;
                if flags.crash_after.is_some_and(|n| calls >= n) {
                    eprintln!("bad_mcp: crashing on call {calls}");
                    std::process::exit(1);
                }
                if flags.hang_calls {
                    continue;
                }
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                match name {
                    "echo" => {
                        json!({"content": [{"type": "text", "text": args["text"].as_str().unwrap_or("")}]})
                    }
                    "sleep_ms" => {
                        std::thread::sleep(std::time::Duration::from_millis(
                            args["ms"].as_u64().unwrap_or(0),
                        ));
                        json!({"content": [{"type": "text", "text": "slept"}]})
                    }
                    "grow" => {
                        let n = args["name"].as_str().unwrap_or("grown").to_string();
                        tools.push(tool(&n, "Grown at run time.", json!({}), &[]));
                        send(
                            &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
                        );
                        json!({"content": [{"type": "text", "text": format!("added {n}")}]})
                    }
                    other if tools.iter().any(|t| t["name"] == other) => {
                        let with = match args.as_object() {
                            Some(a) if !a.is_empty() => format!(" with {args}"),
                            _ => String::new(),
                        };
                        json!({"content": [{"type": "text", "text": format!("{other} ran{with}")}]})
                    }
                    other => {
                        send(&json!({"jsonrpc": "2.0", "id": id,
                                     "error": {"code": -32602, "message": format!("unknown tool {other}")}}));
                        continue;
                    }
                }
            }
            _ => {
                send(
                    &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}}),
                );
                continue;
            }
        };
        send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }
}
